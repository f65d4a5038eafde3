package io.skiffmq.codec.amqp10;

import static io.skiffmq.codec.amqp10.DecodeFailure.BAD_COUNT;
import static io.skiffmq.codec.amqp10.DecodeFailure.BAD_SIZE;
import static io.skiffmq.codec.amqp10.DecodeFailure.NESTING_TOO_DEEP;
import static io.skiffmq.codec.amqp10.DecodeFailure.TRAILING_BYTES;
import static io.skiffmq.codec.amqp10.DecodeFailure.TRUNCATED;
import static io.skiffmq.codec.amqp10.DecodeFailure.UNEXPECTED_TYPE;
import static io.skiffmq.codec.amqp10.DecodeFailure.UNKNOWN_FORMAT_CODE;

import io.netty.buffer.ByteBuf;
import java.nio.charset.StandardCharsets;

/**
 * Bounds-checked reads of AMQP 1.0 encoded values at absolute buffer indexes, never past {@code limit}
 * (exclusive). Nothing here changes reader or writer indexes, allocates (except the String and Symbol
 * readers), or throws anything but {@link AmqpDecodeException}.
 *
 * <p>Two ways to step over a value: {@link #valueEnd} trusts the size fields of lists, maps and arrays and
 * skips them in O(1), which is how message sections are indexed; {@link #validate} walks every nested
 * element, which is done before proton-j is handed a range so that it never sees a malformed or
 * pathologically nested value.
 *
 * <p>Stateless; safe from any thread.
 */
public final class TypeReader {
    /** How deep described values and compound values may nest. Performatives and properties need 3-4. */
    public static final int MAX_NESTING = 32;

    private TypeReader() {
    }

    /** The format code at {@code index}, checked to be inside the range. */
    public static int formatCode(ByteBuf buf, int index, int limit) throws AmqpDecodeException {
        require(index, 1, limit);
        return buf.getUnsignedByte(index);
    }

    /** Index just past the value (constructor, descriptor if any, and data) starting at {@code index}. */
    public static int valueEnd(ByteBuf buf, int index, int limit) throws AmqpDecodeException {
        return valueEnd(buf, index, limit, 0);
    }

    private static int valueEnd(ByteBuf buf, int index, int limit, int depth) throws AmqpDecodeException {
        int code = formatCode(buf, index, limit);
        if (code == FormatCode.DESCRIBED) {
            checkDepth(depth, index);
            int descriptorEnd = valueEnd(buf, index + 1, limit, depth + 1);
            return valueEnd(buf, descriptorEnd, limit, depth + 1);
        }
        return dataEnd(buf, code, index + 1, limit);
    }

    /** Index just past the data of a value with constructor {@code code} whose data starts at {@code data}. */
    static int dataEnd(ByteBuf buf, int code, int data, int limit) throws AmqpDecodeException {
        int width = FormatCode.fixedWidth(code);
        if (width >= 0) {
            require(data, width, limit);
            return data + width;
        }
        if (width == -2) {
            throw AmqpDecodeException.of(UNKNOWN_FORMAT_CODE, "format code 0x%02x at %d", code, data - 1);
        }
        long size;
        int sizeWidth;
        if (FormatCode.hasOneByteSize(code)) {
            require(data, 1, limit);
            size = buf.getUnsignedByte(data);
            sizeWidth = 1;
        } else {
            require(data, 4, limit);
            size = buf.getUnsignedInt(data);
            sizeWidth = 4;
        }
        long end = (long) data + sizeWidth + size;
        if (end > limit) {
            throw AmqpDecodeException.of(BAD_SIZE, "size %d of 0x%02x at %d runs past %d", size, code, data - 1, limit);
        }
        return (int) end;
    }

    /**
     * Index just past the value at {@code index}, after checking every nested value: sizes, counts, format
     * codes, nesting depth (at most {@link #MAX_NESTING}) and that each list, map and array is filled exactly.
     */
    public static int validate(ByteBuf buf, int index, int limit) throws AmqpDecodeException {
        return validate(buf, index, limit, 0);
    }

    private static int validate(ByteBuf buf, int index, int limit, int depth) throws AmqpDecodeException {
        int code = formatCode(buf, index, limit);
        if (code == FormatCode.DESCRIBED) {
            checkDepth(depth, index);
            int descriptorEnd = validateDescriptor(buf, index + 1, limit, depth + 1);
            return validate(buf, descriptorEnd, limit, depth + 1);
        }
        return validateData(buf, code, index + 1, limit, depth);
    }

