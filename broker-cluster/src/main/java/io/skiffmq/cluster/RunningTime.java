package io.skiffmq.cluster;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Timeouts that count only the time this process ran: a stop of the whole process (SIGSTOP, a suspended VM, a long
 * GC pause) counts as one tick, not as its length. A queue group's leader stopped past the append timeout would
 * otherwise time out every append it had in flight the moment it runs again, before Ratis tells it that another
 * node leads: its publishers' messages would be refused as unavailable (nacked) rather than held for the next
 * leader, which is what the appends of a deposed leader get ({@link NoMajorityException#deposed}). A metadata
 * change (a declare, a bind) or a read barrier in flight on a stopped node would fail the same way, where Ratis'
 * client sends it on to the next leader.
 *
 * <p>A tick on the timer every {@link #TICK_MILLIS} finds how long the process stood still. The time it stood still
 * ({@link #stood}) is written on the timer's one thread and read anywhere; the deadlines are checked on that thread.
 */
final class RunningTime {
    static final long TICK_MILLIS = 50;
    /** A gap between two ticks longer than this counts as this much: the rest, the process stood still. */
    private static final long COUNTED_NANOS = TimeUnit.MILLISECONDS.toNanos(2 * TICK_MILLIS);

    private final ScheduledExecutorService timer;
    private long lastTick = System.nanoTime();
    /** Nanoseconds the process stood still since this was made: only grows. */
    private volatile long stood;

    /** @param timer a single thread's */
    RunningTime(ScheduledExecutorService timer) {
        this.timer = timer;
        timer.scheduleWithFixedDelay(this::tick, TICK_MILLIS, TICK_MILLIS, TimeUnit.MILLISECONDS);
    }

    /** On the timer's thread. */
    private void tick() {
        long now = System.nanoTime();
        long gap = now - lastTick;
        if (gap > COUNTED_NANOS) {
            stood += gap - COUNTED_NANOS;
        }
        lastTick = now;
    }

    /** The nanoseconds this process ran, from an origin of its own; any thread (a stop not yet ticked counts). */
    long ran() {
        return System.nanoTime() - stood;
    }

    /**
     * {@code future}, failed with a {@link TimeoutException} unless it completes within {@code millis} of this
     * process running; any thread.
     */
    <T> CompletableFuture<T> within(CompletableFuture<T> future, long millis) {
        if (!future.isDone()) {
            new Deadline(future, ran() + TimeUnit.MILLISECONDS.toNanos(millis)).arm(millis);
        }
        return future;
    }

    /** One future's deadline, armed again while the process had stood still part of the time waited. */
    private final class Deadline implements Runnable {
        private final CompletableFuture<?> future;
        private final long due;
        private volatile ScheduledFuture<?> check;

        Deadline(CompletableFuture<?> future, long due) {
            this.future = future;
            this.due = due;
        }

        void arm(long millis) {
            check = timer.schedule(this, millis, TimeUnit.MILLISECONDS);
            future.whenComplete((done, failure) -> check.cancel(false));
        }

        @Override
        public void run() {
            tick(); // a stop that just ended is counted before the deadline is read
            long left = due - ran();
            if (left <= 0) {
                future.completeExceptionally(new TimeoutException());
            } else if (!future.isDone()) {
                check = timer.schedule(this, Math.max(1, TimeUnit.NANOSECONDS.toMillis(left)),
                    TimeUnit.MILLISECONDS);
            }
        }
    }
}
