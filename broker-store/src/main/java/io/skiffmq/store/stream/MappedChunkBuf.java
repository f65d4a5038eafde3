package io.skiffmq.store.stream;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.UnpooledByteBufAllocator;
import io.netty.buffer.UnpooledDirectByteBuf;
import io.netty.buffer.UnpooledUnsafeDirectByteBuf;
import io.netty.util.internal.PlatformDependent;
import java.nio.ByteBuffer;

/**
 * A slice of a segment's mapped file as a Netty buffer: no copy, and the segment's mappings stay in place until
 * it is released, even when retention deletes the segment meanwhile. Read-only by contract (the mapping is
 * writable only because Netty refuses read-only ones): writing into it would change the log.
 *
 * <p>Read through {@code Unsafe} where Netty has it, as {@code Unpooled.wrappedBuffer} chooses: a reader that walks a
 * message byte by byte (the 0-9-1 conversion of a stream's messages) would otherwise pay {@code ByteBuffer.get}'s
 * checks on every byte.
 */
final class MappedChunkBuf {
    private MappedChunkBuf() {
    }

    /** @param segment retained here, released with the buffer */
    static ByteBuf of(Segment segment, ByteBuffer slice) {
        return PlatformDependent.hasUnsafe() ? new Unsafe(segment, slice) : new Checked(segment, slice);
    }

    private static final class Unsafe extends UnpooledUnsafeDirectByteBuf {
        private final Segment segment;

        Unsafe(Segment segment, ByteBuffer slice) {
            super(UnpooledByteBufAllocator.DEFAULT, slice, slice.remaining());
            this.segment = segment;
            segment.retain();
        }

        @Override
        protected void deallocate() {
            super.deallocate();
            segment.release();
        }
    }

    private static final class Checked extends UnpooledDirectByteBuf {
        private final Segment segment;

        Checked(Segment segment, ByteBuffer slice) {
            super(UnpooledByteBufAllocator.DEFAULT, slice, slice.remaining());
            this.segment = segment;
            segment.retain();
        }

        @Override
        protected void deallocate() {
            super.deallocate();
            segment.release();
        }
    }
}
