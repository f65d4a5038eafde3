package io.skiffmq.core.message;

import static io.skiffmq.core.TestMessages.amqp091;
import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.skiffmq.codec.amqp091.BasicProperties;
import io.skiffmq.codec.amqp10.MessageSections;
import io.skiffmq.codec.amqp10.ProtonCodec;
import io.skiffmq.codec.testing.LeakDetection;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Date;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.UUID;
import org.apache.qpid.proton.amqp.Binary;
import org.apache.qpid.proton.amqp.Decimal128;
import org.apache.qpid.proton.amqp.Decimal32;
import org.apache.qpid.proton.amqp.Decimal64;
import org.apache.qpid.proton.amqp.Symbol;
import org.apache.qpid.proton.amqp.UnknownDescribedType;
import org.apache.qpid.proton.amqp.UnsignedByte;
import org.apache.qpid.proton.amqp.UnsignedInteger;
import org.apache.qpid.proton.amqp.UnsignedLong;
import org.apache.qpid.proton.amqp.UnsignedShort;
import org.apache.qpid.proton.amqp.messaging.AmqpSequence;
import org.apache.qpid.proton.amqp.messaging.AmqpValue;
import org.apache.qpid.proton.amqp.messaging.ApplicationProperties;
import org.apache.qpid.proton.amqp.messaging.Data;
import org.apache.qpid.proton.amqp.messaging.Footer;
import org.apache.qpid.proton.amqp.messaging.Header;
import org.apache.qpid.proton.amqp.messaging.MessageAnnotations;
import org.apache.qpid.proton.amqp.messaging.Properties;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The walk of the sections in place ({@link SectionsToAmqp091}) against the conversion through decoded maps
 * ({@link Amqp10ToAmqp091#convertWithMaps}), on a corpus of messages: wherever the walk converts, the 0-9-1 property
 * bytes are identical; where it declines it leaves nothing written, and the maps decide (converting, or refusing a
 * malformed message). The usual messages must not be declined.
 */
@ExtendWith(LeakDetection.class)
class SectionsToAmqp091Test {
    private static final UUID ID = UUID.fromString("550e8400-e29b-41d4-a716-446655440000");
    private static final Data BODY = new Data(new Binary("body".getBytes(StandardCharsets.UTF_8)));

    /** What the walk did with one message. */
    private enum Outcome { CONVERTED, DECLINED }

    /**
     * Converts {@code bytes} both ways, as published and as read from a stream at offset 7 (with the header
     * {@code x-stream-offset}), and checks they agree: converted when the walk converted both.
     */
    private static Outcome compare(byte[] bytes) {
        Outcome published = compare(bytes, -1);
        Outcome streamed = compare(bytes, 7);
        return published == Outcome.CONVERTED && streamed == Outcome.CONVERTED ? Outcome.CONVERTED
            : Outcome.DECLINED;
    }

    private static Outcome compare(byte[] bytes, long offset) {
        Amqp10Message m;
        try {
            ByteBuf buf = Unpooled.wrappedBuffer(bytes);
            m = offset < 0 ? Amqp10Message.of(buf, MessageSections.scan(buf), true, "x", "k")
                : Amqp10Message.fromStream(buf, offset, "s");
        } catch (Exception e) {
            throw new AssertionError("not a message: " + HexFormat.of().formatHex(bytes), e);
        }
        ByteBuf walked = Unpooled.buffer();
        try {
            walked.writeByte(0xee); // something before: the walk appends, and declines leaving it as it was
            boolean converted = new SectionsToAmqp091().write(m, walked);
            Amqp091Message reference;
            try {
                reference = Amqp10ToAmqp091.convertWithMaps(m);
            } catch (IllegalStateException e) {
                assertThat(converted).as("converted what the maps refuse: %s", HexFormat.of().formatHex(bytes))
                    .isFalse();
                assertThat(walked.readableBytes()).isEqualTo(1);
                return Outcome.DECLINED;
            }
            try {
                if (!converted) {
                    assertThat(walked.readableBytes()).as("a decline writes nothing").isEqualTo(1);
                    return Outcome.DECLINED;
                }
                walked.skipBytes(1);
                assertThat(ByteBufUtil.hexDump(walked))
                    .as("properties of %s (maps: %s)", HexFormat.of().formatHex(bytes), reference.properties())
                    .isEqualTo(ByteBufUtil.hexDump(reference.propertyBytes()));
                Amqp091Message full = m.toAmqp091();
                assertThat(ByteBufUtil.hexDump(full.propertyBytes())).isEqualTo(ByteBufUtil.hexDump(
                    reference.propertyBytes()));
                assertThat(ByteBufUtil.hexDump(full.body())).isEqualTo(ByteBufUtil.hexDump(reference.body()));
                return Outcome.CONVERTED;
            } finally {
                reference.release();
            }
        } finally {
            walked.release();
            m.release();
        }
    }

    private static byte[] encode(Object... sections) {
        ByteBuf out = Unpooled.buffer();
        try {
            for (Object section : sections) {
                ProtonCodec.current().encode(section, out);
            }
            return ByteBufUtil.getBytes(out);
        } finally {
            out.release();
        }
    }

    private static Properties props(java.util.function.Consumer<Properties> set) {
        Properties p = new Properties();
        set.accept(p);
        return p;
    }

    private static MessageAnnotations annotations(Object... keysAndValues) {
        Map<Symbol, Object> map = new LinkedHashMap<>();
        for (int i = 0; i < keysAndValues.length; i += 2) {
            map.put(Symbol.valueOf((String) keysAndValues[i]), keysAndValues[i + 1]);
        }
        return new MessageAnnotations(map);
    }

    private static ApplicationProperties application(Object... keysAndValues) {
        Map<String, Object> map = new LinkedHashMap<>();
        for (int i = 0; i < keysAndValues.length; i += 2) {
            map.put((String) keysAndValues[i], keysAndValues[i + 1]);
        }
        return new ApplicationProperties(map);
    }

    private static Header header(boolean durable, Integer priority, Long ttl) {
        Header h = new Header();
        h.setDurable(durable);
        if (priority != null) {
            h.setPriority(UnsignedByte.valueOf(priority.byteValue()));
        }
        if (ttl != null) {
            h.setTtl(UnsignedInteger.valueOf(ttl));
        }
        return h;
    }

    @Test
    void theUsualMessagesAreConvertedInPlaceToTheSameBytes() {
        Properties all = props(p -> {
            p.setMessageId("m-1");
            p.setUserId(new Binary("guest".getBytes(StandardCharsets.US_ASCII)));
            p.setTo("/queues/q");
            p.setSubject("subject");
            p.setReplyTo("/queues/replies");
            p.setCorrelationId(UnsignedLong.valueOf(42));
            p.setContentType(Symbol.valueOf("application/json"));
            p.setContentEncoding(Symbol.valueOf("gzip"));
            p.setAbsoluteExpiryTime(new Date(5_000));
            p.setCreationTime(new Date(-1_500)); // before 1970: seconds round down
            p.setGroupId("group");
            p.setGroupSequence(UnsignedInteger.valueOf(3));
            p.setReplyToGroupId("rgroup");
        });
        List<byte[]> usual = List.of(
            encode(BODY),
            encode(),
            encode(header(true, null, null), BODY),
            encode(header(false, 9, 1500L), annotations("x-opt-a", 1), BODY),
            encode(header(true, null, 0L), all, BODY),
            encode(props(p -> p.setMessageId(ID)), BODY),
            encode(props(p -> p.setCreationTime(new Date(0))), BODY),
            encode(props(p -> p.setMessageId(UnsignedLong.valueOf("18446744073709551615"))), BODY),
            encode(props(p -> p.setMessageId(UnsignedLong.ZERO)), BODY),
            encode(props(p -> p.setMessageId(UnsignedLong.valueOf(123_456_789_012L))), BODY),
            encode(props(p -> p.setCorrelationId(new Binary(new byte[] {1, 2}))), BODY),
            encode(props(p -> p.setMessageId("m".repeat(300))), BODY),
            encode(props(p -> p.setCorrelationId("nul\0inside")), BODY),
            encode(props(p -> p.setReplyTo("r".repeat(256))), BODY),
            encode(props(p -> p.setUserId(new Binary(new byte[] {0, 1}))), BODY),
            encode(props(p -> p.setContentType(Symbol.valueOf("t".repeat(255)))), BODY),
            encode(annotations("x-cc", List.of("a", "b"), "x-basic-type", "order", "x-exchange", "e",
                "x-routing-key", "k", "x-basic-other", 1, "x-death", "no", "plain", "not x-"), BODY),
            encode(annotations("x-basic-type", Symbol.valueOf("symbol: no type")), BODY),
            encode(annotations("x-basic-type", "t".repeat(256)), BODY),
            encode(annotations("x-list", List.of(1L, "two", List.of(UnsignedByte.valueOf((byte) 3))),
                "x-map", Map.of(Symbol.valueOf("k"), "v"), "x-uuid", ID, "x-uuid-inside", List.of(1, ID),
                "x-decimal", new Decimal32(1), "x-decimals", List.of(new Decimal64(2), 5), "x-" + "n".repeat(254),
                true), BODY),
            encode(annotations("x-map", nestedMap()), BODY),
            encode(application("utf8", "s", "binary", new Binary(new byte[] {9}), "long", 1L,
                "ulong", UnsignedLong.valueOf(2), "ubyte", UnsignedByte.valueOf((byte) 200), "short", (short) -4,
                "ushort", UnsignedShort.valueOf((short) 65_000), "uint", UnsignedInteger.valueOf(4_000_000_000L),
                "int", 7, "smallint", -3, "double", 8.5d, "float", Float.NaN, "boolean", true, "false", false,
                "timestamp", new Date(10_999), "byte", (byte) -11, "null", null, "symbol", Symbol.valueOf("sym"),
                "char", 'c', "uuid", ID, "k".repeat(256), "long key", "nul\0key", 1, "empty", "",
                "non-ascii value", "grüße"), BODY),
            encode(application("a", 1), new AmqpValue("text")),
            encode(new Data(new Binary(new byte[] {1})), new Data(new Binary(new byte[] {2}))),
            encode(new AmqpSequence(Arrays.asList(1, 2)), new AmqpSequence(List.of())),
            encode(header(true, null, null), new AmqpValue(null), new Footer(Map.of(Symbol.valueOf("f"), 1))),
            encode(BODY, new Footer(Map.of(Symbol.valueOf("f"), 1))),
            encode(new Data(new Binary(new byte[300]))));
        for (byte[] message : usual) {
            assertThat(compare(message)).as(HexFormat.of().formatHex(message)).isEqualTo(Outcome.CONVERTED);
        }
    }

    private static Map<Object, Object> nestedMap() {
        Map<Object, Object> map = new LinkedHashMap<>();
        map.put("s", "v");
        map.put(Symbol.valueOf("sym"), UnsignedInteger.valueOf(1));
        map.put(UnsignedLong.valueOf(1), "a key that is not a string: left out");
        map.put("dec", new Decimal128(1, 2));
        map.put("inner", Map.of("deep", List.of(new Date(3_000))));
        map.put("", null);
        return map;
    }

    @Test
    void aZeroNineOneMessageThroughAStreamIsConvertedInPlace() {
        Map<String, Object> headers = new LinkedHashMap<>();
        headers.put("colour", "red");
        headers.put("x-stream-filter-value", "eu");
        headers.put("count", 5);
        headers.put("when", Instant.ofEpochSecond(1_700_000_000L));
        headers.put("CC", List.of("a", "b"));
        headers.put("x-table", Map.of("k", 1L));
        BasicProperties properties = new BasicProperties("text/plain", "gzip", headers, 2, 3, "c-1", "reply", "60000",
            "urn:uuid:" + ID, Instant.ofEpochSecond(1_700_000_001L), "order", "guest", "app", null);
        Amqp091Message published = amqp091(properties, "body".getBytes(StandardCharsets.UTF_8));
        try {
            // what a stream stores: the conversion at publish, with x-exchange and x-routing-key
            assertThat(compare(ByteBufUtil.getBytes(published.toAmqp10().bytes()))).isEqualTo(Outcome.CONVERTED);
        } finally {
            published.release();
        }
    }

    @Test
    void whatTheWalkDeclinesTheMapsConvertOrRefuse() {
        List<byte[]> declined = new ArrayList<>(List.of(
            encode(annotations("x-ints", new Integer[] {1, 2}), BODY), // an array
            encode(annotations("x-described", new UnknownDescribedType(Symbol.valueOf("d"), 1)), BODY),
            encode(annotations("x-opt-deaths", Death.toAmqp10(Death.record(List.of(), "expired", "q",
                Instant.ofEpochSecond(1), "e", List.of("k"), -1))), BODY),
            encode(annotations("x-nested", List.of("grüße")), BODY), // non-ASCII inside a list: proton-j decodes it
            encode(annotations("x-stream-offset", 1L), BODY), // the name the stream's offset takes, and...
            encode(annotations("x-message-id", 1), props(p -> p.setMessageId("m".repeat(300))), BODY),
            encode(annotations("x-cc", List.of("a")), application("CC", "b"), BODY), // the same name twice
            encode(annotations("x-a", 1), application("x-a", 2), BODY),
            encode(props(p -> p.setReplyTo("grüße")), BODY),
            encode(annotations("x-map", Map.of("k".repeat(256), 1)), BODY))); // the maps' encoder refuses the key
        Map<String, Object> many = new LinkedHashMap<>();
        for (int i = 0; i <= SectionsToAmqp091.MAX_NAMES; i++) {
            many.put("h" + i, i);
        }
        declined.add(encode(new ApplicationProperties(many), BODY));
        // a map with a name twice (proton-j cannot write one): message-annotations {x-a: 1, x-b: 2, x-a: uuid}
        // a non-ASCII name (proton-j writes symbols as ASCII)
        byte[] name = "x-grüße".getBytes(StandardCharsets.UTF_8);
        declined.add(map8(0x72, String.format("a3%02x", name.length) + HexFormat.of().formatHex(name), "5401"));
        declined.add(map8(0x72, "a303782d61", "5401", "a303782d62", "5402", "a303782d61", "98" + "00".repeat(16)));
        // an application-property with a symbol key, a boolean byte of 2, a list cut short: the maps refuse them
        declined.add(map8(0x74, "a3016b", "5401"));
        declined.add(map8(0x74, "a1016b", "5602"));
        declined.add(map8(0x74, "a1016b", "c0020201")); // a list of 2 holding 1 byte
        declined.add(map8(0x74, "a1016b", "c00301" + "5602")); // a boolean byte of 2 inside a list
        for (byte[] message : declined) {
            assertThat(compare(message)).as(HexFormat.of().formatHex(message)).isEqualTo(Outcome.DECLINED);
        }
    }

    /** A message of section {@code code} holding a map8 of the given entries (hex), and a data section. */
    private static byte[] map8(int code, String... entries) {
        String content = String.join("", entries);
        int size = 1 + content.length() / 2;
        return HexFormat.of().parseHex(String.format("0053%02xc1%02x%02x", code, size, entries.length) + content
            + "005375a004" + HexFormat.of().formatHex("body".getBytes(StandardCharsets.US_ASCII)));
    }

    /** Messages of random sections, fields and values (seeded): every one converts alike, and most in place. */
    @Test
    void randomMessagesConvertAlike() {
        Random random = new Random(26);
        int converted = 0;
        int messages = 1_000;
        for (int i = 0; i < messages; i++) {
            if (compare(randomMessage(random)) == Outcome.CONVERTED) {
                converted++;
            }
        }
        assertThat(converted).as("converted in place").isGreaterThan(messages / 2);
    }

    private static byte[] randomMessage(Random r) {
        List<Object> sections = new ArrayList<>();
        if (r.nextBoolean()) {
            sections.add(header(r.nextBoolean(), r.nextBoolean() ? r.nextInt(256) : null,
                r.nextBoolean() ? (long) r.nextInt(100_000) : null));
        }
        if (r.nextBoolean()) {
            Map<Symbol, Object> map = new LinkedHashMap<>();
            for (int n = r.nextInt(5); n > 0; n--) {
                map.put(Symbol.valueOf(pick(r, "x-cc", "x-basic-type", "x-exchange", "x-routing-key", "x-opt-a",
                    "x-opt-b", "x-basic-x", "x-death", "plain", "x-stream-filter-value", "x-" + r.nextInt(1000))),
                    value(r, 0));
            }
            sections.add(new MessageAnnotations(map));
        }
        if (r.nextBoolean()) {
            Properties p = new Properties();
            p.setMessageId(r.nextBoolean() ? id(r) : null);
            p.setCorrelationId(r.nextBoolean() ? id(r) : null);
            p.setUserId(r.nextBoolean() ? new Binary(string(r).getBytes(StandardCharsets.UTF_8)) : null);
            p.setTo(r.nextBoolean() ? string(r) : null);
            p.setReplyTo(r.nextBoolean() ? string(r) : null);
            p.setContentType(r.nextBoolean() ? Symbol.valueOf(pick(r, "text/plain", "", "a\0b", "t".repeat(256)))
                : null);
            p.setContentEncoding(r.nextBoolean() ? Symbol.valueOf("gzip") : null);
            p.setCreationTime(r.nextBoolean() ? new Date(r.nextLong() / 1000) : null);
            p.setGroupId(r.nextBoolean() ? string(r) : null);
            sections.add(p);
        }
        if (r.nextBoolean()) {
            Map<String, Object> map = new LinkedHashMap<>();
            for (int n = r.nextInt(6); n > 0; n--) {
                map.put(pick(r, "a", "b", "CC", "x-message-id", "colour", "k" + r.nextInt(1000)), value(r, 0));
            }
            sections.add(new ApplicationProperties(map));
        }
        switch (r.nextInt(5)) {
            case 0 -> sections.add(BODY);
            case 1 -> {
                sections.add(BODY);
                sections.add(BODY);
            }
            case 2 -> sections.add(new AmqpValue(value(r, 1)));
            case 3 -> sections.add(new AmqpSequence(List.of(1, "a")));
            default -> {
                // no body
            }
        }
        if (r.nextInt(8) == 0) {
            sections.add(new Footer(Map.of(Symbol.valueOf("f"), 1)));
        }
        return encode(sections.toArray());
    }

    private static String pick(Random r, String... choices) {
        return choices[r.nextInt(choices.length)];
    }

    private static String string(Random r) {
        return pick(r, "s", "", "guest", "grüße", "nul\0", "x".repeat(255), "y".repeat(256), "/queues/q");
    }

    private static Object id(Random r) {
        return switch (r.nextInt(5)) {
            case 0 -> string(r);
            case 1 -> ID;
            case 2 -> UnsignedLong.valueOf(r.nextLong() & Long.MAX_VALUE);
            case 3 -> UnsignedLong.valueOf("18446744073709551615");
            default -> new Binary(new byte[] {(byte) r.nextInt()});
        };
    }

    /** A value of any AMQP type (mostly the usual ones), nested to {@code depth} 2 at most. */
    private static Object value(Random r, int depth) {
        int kinds = depth < 2 ? 30 : 26;
        return switch (r.nextInt(kinds)) {
            case 0 -> null;
            case 1 -> r.nextBoolean();
            case 2 -> UnsignedByte.valueOf((byte) r.nextInt());
            case 3 -> UnsignedShort.valueOf((short) r.nextInt());
            case 4 -> UnsignedInteger.valueOf(r.nextInt(3) == 0 ? r.nextInt(256) : r.nextInt() & 0xffffffffL);
            case 5 -> UnsignedLong.valueOf(r.nextInt(3) == 0 ? r.nextInt(256) : r.nextLong() & Long.MAX_VALUE);
            case 6 -> (byte) r.nextInt();
            case 7 -> (short) r.nextInt();
            case 8 -> r.nextInt(3) == 0 ? r.nextInt(256) - 128 : r.nextInt();
            case 9 -> r.nextInt(3) == 0 ? (long) (r.nextInt(256) - 128) : r.nextLong();
            case 10 -> r.nextFloat();
            case 11 -> r.nextDouble();
            case 12 -> (char) (r.nextBoolean() ? 'a' + r.nextInt(26) : 0x100 + r.nextInt(1000));
            case 13 -> new Date(r.nextLong() / 1000);
            case 14 -> ID;
            case 15 -> new Decimal32(r.nextInt());
            case 16 -> new Binary(new byte[r.nextInt(4)]);
            case 17, 18, 19 -> string(r);
            case 20 -> Symbol.valueOf(pick(r, "sym", "a", "grüße"));
            case 21 -> "v" + r.nextInt(100);
            case 22 -> (long) r.nextInt(1000);
            case 23 -> r.nextInt(1000);
            case 24 -> new Decimal64(r.nextLong());
            case 25 -> "ascii";
            case 26, 27 -> {
                List<Object> list = new ArrayList<>();
                for (int n = r.nextInt(4); n > 0; n--) {
                    list.add(value(r, depth + 1));
                }
                yield list;
            }
            case 28 -> {
                Map<Object, Object> map = new LinkedHashMap<>();
                for (int n = r.nextInt(4); n > 0; n--) {
                    map.put(r.nextInt(4) == 0 ? Symbol.valueOf("s" + r.nextInt(3)) : "k" + r.nextInt(5),
                        value(r, depth + 1));
                }
                yield map;
            }
            default -> new Symbol[] {Symbol.valueOf("a")};
        };
    }
}
