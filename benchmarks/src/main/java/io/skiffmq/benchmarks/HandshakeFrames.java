package io.skiffmq.benchmarks;

import io.netty.buffer.ByteBuf;

/**
 * Steps over what a broker writes during an AMQP 1.0 handshake, without decoding it: 8-byte protocol headers
 * ({@code AMQP…}) and size-prefixed frames. For the connection benchmarks, which only count frames.
 */
final class HandshakeFrames {
    /** Nothing whole is left to step over. */
    static final int INCOMPLETE = -1;
    static final int HEADER = 0;
    static final int FRAME = 1;

    private HandshakeFrames() {
    }

    /** Skips the next header or frame in {@code in} and says which it was, or leaves {@code in} as it is. */
    static int skip(ByteBuf in) {
        if (in.readableBytes() < 8) {
            return INCOMPLETE;
        }
        boolean header = in.getByte(in.readerIndex()) == 'A';
        int length = header ? 8 : in.getInt(in.readerIndex());
        if (in.readableBytes() < length) {
            return INCOMPLETE;
        }
        in.skipBytes(length);
        return header ? HEADER : FRAME;
    }
}
