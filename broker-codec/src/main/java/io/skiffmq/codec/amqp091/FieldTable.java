package io.skiffmq.codec.amqp091;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.skiffmq.codec.Bytes;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * AMQP 0-9-1 field tables and field arrays [4.2.5.5], with the type codes RabbitMQ uses (its errata: {@code s}
 * is a signed short, {@code l} a signed long, {@code x} a byte array). Stateless; safe from any thread.
 *
 * <p>Values decode to the protocol-neutral Java types:
 *
 * <table>
 * <tr><th>code</th><th>0-9-1 type</th><th>Java</th><th>encoded back as</th></tr>
 * <tr><td>t</td><td>boolean</td><td>Boolean</td><td>t</td></tr>
 * <tr><td>b / B</td><td>byte / unsigned byte</td><td>Byte / Short</td><td>b / s</td></tr>
 * <tr><td>s / u</td><td>short / unsigned short</td><td>Short / Integer</td><td>s / I</td></tr>
 * <tr><td>I / i</td><td>int / unsigned int</td><td>Integer / Long</td><td>I / l</td></tr>
 * <tr><td>l</td><td>long</td><td>Long</td><td>l</td></tr>
 * <tr><td>f / d</td><td>float / double</td><td>Float / Double</td><td>f / d</td></tr>
 * <tr><td>D</td><td>decimal</td><td>BigDecimal</td><td>D</td></tr>
 * <tr><td>S</td><td>long string</td><td>String (UTF-8), else {@link Bytes}</td><td>S / x</td></tr>
 * <tr><td>x</td><td>byte array</td><td>{@link Bytes}</td><td>x</td></tr>
 * <tr><td>T</td><td>timestamp (seconds)</td><td>Instant</td><td>T</td></tr>
 * <tr><td>F / A</td><td>table / array</td><td>Map&lt;String,Object&gt; / List&lt;Object&gt;</td><td>F / A</td></tr>
 * <tr><td>V</td><td>void</td><td>null</td><td>V</td></tr>
 * </table>
 *
 * Unsigned types widen to the next signed Java type, so they come back encoded as that type: the neutral model
 * has no unsigned integers. Everything else re-encodes to the same bytes.
 */
public final class FieldTable {
    /** Tables nest inside tables and arrays; deeper input is refused rather than risking the stack. */
    public static final int MAX_NESTING = 64;

    private FieldTable() {
    }

    /**
     * Reads a table (a 4-byte length, then name/value pairs) at {@code in}'s reader index and moves past it.
     * Does not retain or release {@code in}.
     *
     * @throws Amqp091DecodeException when the table is cut short, has an unknown type code or nests too deep;
     *         the reader index is then undefined
     */
    public static Map<String, Object> readTable(ByteBuf in) throws Amqp091DecodeException {
        return readTable(in, 0);
    }

    private static Map<String, Object> readTable(ByteBuf in, int depth) throws Amqp091DecodeException {
        int end = lengthPrefixedEnd(in, "table");
        Map<String, Object> table = new LinkedHashMap<>();
        while (in.readerIndex() < end) {
            String name = readShortString(in, end);
            table.put(name, readValue(in, end, depth));
        }
        if (in.readerIndex() != end) {
            throw Amqp091DecodeException.of("table field runs past the table's end at %d", end);
        }
        return table;
    }

    private static List<Object> readArray(ByteBuf in, int depth) throws Amqp091DecodeException {
        int end = lengthPrefixedEnd(in, "array");
        List<Object> array = new ArrayList<>();
        while (in.readerIndex() < end) {
            array.add(readValue(in, end, depth));
        }
        if (in.readerIndex() != end) {
            throw Amqp091DecodeException.of("array value runs past the array's end at %d", end);
        }
        return array;
    }

    private static int lengthPrefixedEnd(ByteBuf in, String what) throws Amqp091DecodeException {
        need(in, 4, in.writerIndex(), what + " length");
        long length = in.readUnsignedInt();
        if (length > in.readableBytes()) {
            throw Amqp091DecodeException.of("%s of %d bytes, only %d left", what, length, in.readableBytes());
        }
        return in.readerIndex() + (int) length;
    }

