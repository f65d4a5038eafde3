package io.skiffmq.codec.amqp10;

import io.netty.buffer.ByteBuf;
import java.util.Date;
import java.util.UUID;
import org.apache.qpid.proton.amqp.Binary;
import org.apache.qpid.proton.amqp.Decimal128;
import org.apache.qpid.proton.amqp.Decimal32;
import org.apache.qpid.proton.amqp.Decimal64;
import org.apache.qpid.proton.amqp.Symbol;
import org.apache.qpid.proton.amqp.UnsignedByte;
import org.apache.qpid.proton.amqp.UnsignedInteger;
import org.apache.qpid.proton.amqp.UnsignedLong;
import org.apache.qpid.proton.amqp.UnsignedShort;

/**
 * Decodes one AMQP value into the Java object proton-j would produce for it ({@code UnsignedInteger},
 * {@code Symbol}, {@code Binary}, {@code Date} for timestamps…), so code that reads message fields sees the
 * same types whichever decoder ran. Primitive values are read here directly; lists, maps, arrays and described
 * values go through {@link ProtonCodec} after validation.
 *
 * <p>Stateless; safe from any thread.
 */
public final class ValueDecoder {
    private ValueDecoder() {
    }

    /** The value starting at {@code index}, which must end at or before {@code limit}. */
    public static Object decode(ByteBuf buf, int index, int limit) throws AmqpDecodeException {
        int code = TypeReader.formatCode(buf, index, limit);
        int data = index + 1;
        switch (code) {
            case FormatCode.NULL:
                return null;
            case FormatCode.BOOLEAN_TRUE, FormatCode.BOOLEAN_FALSE, FormatCode.BOOLEAN:
                return TypeReader.readBooleanOr(buf, index, limit, false);
            case FormatCode.UINT0, FormatCode.SMALLUINT, FormatCode.UINT:
                return UnsignedInteger.valueOf(TypeReader.readUIntOrNull(buf, index, limit));
            case FormatCode.ULONG0, FormatCode.SMALLULONG, FormatCode.ULONG:
                return UnsignedLong.valueOf(TypeReader.readULongOr(buf, index, limit, 0));
            case FormatCode.STR8, FormatCode.STR32:
                return TypeReader.readStringOrNull(buf, index, limit);
            case FormatCode.SYM8, FormatCode.SYM32:
                return Symbol.valueOf(TypeReader.readSymbolOrNull(buf, index, limit));
            case FormatCode.VBIN8, FormatCode.VBIN32: {
                int end = TypeReader.valueEnd(buf, index, limit);
                int start = TypeReader.variableContentStart(buf, index);
                byte[] bytes = new byte[end - start];
                buf.getBytes(start, bytes);
                return new Binary(bytes);
            }
            default:
                break;
        }
        int width = FormatCode.fixedWidth(code);
        if (width < 0 || code == FormatCode.LIST0) {
            // list, map, array, described value or an unknown code: valueEnd rejects the last
            return ProtonCodec.current().decode(buf, index, TypeReader.valueEnd(buf, index, limit));
        }
        TypeReader.require(data, width, limit);
        switch (code) {
            case FormatCode.UBYTE:
                return UnsignedByte.valueOf(buf.getByte(data));
            case FormatCode.USHORT:
                return UnsignedShort.valueOf(buf.getShort(data));
            case FormatCode.BYTE:
                return buf.getByte(data);
            case FormatCode.SHORT:
                return buf.getShort(data);
            case FormatCode.SMALLINT:
                return (int) buf.getByte(data);
            case FormatCode.INT:
                return buf.getInt(data);
            case FormatCode.SMALLLONG:
                return (long) buf.getByte(data);
            case FormatCode.LONG:
                return buf.getLong(data);
            case FormatCode.FLOAT:
                return buf.getFloat(data);
            case FormatCode.DOUBLE:
                return buf.getDouble(data);
            case FormatCode.CHAR:
                // proton-j represents the 32-bit code point as a Java char
                return (char) (buf.getInt(data) & 0xffff);
            case FormatCode.TIMESTAMP:
                return new Date(buf.getLong(data));
            case FormatCode.UUID:
                return new UUID(buf.getLong(data), buf.getLong(data + 8));
            case FormatCode.DECIMAL32:
                return new Decimal32(buf.getInt(data));
            case FormatCode.DECIMAL64:
                return new Decimal64(buf.getLong(data));
            case FormatCode.DECIMAL128:
                return new Decimal128(buf.getLong(data), buf.getLong(data + 8));
            default:
                throw AmqpDecodeException.of(DecodeFailure.UNKNOWN_FORMAT_CODE, "format code 0x%02x at %d", code, index);
        }
    }
}
