package io.skiffmq.codec.stream;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.skiffmq.codec.Bytes;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Reads and writes the field types of the stream protocol (PROTOCOL.adoc "Types") at a buffer's reader or writer
 * index: big-endian integers; {@code string} = int16 length + UTF-8 (-1 = null); {@code bytes} = int32 length
 * (-1 = null); arrays = int32 count + items. The caller gives a buffer whose readable bytes are exactly one frame's
 * fields: a read past them is {@link DecodeFailure#BAD_FIELDS}. Every count is checked against the bytes left
 * (each item takes at least its minimum size) before anything is allocated. Stateless.
 */
final class Wire {
    /** The longest string an int16 length can announce. */
    static final int MAX_STRING_LENGTH = Short.MAX_VALUE;

    private Wire() {
    }

    static void need(ByteBuf in, int bytes, String what) throws StreamDecodeException {
        if (in.readableBytes() < bytes) {
            throw StreamDecodeException.of(DecodeFailure.BAD_FIELDS, "%s cut short: %d bytes needed, %d left", what,
                bytes, in.readableBytes());
        }
    }

    static int readUint8(ByteBuf in, String what) throws StreamDecodeException {
        need(in, 1, what);
        return in.readUnsignedByte();
    }

    static int readUint16(ByteBuf in, String what) throws StreamDecodeException {
        need(in, 2, what);
        return in.readUnsignedShort();
    }

    static long readUint32(ByteBuf in, String what) throws StreamDecodeException {
        need(in, 4, what);
        return in.readUnsignedInt();
    }

    static long readInt64(ByteBuf in, String what) throws StreamDecodeException {
        need(in, 8, what);
        return in.readLong();
    }

    static boolean readBoolean(ByteBuf in, String what) throws StreamDecodeException {
        int b = readUint8(in, what);
        if (b > 1) {
            throw StreamDecodeException.of(DecodeFailure.BAD_VALUE, "%s: boolean %d", what, b);
        }
        return b == 1;
    }

    static ResponseCode readCode(ByteBuf in) throws StreamDecodeException {
        int code = readUint16(in, "response code");
        ResponseCode c = ResponseCode.of(code);
        if (c == null) {
            throw StreamDecodeException.of(DecodeFailure.BAD_VALUE, "unknown response code 0x%04x", code);
        }
        return c;
    }

    /**
     * A string that must be there: RabbitMQ reads the length as unsigned, so -1 would announce 65,535 bytes and
     * fail to match ({@code rabbit_stream_core}), as a negative length does here. Bad UTF-8 becomes U+FFFD.
     */
    static String readString(ByteBuf in, String what) throws StreamDecodeException {
        need(in, 2, what);
        int length = in.readShort();
        if (length < 0) {
            throw StreamDecodeException.of(DecodeFailure.BAD_VALUE, "%s of length %d", what, length);
        }
        need(in, length, what);
        String s = length == 0 ? "" : in.toString(in.readerIndex(), length, StandardCharsets.UTF_8);
        in.skipBytes(length);
        return s;
    }

    /** {@code bytes}: int32 length, -1 for null. */
    static Bytes readBytes(ByteBuf in, String what) throws StreamDecodeException {
        need(in, 4, what);
        int length = in.readInt();
        if (length == -1) {
            return null;
        }
        if (length < 0) {
            throw StreamDecodeException.of(DecodeFailure.BAD_VALUE, "%s of length %d", what, length);
        }
        need(in, length, what);
        byte[] bytes = new byte[length];
        in.readBytes(bytes);
        return Bytes.wrap(bytes);
    }

    /** An array's int32 count, refused when {@code count * minItemSize} cannot fit in the bytes left. */
    static int readCount(ByteBuf in, int minItemSize, String what) throws StreamDecodeException {
        need(in, 4, what + " count");
        int count = in.readInt();
        if (count < 0 || (long) count * minItemSize > in.readableBytes()) {
            throw StreamDecodeException.of(DecodeFailure.BAD_VALUE, "%d %s in %d bytes", count, what,
                in.readableBytes());
        }
        return count;
    }

    static List<String> readStrings(ByteBuf in, String what) throws StreamDecodeException {
        int count = readCount(in, 2, what);
        List<String> list = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            list.add(readString(in, what));
        }
        return Collections.unmodifiableList(list);
    }

    /** A map of string keys to string values; a repeated key keeps its last value, as RabbitMQ's maps do. */
    static Map<String, String> readStringMap(ByteBuf in, String what) throws StreamDecodeException {
        int count = readCount(in, 4, what);
        Map<String, String> map = new LinkedHashMap<>(Math.min(count, 64) * 2);
        for (int i = 0; i < count; i++) {
            map.put(readString(in, what + " key"), readString(in, what + " value"));
        }
        return Collections.unmodifiableMap(map);
    }

    /** A map that may be left out entirely when empty (subscribe and resolve offset spec properties, open). */
    static Map<String, String> readOptionalStringMap(ByteBuf in, String what) throws StreamDecodeException {
        return in.isReadable() ? readStringMap(in, what) : Map.of();
    }

    static void writeUint8(ByteBuf out, int value, String what) {
        if (value < 0 || value > 0xff) {
            throw new IllegalArgumentException(what + " out of range: " + value);
        }
        out.writeByte(value);
    }

    static void writeUint16(ByteBuf out, int value, String what) {
        if (value < 0 || value > 0xffff) {
            throw new IllegalArgumentException(what + " out of range: " + value);
        }
        out.writeShort(value);
    }

    static void writeUint32(ByteBuf out, long value, String what) {
        if (value < 0 || value > 0xffff_ffffL) {
            throw new IllegalArgumentException(what + " out of range: " + value);
        }
        out.writeInt((int) value);
    }

    /** int16 length and UTF-8, without an intermediate array. Null has no place outside filter values. */
    static void writeString(ByteBuf out, CharSequence s) {
        if (s == null) {
            throw new IllegalArgumentException("null string");
        }
        int length = ByteBufUtil.utf8Bytes(s);
        if (length > MAX_STRING_LENGTH) {
            throw new IllegalArgumentException("string of " + length + " UTF-8 bytes, at most " + MAX_STRING_LENGTH);
        }
        out.writeShort(length);
        ByteBufUtil.reserveAndWriteUtf8(out, s, length);
    }

    static void writeBytes(ByteBuf out, Bytes b) {
        if (b == null) {
            out.writeInt(-1);
        } else {
            out.writeInt(b.length()).writeBytes(b.array());
        }
    }

    static void writeStrings(ByteBuf out, Collection<String> strings) {
        out.writeInt(strings.size());
        for (String s : strings) {
            writeString(out, s);
        }
    }

    static void writeStringMap(ByteBuf out, Map<String, String> map) {
        out.writeInt(map.size());
        for (Map.Entry<String, String> e : map.entrySet()) {
            writeString(out, e.getKey());
            writeString(out, e.getValue());
        }
    }

    /** Left out when empty, as RabbitMQ and the Java client write it. */
    static void writeOptionalStringMap(ByteBuf out, Map<String, String> map) {
        if (!map.isEmpty()) {
            writeStringMap(out, map);
        }
    }
}
