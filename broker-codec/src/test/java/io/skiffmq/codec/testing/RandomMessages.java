package io.skiffmq.codec.testing;

import static io.skiffmq.codec.testing.Amqp.bool1;
import static io.skiffmq.codec.testing.Amqp.bool2;
import static io.skiffmq.codec.testing.Amqp.concat;
import static io.skiffmq.codec.testing.Amqp.int32;
import static io.skiffmq.codec.testing.Amqp.list0;
import static io.skiffmq.codec.testing.Amqp.list32;
import static io.skiffmq.codec.testing.Amqp.list8;
import static io.skiffmq.codec.testing.Amqp.long64;
import static io.skiffmq.codec.testing.Amqp.map32;
import static io.skiffmq.codec.testing.Amqp.map8;
import static io.skiffmq.codec.testing.Amqp.nul;
import static io.skiffmq.codec.testing.Amqp.str32;
import static io.skiffmq.codec.testing.Amqp.str8;
import static io.skiffmq.codec.testing.Amqp.sym32;
import static io.skiffmq.codec.testing.Amqp.sym8;
import static io.skiffmq.codec.testing.Amqp.timestamp;
import static io.skiffmq.codec.testing.Amqp.ubyte;
import static io.skiffmq.codec.testing.Amqp.uint;
import static io.skiffmq.codec.testing.Amqp.uint32;
import static io.skiffmq.codec.testing.Amqp.ulong;
import static io.skiffmq.codec.testing.Amqp.vbin32;
import static io.skiffmq.codec.testing.Amqp.vbin8;

import java.io.ByteArrayOutputStream;
import java.util.ArrayList;
import java.util.Date;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.apache.qpid.proton.amqp.Binary;
import org.apache.qpid.proton.amqp.UnsignedInteger;
import org.apache.qpid.proton.amqp.UnsignedLong;

/**
 * Seeded random messages: which sections are present, and how each is encoded (numeric, long or symbolic
 * descriptors; 1- or 2-byte booleans; list0/list8/list32 and map8/map32; trailing nulls or not; str8/str32…),
 * are all drawn from one {@link Random}, and the expected section layout and field values are recorded while
 * the bytes are built. The same seed always gives the same message.
 */
public final class RandomMessages {
    private static final String[] SYMBOLS = {
        "amqp:header:list", "amqp:delivery-annotations:map", "amqp:message-annotations:map",
        "amqp:properties:list", "amqp:application-properties:map", "amqp:data:binary",
        "amqp:amqp-sequence:list", "amqp:amqp-value:*", "amqp:footer:map",
    };

    private final Random random;

    public RandomMessages(long seed) {
        this.random = new Random(seed);
    }

    /** A message and what a correct decoder must find in it. */
    public static final class Generated {
        public byte[] bytes;
        /** (code, offset, end) of each section in order. */
        public final List<int[]> sections = new ArrayList<>();
        public int bareStart = -1;
        public boolean durable;
        public int priority = 4;
        public long ttl = -1;
        public boolean firstAcquirer;
        public long deliveryCount;
        public String to;
        public String subject;
        public Object messageId;
        public final Map<String, Object> applicationProperties = new LinkedHashMap<>();
        public final Map<String, Object> messageAnnotations = new LinkedHashMap<>();
    }