    private static Object readValue(ByteBuf in, int end, int depth) throws Amqp091DecodeException {
        need(in, 1, end, "field type");
        int at = in.readerIndex();
        byte type = in.readByte();
        switch (type) {
            case 't':
                need(in, 1, end, "boolean");
                return in.readByte() != 0;
            case 'b':
                need(in, 1, end, "byte");
                return in.readByte();
            case 'B':
                need(in, 1, end, "unsigned byte");
                return in.readUnsignedByte();
            case 's':
                need(in, 2, end, "short");
                return in.readShort();
            case 'u':
                need(in, 2, end, "unsigned short");
                return in.readUnsignedShort();
            case 'I':
                need(in, 4, end, "int");
                return in.readInt();
            case 'i':
                need(in, 4, end, "unsigned int");
                return in.readUnsignedInt();
            case 'l':
                need(in, 8, end, "long");
                return in.readLong();
            case 'f':
                need(in, 4, end, "float");
                return in.readFloat();
            case 'd':
                need(in, 8, end, "double");
                return in.readDouble();
            case 'D': {
                need(in, 5, end, "decimal");
                int scale = in.readUnsignedByte();
                return new BigDecimal(BigInteger.valueOf(in.readInt()), scale);
            }
            case 'T':
                need(in, 8, end, "timestamp");
                return timestamp(in.readLong(), at);
            case 'S': {
                int length = longBytesLength(in, end, "long string");
                int index = in.readerIndex();
                in.skipBytes(length);
                if (ByteBufUtil.isText(in, index, length, StandardCharsets.UTF_8)) {
                    return in.toString(index, length, StandardCharsets.UTF_8);
                }
                return Bytes.wrap(ByteBufUtil.getBytes(in, index, length));
            }
            case 'x': {
                int length = longBytesLength(in, end, "byte array");
                byte[] bytes = new byte[length];
                in.readBytes(bytes);
                return Bytes.wrap(bytes);
            }
            case 'F':
                checkDepth(depth, at);
                return nested(readTable(in, depth + 1), in, end);
            case 'A':
                checkDepth(depth, at);
                return nested(readArray(in, depth + 1), in, end);
            case 'V':
                return null;
            default:
                throw Amqp091DecodeException.of("unknown field type 0x%02x at %d", type & 0xff, at);
        }
    }

    /**
     * A timestamp of {@code seconds}. Instant spans a billion years either way; a 64-bit value beyond that is
     * refused rather than clamped, so nothing decodes to a different time than was sent.
     */
    static Instant timestamp(long seconds, int at) throws Amqp091DecodeException {
        if (seconds < Instant.MIN.getEpochSecond() || seconds > Instant.MAX.getEpochSecond()) {
            throw Amqp091DecodeException.of("timestamp %d s at %d is beyond the years Java represents", seconds, at);
        }
        return Instant.ofEpochSecond(seconds);
    }

    private static Object nested(Object value, ByteBuf in, int end) throws Amqp091DecodeException {
        if (in.readerIndex() > end) {
            throw Amqp091DecodeException.of("nested value runs past its container's end at %d", end);
        }
        return value;
    }

    private static void checkDepth(int depth, int at) throws Amqp091DecodeException {
        if (depth >= MAX_NESTING) {
            throw Amqp091DecodeException.of("tables and arrays nested deeper than %d at %d", MAX_NESTING, at);
        }
    }

    private static int longBytesLength(ByteBuf in, int end, String what) throws Amqp091DecodeException {
        need(in, 4, end, what + " length");
        long length = in.readUnsignedInt();
        if (length > end - in.readerIndex()) {
            throw Amqp091DecodeException.of("%s of %d bytes, only %d left", what, length, end - in.readerIndex());
        }
        return (int) length;
    }

    static String readShortString(ByteBuf in, int end) throws Amqp091DecodeException {
        need(in, 1, end, "short string length");
        int length = in.readUnsignedByte();
        need(in, length, end, "short string");
        String s = in.toString(in.readerIndex(), length, StandardCharsets.UTF_8);
        in.skipBytes(length);
        return s;
    }

