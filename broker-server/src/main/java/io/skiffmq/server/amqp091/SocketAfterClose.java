package io.skiffmq.server.amqp091;

import io.netty.channel.ChannelHandlerContext;
import io.skiffmq.codec.amqp091.Amqp091FrameDecoder;
import io.skiffmq.server.connection.SocketReset;
import java.util.concurrent.TimeUnit;

/**
 * What becomes of the socket once the connection's close handshake has gone out.
 *
 * <p>After the broker's {@code connection.close}: while the frame decoder can still read, the peer's
 * {@code close-ok} closes it (the handler sees it). After a frame error (a bad frame end, a frame over frame-max, an
 * unknown frame type) the decoder has lost its place and discards everything, so no {@code close-ok} can be read:
 * the socket stays open and read, what comes dropped, until the client, having read the close, closes it. Closing
 * at once would close on bytes unread (the rest of the client's frames), which makes the kernel reset the
 * connection, and the reset can overtake the close: the client would see its connection reset, not the 501 close.
 * RabbitMQ's {@code rabbit_reader} ({@code fatal_frame_error}) waits 3 s before it closes, for the close to get
 * out. Either way, a client that does neither within {@link Amqp091ConnectionHandler#CLOSE_OK_TIMEOUT_MILLIS} is
 * cut with a reset ({@link SocketReset}).
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
     * same way), then it is reset. A client still writing when it closed (another of its threads publishing, say)
     * has bytes on the way after its close; closing on them unread would make the kernel reset the connection, which
     * fails the client's writes in flight and can cost it the close-ok itself.
     */
    static void lingerAfterCloseOk(ChannelHandlerContext ctx, int heartbeatSeconds) {
        int seconds = heartbeatSeconds > 0 && heartbeatSeconds < CLOSING_TIMEOUT_SECONDS ? heartbeatSeconds
            : CLOSING_TIMEOUT_SECONDS;
        ctx.executor().schedule(() -> SocketReset.close(ctx.channel()), seconds, TimeUnit.SECONDS);
    }

    /** After {@code connection.close} was written and flushed. */
    static void close(ChannelHandlerContext ctx, long closeOkTimeoutMillis) {
        Amqp091FrameDecoder decoder = ctx.pipeline().get(Amqp091FrameDecoder.class);
        if (decoder != null && decoder.broken()) {
            // read on whatever held reading back: the decoder drops it all, and the client's close is seen
            ctx.channel().config().setAutoRead(true);
        }
        ctx.executor().schedule(() -> SocketReset.close(ctx.channel()), closeOkTimeoutMillis, TimeUnit.MILLISECONDS);
    }
}
