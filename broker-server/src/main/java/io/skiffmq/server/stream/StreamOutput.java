package io.skiffmq.server.stream;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.FileRegion;
import io.skiffmq.codec.stream.Command;
import io.skiffmq.codec.stream.StreamFrameWriter;
import io.skiffmq.store.stream.StreamChunk;

/**
 * The one writer of a stream protocol connection. Small frames (responses, confirms, heartbeats, deliver headers)
 * are appended to one buffer, which goes to the socket with one write when the connection's batch of work is done
 * ({@link #flush}), or sooner once {@link #FLUSH_THRESHOLD} bytes wait. A delivered chunk is never copied: after its
 * deliver header (in the buffer) go the chunk's 48 header bytes and its data as buffers over the log's mapped file,
 * or, for large data on plain TCP, as a {@link FileRegion} the transport sends with {@code sendfile}. Owned by the
 * connection's event loop.
 */
final class StreamOutput {
    private static final int BUFFER_SIZE = 16 * 1024;
    /**
     * Past this many bytes written since the last flush, they are flushed: a long batch starts reaching the socket
     * before it ends, and what waits unflushed stays near the channel's write-buffer high-water mark.
     */
    static final int FLUSH_THRESHOLD = 64 * 1024;
    /**
     * Chunk data from this size on goes by {@code sendfile} on plain TCP: one system call per chunk, which pays off
     * only for large chunks; smaller ones go as mapped buffers, gathered with the frames around them into one
     * {@code writev}.
     */
    static final int SENDFILE_MIN_BYTES = 64 * 1024;

    private final ChannelHandlerContext ctx;
    /** False over TLS: the bytes must pass through the TLS handler, so no file regions. */
    private final boolean sendfile;
    private ByteBuf buffer;
    private boolean flushPending;
    private int unflushed;

    StreamOutput(ChannelHandlerContext ctx, boolean sendfile) {
        this.ctx = ctx;
        this.sendfile = sendfile;
    }

    void command(Command command) {
        StreamFrameWriter.writeCommand(buffer(), command);
        afterAppend();
    }

    void heartbeat() {
        StreamFrameWriter.writeHeartbeat(buffer());
        afterAppend();
    }

    /** The buffer to append a frame to (with the codec's writers); {@link #appended} after. */
    ByteBuf buffer() {
        if (buffer == null) {
            buffer = ctx.alloc().ioBuffer(BUFFER_SIZE);
        }
        return buffer;
    }

    /** A frame was appended to {@link #buffer()}. */
    void appended() {
        afterAppend();
    }

    /**
     * A {@code deliver} of {@code chunk} as stored, for subscription {@code subscriptionId}: v1, or v2 with the
     * committed chunk id. Its bytes are not copied; the chunk view may be reused once this returns.
     *
     * @return the bytes written
     */
    int deliver(int subscriptionId, int version, long committedChunkId, StreamChunk chunk) {
        int length = chunk.deliveredLength();
        if (version == 2) {
            StreamFrameWriter.writeDeliverHeader(buffer(), subscriptionId, committedChunkId, length);
        } else {
            StreamFrameWriter.writeDeliverHeader(buffer(), subscriptionId, length);
        }
        writeBuffer();
        ctx.write(chunk.retainedHeader(), ctx.voidPromise());
        if (sendfile && chunk.dataLength() >= SENDFILE_MIN_BYTES) {
            ctx.write(chunk.retainedDataRegion(), ctx.voidPromise());
        } else {
            ctx.write(chunk.retainedData(), ctx.voidPromise());
        }
        flushPending = true;
        unflushed += length;
        if (unflushed >= FLUSH_THRESHOLD) {
            flush();
        }
        return length + (version == 2 ? StreamFrameWriter.DELIVER_V2_HEADER : StreamFrameWriter.DELIVER_V1_HEADER);
    }

    /** Writes and flushes what was appended since the last flush, if anything. */
    void flush() {
        writeBuffer();
        if (flushPending) {
            flushPending = false;
            unflushed = 0;
            ctx.flush();
        }
    }

    /** Drops what was not written (the connection is gone). */
    void discard() {
        if (buffer != null) {
            buffer.release();
            buffer = null;
        }
    }

    private void afterAppend() {
        if (buffer.readableBytes() + unflushed >= FLUSH_THRESHOLD) {
            flush();
        }
    }

    private void writeBuffer() {
        if (buffer != null && buffer.isReadable()) {
            unflushed += buffer.readableBytes();
            ctx.write(buffer, ctx.voidPromise());
            buffer = null;
            flushPending = true;
        }
    }
}
