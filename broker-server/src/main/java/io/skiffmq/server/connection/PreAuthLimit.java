package io.skiffmq.server.connection;

import io.netty.channel.Channel;
import io.netty.util.AttributeKey;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The limit on connections that have not finished their handshake ({@code max-preauth-connections}): a connection
 * counts from its accept (before its TLS handshake and protocol header) until it is open (AMQP 1.0 {@code open},
 * 0-9-1 {@code connection.open}, after the login) or closed, whichever comes first. A connection accepted while
 * the count is at the limit is refused: closed at once, before anything is read, and counted in
 * {@link #refused()}.
 *
 * <p>Crossing the limit is logged once, at WARN; the warning is armed again once the count is back at three
 * quarters of the limit (with an INFO line saying how many were refused meanwhile), so a flood that holds the count
 * at the limit (each timed-out silent peer making room for the next) logs one line, not one per connection.
 *
 * <p>Thread-safe: connections on every event loop enter and leave; the count is an {@link AtomicInteger}
 * incremented by compare-and-set only while under the limit, so it never passes it. Each connection leaves once:
 * its channel's {@link #COUNTED} attribute is cleared by whichever of {@link #opened} and the close comes first.
 */
public final class PreAuthLimit {
    private static final System.Logger LOG = System.getLogger(PreAuthLimit.class.getName());
    /** Set on a channel while it counts here; cleared (atomically) by the one who takes it out. */
    private static final AttributeKey<PreAuthLimit> COUNTED = AttributeKey.valueOf("skiffmq.preauth");

    private final int limit;
    private final AtomicInteger count = new AtomicInteger();
    private final AtomicLong refused = new AtomicLong();
    /** True from a crossing's WARN until the count is back at {@link #rearmAt}. */
    private final AtomicBoolean warned = new AtomicBoolean();
    /** {@link #refused} when the last WARN was logged, for the all-clear line. */
    private volatile long refusedAtWarning;
    private final int rearmAt;

    /** @param limit connections allowed before open; 0 for no limit */
    public PreAuthLimit(int limit) {
        if (limit < 0) {
            throw new IllegalArgumentException("limit must be >= 0");
        }
        this.limit = limit;
        this.rearmAt = limit - Math.max(1, limit / 4);
    }

    /**
     * Counts a connection just accepted, or refuses it (false: the caller closes it unread). A counted connection
     * leaves when its channel closes, or earlier by {@link #opened}.
     */
    public boolean enter(Channel channel) {
        if (limit == 0) {
            return true;
        }
        while (true) {
            int now = count.get();
            if (now >= limit) {
                long total = refused.incrementAndGet();
                if (warned.compareAndSet(false, true)) {
                    refusedAtWarning = total - 1;
                    LOG.log(System.Logger.Level.WARNING, "{0} connections have not finished their handshake"
                        + " (max-preauth-connections): new connections are refused until fewer are waiting", limit);
                }
                return false;
            }
            if (count.compareAndSet(now, now + 1)) {
                break;
            }
        }
        channel.attr(COUNTED).set(this);
        channel.closeFuture().addListener(f -> leave(channel));
        return true;
    }

    /** The connection finished its handshake (it is open): it no longer counts. Any thread; idempotent. */
    public static void opened(Channel channel) {
        if (channel != null) {
            leave(channel);
        }
    }

    private static void leave(Channel channel) {
        PreAuthLimit limit = channel.attr(COUNTED).getAndSet(null);
        if (limit != null) {
            limit.left();
        }
    }

    private void left() {
        int now = count.decrementAndGet();
        if (now <= rearmAt && warned.get() && warned.compareAndSet(true, false)) {
            LOG.log(System.Logger.Level.INFO, "{0} connections are waiting for their handshake, under"
                + " max-preauth-connections ({1}) again; {2} were refused meanwhile", now, limit,
                refused.get() - refusedAtWarning);
        }
    }

    /** Connections counted now (accepted, not yet open). */
    public int count() {
        return count.get();
    }

    /** Connections refused since the start. */
    public long refused() {
        return refused.get();
    }

    /** The limit; 0 for none. */
    public int limit() {
        return limit;
    }
}
