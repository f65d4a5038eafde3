package io.skiffmq.codec.amqp10;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.skiffmq.codec.ByteCopy;

/**
 * Appends AMQP 1.0 encodings at a buffer's writer index, always in the smallest encoding [1.6] (uint0 /
 * smalluint / uint, sym8 when it fits…), and back-fills the size and count of lists and maps.
 *
 * <p>Stateless; safe from any thread.
 */
public final class TypeWriter {
    private TypeWriter() {
    }

    public static void writeNull(ByteBuf out) {
        out.writeByte(FormatCode.NULL);
    }

    public static void writeBoolean(ByteBuf out, boolean value) {
        out.writeByte(value ? FormatCode.BOOLEAN_TRUE : FormatCode.BOOLEAN_FALSE);
    }

    public static void writeUByte(ByteBuf out, int value) {
        out.writeByte(FormatCode.UBYTE);
        out.writeByte(value);
    }

    /** A {@code uint} from the low 32 bits of {@code value}. */
    public static void writeUInt(ByteBuf out, long value) {
        long v = value & 0xffffffffL;
        if (v == 0) {
            out.writeByte(FormatCode.UINT0);
        } else if (v < 256) {
            out.writeShort(FormatCode.SMALLUINT << 8 | (int) v);
        } else {
            out.writeByte(FormatCode.UINT);
            out.writeInt((int) v);
        }
    }

    /** A {@code uint}, or null when {@code value} is negative. */
    public static void writeUIntOrNull(ByteBuf out, long value) {
        if (value < 0) {
            writeNull(out);
        } else {
            writeUInt(out, value);
        }
    }

    /** An {@code ulong} holding the 64 bits of {@code value}. */
    public static void writeULong(ByteBuf out, long value) {
        if (value == 0) {
            out.writeByte(FormatCode.ULONG0);
        } else if (value > 0 && value < 256) {
            out.writeShort(FormatCode.SMALLULONG << 8 | (int) value);
        } else {
            out.writeByte(FormatCode.ULONG);
            out.writeLong(value);
        }
    }

    public static void writeLong(ByteBuf out, long value) {
        if (value >= Byte.MIN_VALUE && value <= Byte.MAX_VALUE) {
            out.writeByte(FormatCode.SMALLLONG);
            out.writeByte((int) value);
        } else {
            out.writeByte(FormatCode.LONG);
            out.writeLong(value);
        }
    }

    /** Writes the descriptor {@code 0x00 0x53 code} of a type defined by AMQP (domain 0, code below 256). */
    public static void writeDescriptor(ByteBuf out, int code) {
        out.writeByte(FormatCode.DESCRIBED);
        out.writeShort(FormatCode.SMALLULONG << 8 | code);
    }

    public static void writeString(ByteBuf out, CharSequence value) {
        writeUtf8(out, value, FormatCode.STR8, FormatCode.STR32);
    }

    public static void writeSymbol(ByteBuf out, CharSequence value) {
        writeUtf8(out, value, FormatCode.SYM8, FormatCode.SYM32);
    }

    private static void writeUtf8(ByteBuf out, CharSequence value, int code8, int code32) {
        int length = ByteBufUtil.utf8Bytes(value);
        if (length < 256) {
            out.writeByte(code8);
            out.writeByte(length);
        } else {
            out.writeByte(code32);
            out.writeInt(length);
        }
        out.writeCharSequence(value, java.nio.charset.StandardCharsets.UTF_8);
    }

    /** A {@code binary} holding {@code length} bytes of {@code src} from {@code index}. */
    public static void writeBinary(ByteBuf out, ByteBuf src, int index, int length) {
        if (length < 256) {
            out.writeByte(FormatCode.VBIN8);
            out.writeByte(length);
        } else {
            out.writeByte(FormatCode.VBIN32);
            out.writeInt(length);
        }
        copy(out, src, index, length);
    }

    /** Runs up to this many bytes are copied by {@link #copy} without garbage: {@link ByteCopy#SHORT}. */
    static final int SHORT_COPY = ByteCopy.SHORT;

    /** Appends {@code length} bytes of {@code src} from {@code index}, allocating nothing when the run is short. */
    static void copy(ByteBuf out, ByteBuf src, int index, int length) {
        ByteCopy.copy(out, src, index, length);
    }

    /**
     * Starts a list or map whose encoded elements take at most {@code maxContentBytes}: writes the constructor
     * and a placeholder size and count, and returns the index {@link #endCompound} needs.
     *
     * @param map true for a map, false for a list
     */
    public static int beginCompound(ByteBuf out, boolean map, int maxContentBytes) {
        int start = out.writerIndex();
        if (maxContentBytes + 1 <= 255) {
            out.writeByte(map ? FormatCode.MAP8 : FormatCode.LIST8);
            out.writeShort(0);
        } else {
            out.writeByte(map ? FormatCode.MAP32 : FormatCode.LIST32);
            out.writeLong(0);
        }
        return start;
    }

    /** Back-fills size and count of the list or map {@link #beginCompound} started at {@code start}. */
    public static void endCompound(ByteBuf out, int start, int count) {
        int code = out.getUnsignedByte(start);
        int end = out.writerIndex();
        if (FormatCode.hasOneByteSize(code)) {
            int size = end - start - 2;
            if (size > 255 || count > 255) {
                throw new IllegalStateException("list8/map8 content " + size + " bytes, " + count + " elements");
            }
            out.setByte(start + 1, size);
            out.setByte(start + 2, count);
        } else {
            out.setInt(start + 1, end - start - 5);
            out.setInt(start + 5, count);
        }
    }
}
