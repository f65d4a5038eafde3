package io.skiffmq.core.message;

import static io.skiffmq.core.TestMessages.amqp091;
import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBufUtil;
import io.skiffmq.codec.Bytes;
import io.skiffmq.codec.amqp091.BasicProperties;
import io.skiffmq.codec.amqp10.MessageSections;
import io.skiffmq.codec.amqp10.SectionCode;
import io.skiffmq.codec.testing.LeakDetection;
import java.time.Instant;
import java.util.Date;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.apache.qpid.proton.amqp.Binary;
import org.apache.qpid.proton.amqp.Symbol;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** Each row of RabbitMQ 4's "AMQP 0.9.1 -> AMQP 1.0" table, one field at a time. */
@ExtendWith(LeakDetection.class)
class Amqp091ToAmqp10Test {
    private static final String UUID_TEXT = "550e8400-e29b-41d4-a716-446655440000";

    private static BasicProperties with(String field, Object value) {
        Object[] f = new Object[14];
        List<String> names = List.of("contentType", "contentEncoding", "headers", "deliveryMode", "priority",
            "correlationId", "replyTo", "expiration", "messageId", "timestamp", "type", "userId", "appId",
            "clusterId");
        f[names.indexOf(field)] = value;
        return new BasicProperties((String) f[0], (String) f[1], cast(f[2]), (Integer) f[3], (Integer) f[4],
            (String) f[5], (String) f[6], (String) f[7], (String) f[8], (Instant) f[9], (String) f[10],
            (String) f[11], (String) f[12], (String) f[13]);
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> cast(Object o) {
        return (Map<String, Object>) o;
    }

    /** Converts and hands the AMQP 1.0 view to {@code check}, then releases. */
    private static void convert(BasicProperties p, byte[] body, ThrowingCheck check) throws Exception {
        Amqp091Message m = amqp091(p, body);
        try {
            check.accept(m.toAmqp10().sections());
        } finally {
            m.release();
        }
    }

    interface ThrowingCheck {
        void accept(MessageSections s) throws Exception;
    }

    @Test
    void messageIdAndCorrelationIdAreUuidsWhenTheyAreUrnUuidsAndStringsOtherwise() throws Exception {
        convert(with("messageId", "urn:uuid:" + UUID_TEXT), new byte[0],
            s -> assertThat(s.messageId()).isEqualTo(UUID.fromString(UUID_TEXT)));
        convert(with("messageId", "order-1"), new byte[0], s -> assertThat(s.messageId()).isEqualTo("order-1"));
        convert(with("messageId", "urn:uuid:not-a-uuid-at-all-but-36-chars-long"), new byte[0],
            s -> assertThat(s.messageId()).isEqualTo("urn:uuid:not-a-uuid-at-all-but-36-chars-long"));
        convert(with("correlationId", "urn:uuid:" + UUID_TEXT), new byte[0],
            s -> assertThat(s.correlationId()).isEqualTo(UUID.fromString(UUID_TEXT)));
        convert(with("correlationId", "c-1"), new byte[0], s -> assertThat(s.correlationId()).isEqualTo("c-1"));
    }

    @Test
    void userIdIsBinaryReplyToAndAppIdAreStrings() throws Exception {
        convert(with("userId", "guest"), new byte[0],
            s -> assertThat(s.userId()).isEqualTo(new Binary("guest".getBytes())));
        convert(with("replyTo", "replies"), new byte[0], s -> assertThat(s.replyTo()).isEqualTo("replies"));
        convert(with("appId", "billing"), new byte[0], s -> assertThat(s.groupId()).isEqualTo("billing"));
    }

    @Test
    void timestampSecondsBecomeCreationTimeMilliseconds() throws Exception {
        convert(with("timestamp", Instant.ofEpochSecond(1_700_000_000L)), new byte[0],
            s -> assertThat(s.creationTime()).isEqualTo(1_700_000_000_000L));
    }

    @Test
    void contentTypeAndEncodingAreSymbols() throws Exception {
        convert(with("contentType", "application/json"), new byte[0],
            s -> assertThat((Object) s.contentType()).isEqualTo(Symbol.valueOf("application/json")));
        convert(with("contentEncoding", "gzip"), new byte[0],
            s -> assertThat((Object) s.contentEncoding()).isEqualTo(Symbol.valueOf("gzip")));
    }

    @Test
    void deliveryModePriorityAndExpirationMakeTheHeader() throws Exception {
        convert(with("deliveryMode", 2), new byte[0], s -> assertThat(s.durable()).isTrue());
        convert(with("deliveryMode", 1), new byte[0], s -> assertThat(s.durable()).isFalse());
        convert(with("priority", 7), new byte[0], s -> assertThat(s.priority()).isEqualTo(7));
        convert(with("expiration", "60000"), new byte[0], s -> assertThat(s.ttl()).isEqualTo(60000));
        convert(with("expiration", "soon"), new byte[0], s -> assertThat(s.ttl()).isEqualTo(-1));
    }

    @Test
    void typeBecomesTheXBasicTypeAnnotation() throws Exception {
        convert(with("type", "order.created"), new byte[0],
            s -> assertThat(s.messageAnnotation("x-basic-type")).isEqualTo("order.created"));
    }

    @Test
    void headersSplitIntoAnnotationsAndApplicationPropertiesByTheirNames() throws Exception {
        Map<String, Object> headers = new LinkedHashMap<>();
        headers.put("x-custom", 5L);
        headers.put("x-nested", Map.of("a", 1));
        headers.put("plain", "v");
        headers.put("bytes", Bytes.wrap(new byte[] {1, 2}));
        headers.put("when", Instant.ofEpochSecond(10));
        headers.put("table", Map.of("a", 1));
        headers.put("array", List.of(1, 2));
        headers.put("nothing", null);
        convert(with("headers", headers), new byte[0], s -> {
            assertThat(s.messageAnnotations()).containsEntry(Symbol.valueOf("x-custom"), 5L)
                .containsEntry(Symbol.valueOf("x-nested"), Map.of("a", 1));
            assertThat(s.applicationProperties()).containsOnlyKeys("plain", "bytes", "when", "nothing")
                .containsEntry("plain", "v").containsEntry("bytes", new Binary(new byte[] {1, 2}))
                .containsEntry("when", new Date(10_000));
        });
    }

    @Test
    void theBodyIsOneDataSectionOfTheSameBytes() throws Exception {
        byte[] body = "hello".getBytes();
        convert(BasicProperties.EMPTY, body, s -> {
            assertThat(s.bodyCode()).isEqualTo(SectionCode.DATA);
            assertThat(s.bodySectionCount()).isEqualTo(1);
            MessageSections.Section data = s.sections().get(s.sections().size() - 1);
            assertThat(ByteBufUtil.getBytes(s.buffer(), s.start() + data.valueOffset() + 5, body.length))
                .isEqualTo(body);
            assertThat(s.has(SectionCode.PROPERTIES)).isFalse();
        });
        convert(BasicProperties.EMPTY, new byte[0], s -> assertThat(s.bodyCode()).isEqualTo(SectionCode.DATA));
    }
}
