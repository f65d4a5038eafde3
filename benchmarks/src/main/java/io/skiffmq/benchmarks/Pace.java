package io.skiffmq.benchmarks;

/**
 * The schedule of a paced sender (open loop): message {@code n} is due at {@code start + n * interval}, whether or
 * not the ones before it could go on time, so a sender held back shows as latency (measured from when each was due)
 * rather than as a lower rate, and catches up after. Times are {@link System#nanoTime()} values, passed in. Owned
 * by its sender's thread.
 */
final class Pace {
    private final long interval;
    private long start;

    /** @param rate messages per second, above 0 */
    Pace(long rate, long start) {
        this.interval = Math.max(1, 1_000_000_000L / rate);
        this.start = start;
    }

    /** How many messages are due by {@code now}, counting from the first. */
    long due(long now) {
        return now < start ? 0 : (now - start) / interval + 1;
    }

    /** When message {@code n} (from 0) is due. */
    long dueAt(long n) {
        return start + n * interval;
    }

    /** Forgives what is late at {@code now} with {@code sent} messages gone: the next is due now. */
    void forgive(long now, long sent) {
        start = Math.max(start, now - sent * interval);
    }
}
