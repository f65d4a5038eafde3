package io.skiffmq.core.time;

import io.skiffmq.core.queue.QueueExecutor;

/**
 * The broker's time: what message TTLs, queue expiry and dead-letter timestamps are measured with, and the timers
 * that fire on it. Injected, so tests move time on by hand ({@link ManualClock}) instead of waiting for the wall
 * clock.
 */
public interface BrokerClock {
    /** The wall clock, with timers on one shared daemon thread that hand each task to its executor. */
    BrokerClock SYSTEM = new SystemClock();

    /** Milliseconds since the epoch. */
    long millis();

    /**
     * Runs {@code task} on {@code executor} once {@link #millis()} has reached {@code atMillis} (at once if it has).
     *
     * @return cancels the timer; cancelling one that ran does nothing
     */
    Timer schedule(long atMillis, QueueExecutor executor, Runnable task);

    /** A scheduled task. */
    interface Timer {
        /** The task will not run, unless it already started. */
        void cancel();
    }
}
