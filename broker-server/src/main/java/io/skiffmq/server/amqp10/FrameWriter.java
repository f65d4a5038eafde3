package io.skiffmq.server.amqp10;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.skiffmq.codec.amqp10.AmqpFrame;
import io.skiffmq.codec.amqp10.PerformativeCodec;

/**
 * The one writer of a connection: every session writes its frames here, and they reach the socket with one flush
 * when the connection's current batch of work is done (see {@link Amqp10ConnectionHandler#flushLater()}), not one
 * flush per frame. Owned by the connection's event loop.
 */
final class FrameWriter {
    private final ChannelHandlerContext ctx;
    private boolean flushPending;

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
        ctx.write(bytes, ctx.voidPromise());
        flushPending = true;
    }

    /** Flushes now if anything was written since the last flush. */
    void flush() {
        if (flushPending) {
            flushPending = false;
            ctx.flush();
        }
    }

    boolean isWritable() {
        return ctx.channel().isWritable();
    }
}
