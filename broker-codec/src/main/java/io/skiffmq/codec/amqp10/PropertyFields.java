package io.skiffmq.codec.amqp10;

import io.netty.buffer.ByteBuf;
import org.apache.qpid.proton.amqp.Binary;

/**
 * Reads the fields of a message's properties list [3.2.4] where they lie in the buffer: where field N starts, and
 * the fields whose types a plain {@link TypeReader} read does not check ({@code message-id} and
 * {@code correlation-id}, {@code user-id}). Stateless: {@link MessageSections} says where the list is and where its
 * section ends, and caches nothing of it.
 */
final class PropertyFields {
    private PropertyFields() {
    }

    /** Index of field {@code field} of the list at {@code value}, or -1 when the list is shorter. */
    static int position(ByteBuf buf, int value, int limit, int field) throws AmqpDecodeException {
        if (field >= TypeReader.listCount(buf, value, limit)) {
            return -1;
        }
        int position = TypeReader.compoundContentStart(buf, value);
        for (int i = 0; i < field; i++) {
            position = TypeReader.valueEnd(buf, position, limit);
        }
        return position;
    }

    /**
     * A {@code message-id} or {@code correlation-id}: an {@code UnsignedLong}, {@code UUID}, {@code Binary} or
     * {@code String}, or null.
     */
    static Object messageId(ByteBuf buf, int index, int limit) throws AmqpDecodeException {
        int code = buf.getUnsignedByte(index);
        switch (code) {
            // [3.2.11]-[3.2.15]: ulong, uuid, binary or string
            case FormatCode.NULL, FormatCode.ULONG0, FormatCode.SMALLULONG, FormatCode.ULONG, FormatCode.UUID,
                 FormatCode.VBIN8, FormatCode.VBIN32, FormatCode.STR8, FormatCode.STR32:
                return ValueDecoder.decode(buf, index, limit);
            default:
                throw TypeReader.typeError("message-id (ulong, uuid, binary or string)", code, index);
        }
    }

    /** A {@code binary} field ({@code user-id}), or null. */
    static Binary binary(ByteBuf buf, int index, int limit) throws AmqpDecodeException {
        int code = buf.getUnsignedByte(index);
        if (code != FormatCode.NULL && code != FormatCode.VBIN8 && code != FormatCode.VBIN32) {
            throw TypeReader.typeError("binary", code, index);
        }
        return (Binary) ValueDecoder.decode(buf, index, limit);
    }
}