    public Generated next() {
        Generated g = new Generated();
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        if (random.nextBoolean()) {
            section(g, out, 0x70, header(g));
        }
        if (random.nextInt(4) == 0) {
            section(g, out, 0x71, annotations(null));
        }
        if (random.nextBoolean()) {
            section(g, out, 0x72, annotations(g.messageAnnotations));
        }
        if (random.nextBoolean()) {
            markBare(g, out);
            section(g, out, 0x73, properties(g));
        }
        if (random.nextBoolean()) {
            markBare(g, out);
            section(g, out, 0x74, applicationProperties(g));
        }
        int body = random.nextInt(4);
        int bodySections = 1 + (random.nextInt(3) == 0 ? random.nextInt(3) : 0);
        if (body != 0) {
            markBare(g, out);
        }
        for (int i = 0; body == 1 && i < bodySections; i++) {
            section(g, out, 0x75, binary(random.nextInt(3) == 0 ? 300 : 40));
        }
        for (int i = 0; body == 2 && i < bodySections; i++) {
            section(g, out, 0x76, random.nextBoolean() ? list8(int32(random.nextInt()), str8("s")) : list0());
        }
        if (body == 3) {
            section(g, out, 0x77, value());
        }
        if (random.nextInt(3) == 0) {
            markBare(g, out);
            section(g, out, 0x78, map8(sym8("x-opt-crc-32"), uint32(random.nextInt() & 0xffffffffL)));
        }
        g.bytes = out.toByteArray();
        if (g.bareStart < 0) {
            g.bareStart = g.bytes.length;
        }
        return g;
    }

    private static void markBare(Generated g, ByteArrayOutputStream out) {
        if (g.bareStart < 0) {
            g.bareStart = out.size();
        }
    }

    private void section(Generated g, ByteArrayOutputStream out, int code, byte[] value) {
        int start = out.size();
        int choice = random.nextInt(10);
        byte[] descriptor = choice < 8 ? new byte[] {0x00, 0x53, (byte) code}
            : choice == 8 ? concat(new byte[] {0x00}, ulong(code)) : concat(new byte[] {0x00}, sym8(SYMBOLS[code - 0x70]));
        out.writeBytes(descriptor);
        out.writeBytes(value);
        g.sections.add(new int[] {code, start, out.size()});
    }

    private byte[] bool(boolean value) {
        return random.nextBoolean() ? bool1(value) : bool2(value);
    }

    /** A list of {@code fields}, with up to two trailing nulls, as list0 (when empty), list8 or list32. */
    private byte[] list(List<byte[]> fields) {
        int last = fields.size();
        while (last > 0 && fields.get(last - 1)[0] == 0x40) {
            last--;
        }
        List<byte[]> encoded = new ArrayList<>(fields.subList(0, last));
        for (int extra = random.nextInt(3); extra > 0 && encoded.size() < fields.size(); extra--) {
            encoded.add(nul());
        }
        if (encoded.isEmpty() && random.nextBoolean()) {
            return list0();
        }
        byte[][] elements = encoded.toArray(new byte[0][]);
        return random.nextBoolean() ? list8(elements) : list32(elements);
    }

    private byte[] header(Generated g) {
        List<byte[]> fields = new ArrayList<>();
        g.durable = random.nextBoolean();
        fields.add(random.nextInt(4) == 0 ? nul() : bool(g.durable));
        if (fields.get(0)[0] == 0x40) {
            g.durable = false;
        }
        if (random.nextBoolean()) {
            g.priority = random.nextInt(10);
            fields.add(ubyte(g.priority));
        } else {
            fields.add(nul());
        }
        if (random.nextBoolean()) {
            g.ttl = random.nextInt(100_000);
            fields.add(random.nextBoolean() ? uint(g.ttl) : uint32(g.ttl));
        } else {
            fields.add(nul());
        }
        g.firstAcquirer = random.nextBoolean();
        fields.add(bool(g.firstAcquirer));
        g.deliveryCount = random.nextInt(3) == 0 ? random.nextInt(1000) : 0;
        fields.add(uint(g.deliveryCount));
        return list(fields);
    }

    private byte[] annotations(Map<String, Object> expected) {
        int pairs = random.nextInt(4);
        List<byte[]> elements = new ArrayList<>();
        for (int i = 0; i < pairs; i++) {
            String key = "x-opt-" + i + "-" + random.nextInt(100);
            elements.add(random.nextBoolean() ? sym8(key) : sym32(key));
            String value = "v" + random.nextInt(1000);
            elements.add(random.nextBoolean() ? str8(value) : str32(value));
            if (expected != null) {
                expected.put(key, value);
            }
        }
        byte[][] array = elements.toArray(new byte[0][]);
        return random.nextBoolean() ? map8(array) : map32(array);
    }

