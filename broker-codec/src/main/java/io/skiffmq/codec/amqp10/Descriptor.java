package io.skiffmq.codec.amqp10;

import io.netty.buffer.ByteBuf;

/**
 * Reads the descriptor of a described value [1.3]: an {@code ulong} whose high 32 bits are the domain (0 for
 * AMQP) or a symbol. Only AMQP-defined descriptors matter to the broker, so both forms reduce to the AMQP code
 * (below 256) or -1 for anything else.
 */
final class Descriptor {
    private Descriptor() {
    }

    /**
     * The AMQP descriptor code of the described value at {@code index}, or -1 when it is described by anything
     * AMQP does not define. Symbolic descriptors are resolved through {@code symbols}, a function of the symbol.
     *
     * @throws AmqpDecodeException when {@code index} does not start a described value
     */
    static long code(ByteBuf buf, int index, int limit, SymbolTable symbols) throws AmqpDecodeException {
        if (isSmallUlong(buf, index, limit)) {
            return buf.getUnsignedByte(index + 2);
        }
        int constructor = TypeReader.formatCode(buf, index, limit);
        if (constructor != FormatCode.DESCRIBED) {
            throw AmqpDecodeException.of(DecodeFailure.UNEXPECTED_TYPE,
                "expected a described value at %d, found 0x%02x", index, constructor);
        }
        int code = TypeReader.formatCode(buf, index + 1, limit);
        switch (code) {
            case FormatCode.SMALLULONG, FormatCode.ULONG, FormatCode.ULONG0: {
                long value = TypeReader.readULongOr(buf, index + 1, limit, -1);
                return value >= 0 && value < 256 ? value : -1;
            }
            case FormatCode.SYM8, FormatCode.SYM32:
                return symbols.lookup(buf, code, index + 1, limit);
            default:
                throw AmqpDecodeException.of(DecodeFailure.UNEXPECTED_TYPE, "descriptor of type 0x%02x at %d",
                    code, index + 1);
        }
    }

    /** Index just past the descriptor of the described value at {@code index}. */
    static int end(ByteBuf buf, int index, int limit) throws AmqpDecodeException {
        return isSmallUlong(buf, index, limit) ? index + 3 : TypeReader.valueEnd(buf, index + 1, limit);
    }

    /** {@code 0x00 0x53 code}: how nearly every peer encodes AMQP's own descriptors, read in one go. */
    private static boolean isSmallUlong(ByteBuf buf, int index, int limit) {
        return index >= 0 && limit - index >= 3 && buf.getShort(index) == (FormatCode.DESCRIBED << 8 | FormatCode.SMALLULONG);
    }

    /** Maps a symbolic descriptor to its numeric code, -1 when unknown. */
    @FunctionalInterface
    interface SymbolTable {
        int lookup(ByteBuf buf, int code, int index, int limit) throws AmqpDecodeException;
    }

    /** A table resolving {@code names[i]} to {@code firstCode + i}, comparing bytes without allocating. */
    static SymbolTable symbols(int firstCode, String... names) {
        return (buf, code, index, limit) -> {
            for (int i = 0; i < names.length; i++) {
                if (TypeReader.utf8Equals(buf, code, index, limit, names[i])) {
                    return firstCode + i;
                }
            }
            return -1;
        };
    }
}
