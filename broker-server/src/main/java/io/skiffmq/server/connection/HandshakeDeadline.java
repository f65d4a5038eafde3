package io.skiffmq.server.connection;

import io.netty.channel.Channel;
import io.netty.util.AttributeKey;
import io.netty.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * When a connection was accepted, so that {@code handshake-timeout} runs from the accept to {@code open} once, not
 * anew at each stage: the protocol header's wait ({@code ProtocolDetector}) and the protocol's handshake after it
 * ({@code Amqp10ConnectionHandler}, 0-9-1's {@code Handshake}) each schedule what is left of it. A peer that trickles
 * its handshake is closed at the timeout, not at twice it. Stateless; the time is a channel attribute, set by the
 * listener on the channel's event loop and read there.
 */
public final class HandshakeDeadline {
    private static final AttributeKey<Long> ACCEPTED = AttributeKey.valueOf("skiffmq.accepted");

    private HandshakeDeadline() {
    }

    /** The connection was accepted now. */
    public static void accepted(Channel channel) {
        channel.attr(ACCEPTED).set(System.nanoTime());
    }

    /**
     * What is left of {@code timeoutMillis} since the accept, at least 1 ms; all of it for a channel that was not
     * accepted by a listener (an embedded one in tests).
     */
    public static long remainingMillis(Channel channel, long timeoutMillis) {
        Long accepted = channel.attr(ACCEPTED).get();
        if (accepted == null) {
            return timeoutMillis;
        }
        long elapsed = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - accepted);
        return Math.max(1, timeoutMillis - elapsed);
    }

    /** Runs {@code expired} on the channel's event loop when what is left of {@code timeoutMillis} has passed. */
    public static ScheduledFuture<?> schedule(Channel channel, long timeoutMillis, Runnable expired) {
        return channel.eventLoop().schedule(expired, remainingMillis(channel, timeoutMillis), TimeUnit.MILLISECONDS);
    }
}
