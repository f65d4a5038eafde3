package io.skiffmq.store.stream;

import io.netty.buffer.UnpooledByteBufAllocator;
import io.netty.buffer.UnpooledDirectByteBuf;
import java.nio.ByteBuffer;

/**
 * A slice of a segment's mapped file as a Netty buffer: no copy, and the segment's mappings stay in place until
 * it is released, even when retention deletes the segment meanwhile. Read-only by contract (the mapping is
 * writable only because Netty refuses read-only ones): writing into it would change the log.
 */
final class MappedChunkBuf extends UnpooledDirectByteBuf {
    private final Segment segment;

    /** @param segment retained here, released with the buffer */
    MappedChunkBuf(Segment segment, ByteBuffer slice) {
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
