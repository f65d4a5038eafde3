package io.skiffmq.core.message;

import static io.skiffmq.core.TestMessages.amqp10;
import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBufUtil;
import io.skiffmq.codec.Bytes;
import io.skiffmq.codec.amqp091.BasicProperties;
import io.skiffmq.codec.testing.LeakDetection;
import java.time.Instant;
import java.util.Arrays;
import java.util.Date;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.function.Consumer;
import org.apache.qpid.proton.amqp.Binary;
import org.apache.qpid.proton.amqp.Symbol;
import org.apache.qpid.proton.amqp.UnsignedByte;
import org.apache.qpid.proton.amqp.UnsignedInteger;
import org.apache.qpid.proton.amqp.UnsignedLong;
import org.apache.qpid.proton.amqp.UnsignedShort;
import org.apache.qpid.proton.amqp.messaging.AmqpSequence;
import org.apache.qpid.proton.amqp.messaging.AmqpValue;
import org.apache.qpid.proton.amqp.messaging.ApplicationProperties;
import org.apache.qpid.proton.amqp.messaging.Data;
import org.apache.qpid.proton.amqp.messaging.Header;
import org.apache.qpid.proton.amqp.messaging.MessageAnnotations;
import org.apache.qpid.proton.amqp.messaging.Properties;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** Each row of RabbitMQ 4's "AMQP 1.0 -> AMQP 0.9.1" table, one field at a time. */
@ExtendWith(LeakDetection.class)
class Amqp10ToAmqp091Test {
    private static final UUID ID = UUID.fromString("550e8400-e29b-41d4-a716-446655440000");
    private static final Data BODY = new Data(new Binary("body".getBytes()));

    private static void convert(Consumer<Amqp091Message> check, Object... sections) {
        Amqp10Message m = amqp10(sections);
        try {
            Amqp091Message converted = m.toAmqp091();
            check.accept(converted);
            // what is handed out decodes back to what it holds
            try {
                assertThat(BasicProperties.decode(converted.propertyBytes())).isEqualTo(converted.properties());
            } catch (Exception e) {
                throw new AssertionError(e);
            }
        } finally {
            m.release();
        }
    }

    private static void properties(Consumer<BasicProperties> check, Object... sections) {
        convert(c -> check.accept(c.properties()), sections);
    }

    private static Properties props(Consumer<Properties> set) {
        Properties p = new Properties();
        set.accept(p);
        return p;
    }

    @Test
    void headerFieldsBecomeDeliveryModePriorityAndExpiration() {
        Header h = new Header();
        h.setDurable(false);
        h.setPriority(UnsignedByte.valueOf((byte) 9));
        h.setTtl(UnsignedInteger.valueOf(1500));
        properties(p -> {
            assertThat(p.deliveryMode()).isEqualTo(1);
            assertThat(p.priority()).isEqualTo(9);
            assertThat(p.expiration()).isEqualTo("1500");
        }, h, BODY);
        properties(p -> assertThat(p.deliveryMode()).as("no header: durable, as RabbitMQ").isEqualTo(2), BODY);
    }

    @Test
    void messageIdOfEachType() {
        properties(p -> assertThat(p.messageId()).isEqualTo("m-1"), props(p -> p.setMessageId("m-1")), BODY);
        properties(p -> {
            assertThat(p.messageId()).isNull();
            assertThat(p.headers()).containsEntry("x-message-id", "m".repeat(300));
        }, props(p -> p.setMessageId("m".repeat(300))), BODY);
        properties(p -> assertThat(p.messageId()).isEqualTo("urn:uuid:" + ID), props(p -> p.setMessageId(ID)), BODY);
        properties(p -> assertThat(p.messageId()).isEqualTo("18446744073709551615"),
            props(p -> p.setMessageId(UnsignedLong.valueOf("18446744073709551615"))), BODY);
        properties(p -> {
            assertThat(p.messageId()).isNull();
            assertThat(p.headers()).containsEntry("x-message-id", Bytes.wrap(new byte[] {1, 2}));
        }, props(p -> p.setMessageId(new Binary(new byte[] {1, 2}))), BODY);
    }

    @Test
    void correlationIdOfEachType() {
        properties(p -> assertThat(p.correlationId()).isEqualTo("c"), props(p -> p.setCorrelationId("c")), BODY);
        properties(p -> assertThat(p.headers()).containsEntry("x-correlation-id", "c".repeat(256)),
            props(p -> p.setCorrelationId("c".repeat(256))), BODY);
        properties(p -> assertThat(p.correlationId()).isEqualTo("urn:uuid:" + ID),
            props(p -> p.setCorrelationId(ID)), BODY);
        properties(p -> assertThat(p.correlationId()).isEqualTo("42"),
            props(p -> p.setCorrelationId(UnsignedLong.valueOf(42))), BODY);
        properties(p -> assertThat(p.headers()).containsEntry("x-correlation-id", Bytes.wrap(new byte[] {3})),
            props(p -> p.setCorrelationId(new Binary(new byte[] {3}))), BODY);
    }

