package io.skiffmq.codec.amqp10;

import io.netty.buffer.ByteBuf;

/**
 * The 8-byte protocol headers of AMQP 1.0 [2.2], [5.2], [5.3]: {@code "AMQP" id 1 0 0}, where the protocol id
 * is 0 for AMQP itself, 2 for TLS and 3 for SASL.
 */
public enum ProtocolHeader {
    AMQP(0),
    TLS(2),
    SASL(3);

    public static final int LENGTH = 8;
    private static final int MAGIC = 'A' << 24 | 'M' << 16 | 'Q' << 8 | 'P';

    private final int id;

    ProtocolHeader(int id) {
        this.id = id;
    }

    public int id() {
        return id;
    }

    public void writeTo(ByteBuf out) {
        out.writeInt(MAGIC);
        out.writeInt(id << 24 | 1 << 16);
    }

    /** True when {@code buf} holds at least 4 readable bytes at {@code index} and they spell {@code AMQP}. */
    static boolean startsAt(ByteBuf buf, int index) {
        return buf.writerIndex() - index >= 4 && buf.getInt(index) == MAGIC;
    }

    /**
     * The header in the 8 bytes at {@code index}.
     *
     * @throws AmqpDecodeException {@link DecodeFailure#BAD_PROTOCOL_HEADER} when they do not start with
     *         {@code AMQP}, {@link DecodeFailure#UNSUPPORTED_PROTOCOL} for another protocol id or version
     */
    static ProtocolHeader read(ByteBuf buf, int index) throws AmqpDecodeException {
        if (buf.getInt(index) != MAGIC) {
            throw AmqpDecodeException.of(DecodeFailure.BAD_PROTOCOL_HEADER, "expected AMQP, got 0x%08x",
                buf.getInt(index));
        }
        int id = buf.getUnsignedByte(index + 4);
        int version = buf.getMedium(index + 5);
        if (version == 0x010000) {
            for (ProtocolHeader header : values()) {
                if (header.id == id) {
                    return header;
                }
            }
        }
        throw AmqpDecodeException.of(DecodeFailure.UNSUPPORTED_PROTOCOL, "protocol id %d version %d.%d.%d", id,
            version >> 16, version >> 8 & 0xff, version & 0xff);
    }
}
