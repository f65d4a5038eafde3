package io.skiffmq.server.amqp10;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.skiffmq.codec.amqp10.AmqpFrame;
import io.skiffmq.codec.amqp10.PerformativeCodec;

/**
 * The one writer of a connection: every session writes its frames here, and they reach the socket with one flush
 * when the connection's current batch of work is done (see {@link Amqp10ConnectionHandler#flushLater()}), or
 * sooner once {@link #FLUSH_THRESHOLD} bytes wait, not one flush per frame. Owned by the connection's event loop.
 */
final class FrameWriter {
    /**
     * Bytes written since the last flush past which we flush at once: a long batch (a burst of deliveries) starts
     * reaching the socket before it ends, and unflushed bytes stay under the channel's write-buffer high-water mark
     * (AmqpListener's {@code WRITE_BUFFER_WATER_MARK}), which they would otherwise count against.
     */
    static final int FLUSH_THRESHOLD = 64 * 1024;
    private final ChannelHandlerContext ctx;
    private boolean flushPending;
    private int pendingBytes;

    FrameWriter(ChannelHandlerContext ctx) {
        this.ctx = ctx;
    }

    /** Writes a frame with no payload. */
    void writeFrame(int channel, Object performative) {
        ByteBuf out = ctx.alloc().ioBuffer(64);
        PerformativeCodec.writeFrame(out, AmqpFrame.TYPE_AMQP, channel, performative, 0);
        write(out);
    }

    /** Writes bytes (whole frames, or the rest of one); the channel releases them. */
    void write(ByteBuf bytes) {
        pendingBytes += bytes.readableBytes();
        ctx.write(bytes, ctx.voidPromise());
        flushPending = true;
        if (pendingBytes >= FLUSH_THRESHOLD) {
            flush();
        }
    }

    /** Flushes now if anything was written since the last flush. */
    void flush() {
        if (flushPending) {
            flushPending = false;
            pendingBytes = 0;
            ctx.flush();
        }
    }

    /** False while the channel's outbound buffer is past its high-water mark: deliveries wait. */
    boolean isWritable() {
        return ctx.channel().isWritable();
    }
}
