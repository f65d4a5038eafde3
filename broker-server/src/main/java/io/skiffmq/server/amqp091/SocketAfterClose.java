package io.skiffmq.server.amqp091;

import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.skiffmq.codec.amqp091.Amqp091FrameDecoder;
import java.util.concurrent.TimeUnit;

/**
 * What becomes of the socket once the connection's close handshake has gone out.
 *
 * <p>After the broker's {@code connection.close}: while the frame decoder can still read, the peer's
 * {@code close-ok} closes it (the handler sees it), or the timeout does. After a frame error (a bad frame end, a
 * frame over frame-max, an unknown frame type) the decoder has lost its place and discards everything, so no
 * {@code close-ok} can be read: the socket closes as soon as the close is written. RabbitMQ's {@code rabbit_reader}
 * ({@code fatal_frame_error}) reads nothing more either; it sleeps 3 s before closing, as a grace period for the
 * close to go out, where we close once the write has completed.
 *
 * <p>After the broker's {@code close-ok} to the client's {@code connection.close}: the client closes the socket
 * once it has read the close-ok, and until then the broker reads on and drops what comes ({@link #lingerAfterCloseOk}).
 *
 * <p>Runs on the connection's event loop.
 */
final class SocketAfterClose {
    /** {@code rabbit_reader}'s {@code CLOSING_TIMEOUT}: the longest the broker waits for the client to close. */
    static final int CLOSING_TIMEOUT_SECONDS = 30;

    private SocketAfterClose() {
    }

    /**
     * After {@code close-ok} was written to the client's {@code connection.close}: the socket stays open, read and
     * its frames dropped, until the client closes it, or for at most the negotiated heartbeat interval, or
     * {@value #CLOSING_TIMEOUT_SECONDS} s without heartbeats ({@code rabbit_reader:close_connection/1} waits the
     * same way). A client still writing when it closed (another of its threads publishing, say) has bytes on the
     * way after its close; closing on them unread would make the kernel reset the connection, which fails the
     * client's writes in flight and can cost it the close-ok itself.
     */
    static void lingerAfterCloseOk(ChannelHandlerContext ctx, int heartbeatSeconds) {
        int seconds = heartbeatSeconds > 0 && heartbeatSeconds < CLOSING_TIMEOUT_SECONDS ? heartbeatSeconds
            : CLOSING_TIMEOUT_SECONDS;
        ctx.executor().schedule((Runnable) ctx::close, seconds, TimeUnit.SECONDS);
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