    @Test
    void theOtherProperties() {
        Properties all = props(p -> {
            p.setUserId(new Binary("guest".getBytes()));
            p.setTo("/queues/q");
            p.setSubject("subject");
            p.setReplyTo("/queues/replies");
            p.setContentType(Symbol.valueOf("text/plain"));
            p.setContentEncoding(Symbol.valueOf("gzip"));
            p.setAbsoluteExpiryTime(new Date(5_000));
            p.setCreationTime(new Date(1_700_000_000_999L));
            p.setGroupId("group");
            p.setGroupSequence(UnsignedInteger.valueOf(3));
            p.setReplyToGroupId("rgroup");
        });
        properties(p -> assertThat(p).isEqualTo(new BasicProperties("text/plain", "gzip", null, 2, null, null,
            "/queues/replies", null, null, Instant.ofEpochSecond(1_700_000_000L), null, "guest", "group", null)),
            all, BODY);
        properties(p -> assertThat(p.userId()).as("user-id that is not a shortstr").isNull(),
            props(p -> p.setUserId(new Binary(new byte[] {0, 1}))), BODY);
        properties(p -> assertThat(p.replyTo()).isNull(), props(p -> p.setReplyTo("r".repeat(256))), BODY);
    }

    @Test
    void applicationPropertiesBecomeHeadersWithTheirTypesConverted() {
        Map<String, Object> app = new LinkedHashMap<>();
        app.put("utf8", "s");
        app.put("binary", new Binary(new byte[] {9}));
        app.put("long", 1L);
        app.put("ulong", UnsignedLong.valueOf(2));
        app.put("ubyte", UnsignedByte.valueOf((byte) 3));
        app.put("short", (short) 4);
        app.put("ushort", UnsignedShort.valueOf((short) 5));
        app.put("uint", UnsignedInteger.valueOf(6));
        app.put("int", 7);
        app.put("double", 8.5d);
        app.put("float", 9.5f);
        app.put("boolean", true);
        app.put("timestamp", new Date(10_999));
        app.put("byte", (byte) 11);
        app.put("null", null);
        app.put("symbol", Symbol.valueOf("sym"));
        app.put("k".repeat(256), "long key: not a shortstr");
        properties(p -> {
            Map<String, Object> expected = new LinkedHashMap<>();
            expected.put("utf8", "s");
            expected.put("binary", Bytes.wrap(new byte[] {9}));
            expected.put("long", 1L);
            expected.put("ulong", 2L);
            expected.put("ubyte", (short) 3);
            expected.put("short", (short) 4);
            expected.put("ushort", 5);
            expected.put("uint", 6L);
            expected.put("int", 7);
            expected.put("double", 8.5d);
            expected.put("float", 9.5f);
            expected.put("boolean", true);
            expected.put("timestamp", Instant.ofEpochSecond(10));
            expected.put("byte", (byte) 11);
            expected.put("null", null);
            expected.put("symbol", "sym");
            assertThat(p.headers()).isEqualTo(expected);
        }, new ApplicationProperties(app), BODY);
    }

    @Test
    void xAnnotationsBecomeHeadersAndXCcBecomesCc() {
        Map<Symbol, Object> annotations = new LinkedHashMap<>();
        annotations.put(Symbol.valueOf("x-opt-thing"), 5);
        annotations.put(Symbol.valueOf("x-cc"), List.of("a", "b"));
        annotations.put(Symbol.valueOf("x-list"), List.of(1L, "two"));
        annotations.put(Symbol.valueOf("x-map"), Map.of(Symbol.valueOf("k"), "v"));
        annotations.put(Symbol.valueOf("x-ints"), new Integer[] {1, 2}); // an AMQP array: proton-j decodes it to int[]
        annotations.put(Symbol.valueOf("x-uuid"), ID); // no 0-9-1 type: left out
        properties(p -> assertThat(p.headers()).containsEntry("x-opt-thing", 5).containsEntry("CC", List.of("a", "b"))
            .containsEntry("x-list", List.of(1L, "two")).containsEntry("x-map", Map.of("k", "v"))
            .containsEntry("x-ints", List.of(1, 2)).doesNotContainKeys("x-cc", "x-uuid"),
            new MessageAnnotations(annotations), BODY);
    }

    @Test
    void oneDataSectionIsTheBodyWithoutACopy() {
        Amqp10Message m = amqp10(new Data(new Binary("payload".getBytes())));
        try {
            Amqp091Message c = m.toAmqp091();
            assertThat(ByteBufUtil.getBytes(c.body())).isEqualTo("payload".getBytes());
            assertThat(c.properties().type()).isNull();
            assertThat(c.body().unwrap()).as("a slice of the publisher's bytes").isSameAs(m.bytes().unwrap() == null
                ? m.bytes() : m.bytes().unwrap());
        } finally {
            m.release();
        }
    }

    @Test
    void otherBodiesGoAsAmqp10EncodedSectionsTypedAmqp10() {
        Amqp10Message value = amqp10(new AmqpValue("text"));
        try {
            Amqp091Message c = value.toAmqp091();
            assertThat(c.properties().type()).isEqualTo("amqp-1.0");
            // the amqp-value section: descriptor 0x00 0x53 0x77, then str8 "text"
            assertThat(ByteBufUtil.hexDump(c.body())).isEqualTo("005377a10474657874");
        } finally {
            value.release();
        }
        Data one = new Data(new Binary(new byte[] {1}));
        Data two = new Data(new Binary(new byte[] {2}));
        convert(c -> {
            assertThat(c.properties().type()).isEqualTo("amqp-1.0");
            assertThat(ByteBufUtil.hexDump(c.body())).isEqualTo("005375a00101" + "005375a00102");
        }, one, two);
        convert(c -> assertThat(c.properties().type()).isEqualTo("amqp-1.0"),
            new AmqpSequence(Arrays.asList(1, 2)));
    }
}