    static void need(ByteBuf in, int bytes, int end, String what) throws Amqp091DecodeException {
        if (end - in.readerIndex() < bytes) {
            throw Amqp091DecodeException.of("%s cut short at %d: %d bytes needed, %d left", what, in.readerIndex(),
                bytes, end - in.readerIndex());
        }
    }

    /**
     * Appends {@code table} as a field table (with its length) at {@code out}'s writer index.
     *
     * @throws IllegalArgumentException for a value of a type outside the table in the class comment, a name
     *         longer than 255 UTF-8 bytes, or a decimal that does not fit 0-9-1's (scale 0..255, 32-bit unscaled)
     */
    public static void writeTable(ByteBuf out, Map<String, ?> table) {
        int lengthAt = out.writerIndex();
        out.writeInt(0);
        for (Map.Entry<String, ?> e : table.entrySet()) {
            writeShortString(out, e.getKey());
            writeValue(out, e.getValue());
        }
        out.setInt(lengthAt, out.writerIndex() - lengthAt - 4);
    }

    private static void writeArray(ByteBuf out, List<?> array) {
        int lengthAt = out.writerIndex();
        out.writeInt(0);
        for (Object value : array) {
            writeValue(out, value);
        }
        out.setInt(lengthAt, out.writerIndex() - lengthAt - 4);
    }

    @SuppressWarnings("unchecked")
    private static void writeValue(ByteBuf out, Object value) {
        if (value == null) {
            out.writeByte('V');
        } else if (value instanceof String s) {
            out.writeByte('S');
            int lengthAt = out.writerIndex();
            out.writeInt(0);
            int length = ByteBufUtil.writeUtf8(out, s);
            out.setInt(lengthAt, length);
        } else if (value instanceof Long l) {
            out.writeByte('l').writeLong(l);
        } else if (value instanceof Integer i) {
            out.writeByte('I').writeInt(i);
        } else if (value instanceof Boolean b) {
            out.writeByte('t').writeByte(b ? 1 : 0);
        } else if (value instanceof Short s) {
            out.writeByte('s').writeShort(s);
        } else if (value instanceof Byte b) {
            out.writeByte('b').writeByte(b);
        } else if (value instanceof Double d) {
            out.writeByte('d').writeDouble(d);
        } else if (value instanceof Float f) {
            out.writeByte('f').writeFloat(f);
        } else if (value instanceof Bytes b) {
            out.writeByte('x').writeInt(b.length()).writeBytes(b.array());
        } else if (value instanceof byte[] b) {
            out.writeByte('x').writeInt(b.length).writeBytes(b);
        } else if (value instanceof Instant t) {
            out.writeByte('T').writeLong(t.getEpochSecond());
        } else if (value instanceof BigDecimal d) {
            if (d.scale() < 0 || d.scale() > 255 || d.unscaledValue().bitLength() > 31) {
                throw new IllegalArgumentException("decimal " + d + " does not fit AMQP 0-9-1's decimal");
            }
            out.writeByte('D').writeByte(d.scale()).writeInt(d.unscaledValue().intValue());
        } else if (value instanceof Map<?, ?> m) {
            out.writeByte('F');
            writeTable(out, (Map<String, ?>) m);
        } else if (value instanceof List<?> l) {
            out.writeByte('A');
            writeArray(out, l);
        } else {
            throw new IllegalArgumentException("no AMQP 0-9-1 field type for " + value.getClass().getName());
        }
    }

    static void writeShortString(ByteBuf out, String s) {
        int lengthAt = out.writerIndex();
        out.writeByte(0);
        int length = ByteBufUtil.writeUtf8(out, s);
        if (length > 255) {
            out.writerIndex(lengthAt);
            throw new IllegalArgumentException("short string longer than 255 bytes: " + s.substring(0, Math.min(32, s.length())) + "…");
        }
        out.setByte(lengthAt, length);
    }
}