    private static int validateDescriptor(ByteBuf buf, int index, int limit, int depth) throws AmqpDecodeException {
        int code = formatCode(buf, index, limit);
        switch (code) {
            case FormatCode.SMALLULONG, FormatCode.ULONG, FormatCode.ULONG0, FormatCode.SYM8, FormatCode.SYM32:
                return dataEnd(buf, code, index + 1, limit);
            default:
                // [1.3] a descriptor is a symbol or an ulong (anything else is reserved)
                throw AmqpDecodeException.of(UNEXPECTED_TYPE, "descriptor of type 0x%02x at %d", code, index);
        }
    }

    private static int validateData(ByteBuf buf, int code, int data, int limit, int depth) throws AmqpDecodeException {
        int end = dataEnd(buf, code, data, limit);
        boolean array = FormatCode.isArray(code);
        if (!array && !FormatCode.isMap(code) && code != FormatCode.LIST8 && code != FormatCode.LIST32) {
            return end;
        }
        checkDepth(depth, data - 1);
        int sizeWidth = FormatCode.hasOneByteSize(code) ? 1 : 4;
        int contentStart = data + sizeWidth + sizeWidth;
        if (contentStart > end) {
            throw AmqpDecodeException.of(BAD_SIZE, "size of 0x%02x at %d leaves no room for its count", code, data - 1);
        }
        long count = sizeWidth == 1 ? buf.getUnsignedByte(data + 1) : buf.getUnsignedInt(data + 4);
        // Each element takes at least one byte (array elements of an empty type: treated the same, which
        // bounds the objects a decoder would create by the bytes received).
        if (count > end - contentStart) {
            throw AmqpDecodeException.of(BAD_COUNT, "count %d of 0x%02x at %d exceeds its %d bytes",
                count, code, data - 1, end - contentStart);
        }
        if (FormatCode.isMap(code) && (count & 1) != 0) {
            throw AmqpDecodeException.of(BAD_COUNT, "odd count %d of map at %d", count, data - 1);
        }
        int position = contentStart;
        if (array) {
            position = validateArrayElements(buf, position, end, (int) count, depth + 1);
        } else {
            for (int i = 0; i < count; i++) {
                position = validate(buf, position, end, depth + 1);
            }
        }
        if (position != end) {
            throw AmqpDecodeException.of(TRAILING_BYTES, "%d bytes after the last element of 0x%02x at %d",
                end - position, code, data - 1);
        }
        return end;
    }

    private static int validateArrayElements(ByteBuf buf, int position, int end, int count, int depth)
            throws AmqpDecodeException {
        int code = formatCode(buf, position, end);
        position++;
        if (code == FormatCode.DESCRIBED) {
            position = validateDescriptor(buf, position, end, depth);
            code = formatCode(buf, position, end);
            position++;
            if (code == FormatCode.DESCRIBED) {
                throw AmqpDecodeException.of(UNEXPECTED_TYPE, "array element constructor nests descriptors at %d",
                    position - 1);
            }
        }
        for (int i = 0; i < count; i++) {
            position = validateData(buf, code, position, end, depth);
        }
        return position;
    }

    /** Element count of the list at {@code index} (list0, list8 or list32); checked against its size. */
    public static int listCount(ByteBuf buf, int index, int limit) throws AmqpDecodeException {
        int code = formatCode(buf, index, limit);
        if (code == FormatCode.LIST0) {
            return 0;
        }
        if (code != FormatCode.LIST8 && code != FormatCode.LIST32) {
            throw AmqpDecodeException.of(UNEXPECTED_TYPE, "expected a list at %d, found 0x%02x", index, code);
        }
        return compoundCount(buf, code, index, limit);
    }

    /** Element count (keys plus values) of the map at {@code index}; checked against its size. */
    public static int mapCount(ByteBuf buf, int index, int limit) throws AmqpDecodeException {
        int code = formatCode(buf, index, limit);
        if (!FormatCode.isMap(code)) {
            throw AmqpDecodeException.of(UNEXPECTED_TYPE, "expected a map at %d, found 0x%02x", index, code);
        }
        int count = compoundCount(buf, code, index, limit);
        if ((count & 1) != 0) {
            throw AmqpDecodeException.of(BAD_COUNT, "odd count %d of map at %d", count, index);
        }
        return count;
    }

