package io.skiffmq.store.stream;

import io.netty.channel.DefaultFileRegion;
import java.nio.channels.FileChannel;

/**
 * A chunk's bytes in its segment file as a Netty {@link io.netty.channel.FileRegion}: written with
 * {@code sendfile} by Netty's epoll and NIO transports (not over TLS, where the bytes must pass through the JVM).
 * It is a {@link DefaultFileRegion}, so epoll's native {@code sendfile} path takes it; unlike one, releasing it
 * does not close the file, which the segment shares: it releases the segment instead.
 */
final class ChunkFileRegion extends DefaultFileRegion {
    private final Segment segment;

    /** @param segment retained here, released with the region */
    ChunkFileRegion(Segment segment, FileChannel file, long position, long count) {
        super(file, position, count);
        this.segment = segment;
        segment.retain();
    }

    @Override
    protected void deallocate() {
        segment.release();
    }
}
