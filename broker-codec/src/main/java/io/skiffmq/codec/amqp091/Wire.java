package io.skiffmq.codec.amqp091;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.skiffmq.codec.Bytes;
import java.nio.charset.StandardCharsets;
import java.util.Map;

/**
 * Reads and writes the argument types of AMQP 0-9-1 methods [4.2.5] at a buffer's reader or writer index. A read
 * past the readable bytes is {@link DecodeFailure#BAD_ARGUMENTS}: the caller gives a buffer whose readable bytes
 * are exactly one argument list. Stateless.
 */
final class Wire {
    private Wire() {
    }

    private static void need(ByteBuf in, int bytes, String what) throws Amqp091DecodeException {
        if (in.readableBytes() < bytes) {
            throw Amqp091DecodeException.of(DecodeFailure.BAD_ARGUMENTS, "%s cut short at %d: %d bytes needed, %d left",
                what, in.readerIndex(), bytes, in.readableBytes());
        }
    }

    static int readOctet(ByteBuf in) throws Amqp091DecodeException {
        need(in, 1, "octet");
        return in.readUnsignedByte();
    }

    static int readShort(ByteBuf in) throws Amqp091DecodeException {
        need(in, 2, "short");
        return in.readUnsignedShort();
    }

    static long readLong(ByteBuf in) throws Amqp091DecodeException {
        need(in, 4, "long");
        return in.readUnsignedInt();
    }

    static long readLongLong(ByteBuf in) throws Amqp091DecodeException {
        need(in, 8, "longlong");
        return in.readLong();
    }

    /** A short string, decoded straight from the buffer (no intermediate byte[]); bad UTF-8 becomes U+FFFD. */
    static String readShortString(ByteBuf in) throws Amqp091DecodeException {
        int length = readOctet(in);
        need(in, length, "short string");
        if (length == 0) {
            return "";
        }
        String s = in.toString(in.readerIndex(), length, StandardCharsets.UTF_8);
        in.skipBytes(length);
        return s;
    }

    static void skipShortString(ByteBuf in) throws Amqp091DecodeException {
        int length = readOctet(in);
        need(in, length, "short string");
        in.skipBytes(length);
    }

    private static int longStringLength(ByteBuf in, String what) throws Amqp091DecodeException {
        long length = readLong(in);
        if (length > in.readableBytes()) {
            throw Amqp091DecodeException.of(DecodeFailure.BAD_ARGUMENTS, "%s of %d bytes, only %d left", what, length,
                in.readableBytes());
        }
        return (int) length;
    }

    static String readLongString(ByteBuf in) throws Amqp091DecodeException {
        int length = longStringLength(in, "long string");
        String s = in.toString(in.readerIndex(), length, StandardCharsets.UTF_8);
        in.skipBytes(length);
        return s;
    }

    static Bytes readLongBytes(ByteBuf in) throws Amqp091DecodeException {
        int length = longStringLength(in, "long string");
        byte[] bytes = new byte[length];
        in.readBytes(bytes);
        return Bytes.wrap(bytes);
    }

    static void skipLongString(ByteBuf in) throws Amqp091DecodeException {
        in.skipBytes(longStringLength(in, "long string"));
    }

    /**
     * A field table. A length running past the arguments is {@link DecodeFailure#BAD_ARGUMENTS}; a table that
     * fits but does not parse is {@link DecodeFailure#BAD_VALUE}.
     */
    static Map<String, Object> readTable(ByteBuf in) throws Amqp091DecodeException {
        need(in, 4, "table length");
        long length = in.getUnsignedInt(in.readerIndex());
        if (length > in.readableBytes() - 4) {
            throw Amqp091DecodeException.of(DecodeFailure.BAD_ARGUMENTS, "table of %d bytes, only %d left", length,
                in.readableBytes() - 4);
        }
        return FieldTable.readTable(in);
    }

    static void writeOctet(ByteBuf out, int value) {
        if (value < 0 || value > 0xff) {
            throw new IllegalArgumentException("octet out of range: " + value);
        }
        out.writeByte(value);
    }

    static void writeShort(ByteBuf out, int value) {
        if (value < 0 || value > 0xffff) {
            throw new IllegalArgumentException("short out of range: " + value);
        }
        out.writeShort(value);
    }

    static void writeLong(ByteBuf out, long value) {
        if (value < 0 || value > 0xffff_ffffL) {
            throw new IllegalArgumentException("long out of range: " + value);
        }
        out.writeInt((int) value);
    }

    static void writeShortString(ByteBuf out, String s) {
        if (s == null || s.isEmpty()) {
            out.writeByte(0);
        } else {
            FieldTable.writeShortString(out, s);
        }
    }

    static void writeLongString(ByteBuf out, String s) {
        int lengthAt = out.writerIndex();
        out.writeInt(0);
        if (s != null) {
            out.setInt(lengthAt, ByteBufUtil.writeUtf8(out, s));
        }
    }

    static void writeLongString(ByteBuf out, Bytes b) {
        if (b == null) {
            out.writeInt(0);
        } else {
            out.writeInt(b.length()).writeBytes(b.array());
        }
    }

    static void writeTable(ByteBuf out, Map<String, ?> table) {
        if (table == null) {
            out.writeInt(0);
        } else {
            FieldTable.writeTable(out, table);
        }
    }
}