    private static int compoundCount(ByteBuf buf, int code, int index, int limit) throws AmqpDecodeException {
        int end = dataEnd(buf, code, index + 1, limit);
        boolean small = FormatCode.hasOneByteSize(code);
        int contentStart = index + (small ? 3 : 9);
        if (contentStart > end) {
            throw AmqpDecodeException.of(BAD_SIZE, "size of 0x%02x at %d leaves no room for its count", code, index);
        }
        long count = small ? buf.getUnsignedByte(index + 2) : buf.getUnsignedInt(index + 5);
        if (count > end - contentStart) {
            throw AmqpDecodeException.of(BAD_COUNT, "count %d of 0x%02x at %d exceeds its %d bytes",
                count, code, index, end - contentStart);
        }
        return (int) count;
    }

    /** Index of the first element of the list or map at {@code index} (for list0: the index after it). */
    public static int compoundContentStart(ByteBuf buf, int index) {
        int code = buf.getUnsignedByte(index);
        if (code == FormatCode.LIST0) {
            return index + 1;
        }
        return index + (FormatCode.hasOneByteSize(code) ? 3 : 9);
    }

    /** True when the value at {@code index} is an encoded null. */
    public static boolean isNull(ByteBuf buf, int index, int limit) throws AmqpDecodeException {
        return formatCode(buf, index, limit) == FormatCode.NULL;
    }

    /** A {@code uint} (or a {@code sequence-no}, {@code handle}, {@code milliseconds}); -1 when null. */
    public static long readUIntOrNull(ByteBuf buf, int index, int limit) throws AmqpDecodeException {
        int code = formatCode(buf, index, limit);
        switch (code) {
            case FormatCode.NULL:
                return -1;
            case FormatCode.UINT0:
                return 0;
            case FormatCode.SMALLUINT:
                require(index + 1, 1, limit);
                return buf.getUnsignedByte(index + 1);
            case FormatCode.UINT:
                require(index + 1, 4, limit);
                return buf.getUnsignedInt(index + 1);
            default:
                throw typeError("uint", code, index);
        }
    }

    /**
     * An {@code ulong} as a signed long holding the same 64 bits; {@code nullValue} when null. Callers that
     * need the full unsigned range (descriptors, message ids) compare with {@link Long#compareUnsigned}.
     */
    public static long readULongOr(ByteBuf buf, int index, int limit, long nullValue) throws AmqpDecodeException {
        int code = formatCode(buf, index, limit);
        switch (code) {
            case FormatCode.NULL:
                return nullValue;
            case FormatCode.ULONG0:
                return 0;
            case FormatCode.SMALLULONG:
                require(index + 1, 1, limit);
                return buf.getUnsignedByte(index + 1);
            case FormatCode.ULONG:
                require(index + 1, 8, limit);
                return buf.getLong(index + 1);
            default:
                throw typeError("ulong", code, index);
        }
    }

    /** A {@code boolean}; {@code nullValue} when null. */
    public static boolean readBooleanOr(ByteBuf buf, int index, int limit, boolean nullValue)
            throws AmqpDecodeException {
        int code = formatCode(buf, index, limit);
        switch (code) {
            case FormatCode.NULL:
                return nullValue;
            case FormatCode.BOOLEAN_TRUE:
                return true;
            case FormatCode.BOOLEAN_FALSE:
                return false;
            case FormatCode.BOOLEAN:
                require(index + 1, 1, limit);
                int value = buf.getUnsignedByte(index + 1);
                if (value > 1) {
                    throw AmqpDecodeException.of(UNEXPECTED_TYPE, "boolean byte 0x%02x at %d", value, index);
                }
                return value == 1;
            default:
                throw typeError("boolean", code, index);
        }
    }

    /** A {@code ubyte}; -1 when null. */
    public static int readUByteOrNull(ByteBuf buf, int index, int limit) throws AmqpDecodeException {
        int code = formatCode(buf, index, limit);
        if (code == FormatCode.NULL) {
            return -1;
        }
        if (code != FormatCode.UBYTE) {
            throw typeError("ubyte", code, index);
        }
        require(index + 1, 1, limit);
        return buf.getUnsignedByte(index + 1);
    }

