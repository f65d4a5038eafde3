package io.skiffmq.codec;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.CompositeByteBuf;
import io.netty.handler.codec.ByteToMessageDecoder;

/**
 * How the frame decoders gather a connection's reads: copied together, as Netty's {@link
 * ByteToMessageDecoder#MERGE_CUMULATOR} does, while what is left over from the last read is small; composed without
 * a copy once it is a large part of a frame.
 *
 * <p>The decoders emit retained slices of what they gathered, so the gathered buffer is shared, and the merge
 * cumulator copies it into a new buffer at every read that does not fit. With small frames what is left over is a
 * few bytes. With 128 KiB frames (a 16 MiB message is 128 of them) it is most of a frame, copied again at each read:
 * 14 % of the broker's CPU in a 16 MiB run (docs/benchmarks.md). Composed, those bytes are copied by nobody.
 */
public final class FrameCumulator implements ByteToMessageDecoder.Cumulator {
    /** Left over from the last read past this many bytes, a read is composed with it rather than copied to it. */
    public static final int COMPOSE_FROM = 16 << 10;
    public static final FrameCumulator INSTANCE = new FrameCumulator();

    private FrameCumulator() {
    }

    @Override
    public ByteBuf cumulate(ByteBufAllocator alloc, ByteBuf cumulation, ByteBuf in) {
        if (cumulation.readableBytes() >= COMPOSE_FROM && cumulation != in) {
            return ByteToMessageDecoder.COMPOSITE_CUMULATOR.cumulate(alloc, cumulation, in);
        }
        if (cumulation instanceof CompositeByteBuf && cumulation.isReadable()) {
            // the tail of a composed frame: copied with the read into one buffer, so small frames are cut from a
            // plain one again (the merge cumulator would grow the composite a component at a time)
            try {
                ByteBuf merged = alloc.buffer(cumulation.readableBytes() + in.readableBytes());
                merged.writeBytes(cumulation).writeBytes(in);
                return merged;
            } finally {
                cumulation.release();
                in.release();
            }
        }
        return ByteToMessageDecoder.MERGE_CUMULATOR.cumulate(alloc, cumulation, in);
    }
}