    private byte[] properties(Generated g) {
        List<byte[]> fields = new ArrayList<>();
        for (int i = 0; i < 13; i++) {
            fields.add(random.nextInt(3) == 0 ? propertyField(g, i) : nul());
        }
        return list(fields);
    }

    private byte[] propertyField(Generated g, int field) {
        switch (field) {
            case 0 -> {
                long id = random.nextInt(Integer.MAX_VALUE);
                g.messageId = random.nextBoolean() ? UnsignedLong.valueOf(id) : "id-" + id;
                return g.messageId instanceof String s ? str8(s) : ulong(id);
            }
            case 2 -> {
                g.to = "/queues/q" + random.nextInt(100);
                return random.nextBoolean() ? str8(g.to) : str32(g.to);
            }
            case 3 -> {
                g.subject = "subject-\u00e9-" + random.nextInt(100);
                return str8(g.subject);
            }
            case 1 -> {
                return vbin8(new byte[] {1, 2, 3});
            }
            case 6, 7 -> {
                return sym8("text/plain");
            }
            case 8, 9 -> {
                return timestamp(1_700_000_000_000L + random.nextInt(1000));
            }
            case 11 -> {
                return uint(random.nextInt(1000));
            }
            default -> {
                return str8("p" + field);
            }
        }
    }

    private byte[] applicationProperties(Generated g) {
        int pairs = random.nextInt(6);
        List<byte[]> elements = new ArrayList<>();
        for (int i = 0; i < pairs; i++) {
            String key = i == 0 && random.nextBoolean() ? "cl\u00e9-\uD83D\uDE00" : "key-" + i;
            elements.add(random.nextBoolean() ? str8(key) : str32(key));
            int type = random.nextInt(7);
            Object value;
            byte[] encoded;
            switch (type) {
                case 0 -> {
                    value = "value-" + random.nextInt(100);
                    encoded = str8((String) value);
                }
                case 1 -> {
                    value = random.nextInt();
                    encoded = int32((Integer) value);
                }
                case 2 -> {
                    value = random.nextLong();
                    encoded = long64((Long) value);
                }
                case 3 -> {
                    value = random.nextBoolean();
                    encoded = bool((Boolean) value);
                }
                case 4 -> {
                    value = UnsignedInteger.valueOf(random.nextInt(1 << 20));
                    encoded = uint(((UnsignedInteger) value).longValue());
                }
                case 5 -> {
                    value = new Date(1_700_000_000_000L + random.nextInt(100_000));
                    encoded = timestamp(((Date) value).getTime());
                }
                default -> {
                    byte[] bytes = new byte[random.nextInt(5)];
                    random.nextBytes(bytes);
                    value = new Binary(bytes);
                    encoded = vbin8(bytes);
                }
            }
            elements.add(encoded);
            g.applicationProperties.put(key, value);
        }
        byte[][] array = elements.toArray(new byte[0][]);
        return random.nextBoolean() ? map8(array) : map32(array);
    }

    private byte[] binary(int maxLength) {
        byte[] bytes = new byte[random.nextInt(maxLength)];
        random.nextBytes(bytes);
        return bytes.length < 256 && random.nextBoolean() ? vbin8(bytes) : vbin32(bytes);
    }

    private byte[] value() {
        return switch (random.nextInt(4)) {
            case 0 -> str8("hello");
            case 1 -> map8(str8("k"), list8(int32(1), int32(2)));
            // a described value inside amqp-value: skipped by size, never decoded
            case 2 -> concat(new byte[] {0x00}, sym8("com.example:thing"), list8(str8("x"), bool1(true)));
            default -> binary(20);
        };
    }
}
