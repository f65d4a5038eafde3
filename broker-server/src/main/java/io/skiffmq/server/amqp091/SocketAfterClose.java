package io.skiffmq.server.amqp091;

import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.skiffmq.codec.amqp091.Amqp091FrameDecoder;
import java.util.concurrent.TimeUnit;

/**
 * What becomes of the socket once the broker has sent {@code connection.close}. While the frame decoder can still
 * read, the peer's {@code close-ok} closes it (the handler sees it), or the timeout does. After a frame error (a bad
 * frame end, a frame over frame-max, an unknown frame type) the decoder has lost its place and discards everything,
 * so no {@code close-ok} can be read: the socket closes as soon as the close is written. RabbitMQ's
 * {@code rabbit_reader} ({@code fatal_frame_error}) reads nothing more either; it sleeps 3 s before closing, as a
 * grace period for the close to go out, where we close once the write has completed. Runs on the connection's
 * event loop.
 */
final class SocketAfterClose {
    private SocketAfterClose() {
    }

    /** After {@code connection.close} was written and flushed. */
    static void close(ChannelHandlerContext ctx, long closeOkTimeoutMillis) {
        Amqp091FrameDecoder decoder = ctx.pipeline().get(Amqp091FrameDecoder.class);
        if (decoder != null && decoder.broken()) {
            // an empty write completes after every write before it: the close frame is out, then the socket closes
            ctx.writeAndFlush(Unpooled.EMPTY_BUFFER).addListener(ChannelFutureListener.CLOSE);
        } else {
            ctx.executor().schedule((Runnable) ctx::close, closeOkTimeoutMillis, TimeUnit.MILLISECONDS);
        }
    }
}
