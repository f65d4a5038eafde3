package io.skiffmq.server.logging;

import java.util.function.LongSupplier;

/**
 * A token bucket for log lines of one kind: {@code burst} lines at once, refilled at {@code perSecond}; a line
 * without a token is suppressed and counted, and the count is taken ({@link #takeSuppressed}) for one summary line
 * when the window that began with the first suppressed line ends. So a flood of similar events costs a few lines a
 * second plus one summary, however large it is. Thread-safe (each call under the limiter's lock: one per kind of
 * line, taken only when such a line is due).
 */
public final class LogLimiter {
    /** What {@link #acquire} decided. */
    public enum Decision {
        /** Log the line. */
        LOG,
        /** Suppressed, and the first since the last summary: a summary is due when the window ends. */
        SUPPRESS_FIRST,
        /** Suppressed; a summary is already due. */
        SUPPRESS
    }

    private final double tokensPerNano;
    private final int burst;
    private final LongSupplier nanoClock;
    private double tokens;
    private long refilledAt;
    private long suppressed;
    private long windowStart;

    /**
     * @param perSecond lines a second in the long run
     * @param burst lines at once (at least 1)
     * @param nanoClock {@link System#nanoTime} but in tests
     */
    public LogLimiter(double perSecond, int burst, LongSupplier nanoClock) {
        if (burst < 1 || perSecond <= 0) {
            throw new IllegalArgumentException("perSecond " + perSecond + " and burst " + burst + " must be positive");
        }
        this.tokensPerNano = perSecond / 1e9;
        this.burst = burst;
        this.nanoClock = nanoClock;
        this.tokens = burst;
        this.refilledAt = nanoClock.getAsLong();
    }

    /** Whether one more line may be logged now; a suppressed one is counted. */
    public synchronized Decision acquire() {
        long now = nanoClock.getAsLong();
        tokens = Math.min(burst, tokens + (now - refilledAt) * tokensPerNano);
        refilledAt = now;
        if (tokens >= 1) {
            tokens -= 1;
            return Decision.LOG;
        }
        if (suppressed++ == 0) {
            windowStart = now;
            return Decision.SUPPRESS_FIRST;
        }
        return Decision.SUPPRESS;
    }

    /**
     * The lines suppressed since the last call and how long ago the first of them was, for the summary (count 0
     * when none were). The next suppressed line starts a new window.
     */
    public synchronized Suppressed takeSuppressed() {
        long count = suppressed;
        suppressed = 0;
        return new Suppressed(count, count == 0 ? 0 : nanoClock.getAsLong() - windowStart);
    }

    /** Lines suppressed in a window of {@code windowNanos}. */
    public record Suppressed(long count, long windowNanos) {
    }
}