    /** A {@code timestamp} in milliseconds since the epoch; {@link Long#MIN_VALUE} when null. */
    public static long readTimestampOrNull(ByteBuf buf, int index, int limit) throws AmqpDecodeException {
        int code = formatCode(buf, index, limit);
        if (code == FormatCode.NULL) {
            return Long.MIN_VALUE;
        }
        if (code != FormatCode.TIMESTAMP) {
            throw typeError("timestamp", code, index);
        }
        require(index + 1, 8, limit);
        return buf.getLong(index + 1);
    }

    /** A {@code string}; null when null. Invalid UTF-8 decodes to replacement characters. */
    public static String readStringOrNull(ByteBuf buf, int index, int limit) throws AmqpDecodeException {
        return readUtf8OrNull(buf, index, limit, FormatCode.STR8, FormatCode.STR32, "string");
    }

    /** A {@code symbol} as its String; null when null. */
    public static String readSymbolOrNull(ByteBuf buf, int index, int limit) throws AmqpDecodeException {
        return readUtf8OrNull(buf, index, limit, FormatCode.SYM8, FormatCode.SYM32, "symbol");
    }

    private static String readUtf8OrNull(ByteBuf buf, int index, int limit, int code8, int code32, String type)
            throws AmqpDecodeException {
        int code = formatCode(buf, index, limit);
        if (code == FormatCode.NULL) {
            return null;
        }
        if (code != code8 && code != code32) {
            throw typeError(type, code, index);
        }
        int end = dataEnd(buf, code, index + 1, limit);
        int start = variableContentStart(buf, index);
        return buf.toString(start, end - start, StandardCharsets.UTF_8);
    }

    /**
     * Start of the bytes of the binary, string or symbol at {@code index}; the value ends at
     * {@link #valueEnd}. The caller has checked the format code.
     */
    public static int variableContentStart(ByteBuf buf, int index) {
        return index + (FormatCode.hasOneByteSize(buf.getUnsignedByte(index)) ? 2 : 5);
    }

    /**
     * True when the string or symbol at {@code index} (format code {@code code}, already checked) holds
     * exactly the UTF-8 encoding of {@code key}. Compares without allocating.
     */
    static boolean utf8Equals(ByteBuf buf, int code, int index, int limit, CharSequence key)
            throws AmqpDecodeException {
        int end = dataEnd(buf, code, index + 1, limit);
        int position = variableContentStart(buf, index);
        int length = key.length();
        for (int i = 0; i < length; i++) {
            int c = key.charAt(i);
            if (c < 0x80) {
                if (position >= end || buf.getByte(position++) != c) {
                    return false;
                }
                continue;
            }
            int cp = c;
            if (Character.isHighSurrogate(key.charAt(i)) && i + 1 < length
                    && Character.isLowSurrogate(key.charAt(i + 1))) {
                cp = Character.toCodePoint(key.charAt(i), key.charAt(++i));
            }
            int bytes = cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
            if (end - position < bytes) {
                return false;
            }
            int first = bytes == 2 ? 0xc0 | cp >> 6 : bytes == 3 ? 0xe0 | cp >> 12 : 0xf0 | cp >> 18;
            if ((buf.getByte(position++) & 0xff) != first) {
                return false;
            }
            for (int shift = (bytes - 2) * 6; shift >= 0; shift -= 6) {
                if ((buf.getByte(position++) & 0xff) != (0x80 | (cp >> shift & 0x3f))) {
                    return false;
                }
            }
        }
        return position == end;
    }

    static void require(int index, int width, int limit) throws AmqpDecodeException {
        if (index < 0 || width > limit - index) {
            throw AmqpDecodeException.of(TRUNCATED, "%d bytes needed at %d, only %d available",
                width, index, Math.max(0, limit - index));
        }
    }

    private static void checkDepth(int depth, int index) throws AmqpDecodeException {
        if (depth >= MAX_NESTING) {
            throw AmqpDecodeException.of(NESTING_TOO_DEEP, "more than %d nested values at %d", MAX_NESTING, index);
        }
    }

    static AmqpDecodeException typeError(String expected, int code, int index) {
        return AmqpDecodeException.of(UNEXPECTED_TYPE, "expected %s at %d, found 0x%02x", expected, index, code);
    }
}
