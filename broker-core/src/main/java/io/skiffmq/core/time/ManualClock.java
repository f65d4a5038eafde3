package io.skiffmq.core.time;

import io.skiffmq.core.queue.QueueExecutor;
import java.util.ArrayList;
import java.util.List;
import java.util.PriorityQueue;

/**
 * A clock that moves only when told: for tests of TTLs and expiry that must not wait on the wall clock. Timers due
 * when time is {@link #advance advanced} are handed to their executors, in due order, by the advancing thread.
 *
 * <p>Thread-safe: time and the timers are guarded by this object's monitor; tasks are handed over outside it.
 */
public final class ManualClock implements BrokerClock {
    private final PriorityQueue<Scheduled> timers = new PriorityQueue<>();
    private long now;
    private long nextOrder;

    /** Starts at {@code startMillis} since the epoch. */
    public ManualClock(long startMillis) {
        this.now = startMillis;
    }

    @Override
    public synchronized long millis() {
        return now;
    }

    @Override
    public Timer schedule(long atMillis, QueueExecutor executor, Runnable task) {
        Scheduled scheduled;
        synchronized (this) {
            scheduled = new Scheduled(atMillis, nextOrder++, executor, task);
            if (atMillis > now) {
                timers.add(scheduled);
                return scheduled;
            }
        }
        executor.execute(task);
        return scheduled;
    }

    /** Moves time on by {@code millis} and runs the timers that came due. */
    public void advance(long millis) {
        if (millis < 0) {
            throw new IllegalArgumentException("time runs forward only: " + millis);
        }
        List<Scheduled> due = new ArrayList<>();
        synchronized (this) {
            now += millis;
            while (!timers.isEmpty() && timers.peek().atMillis <= now) {
                Scheduled next = timers.poll();
                if (!next.cancelled) {
                    due.add(next);
                }
            }
        }
        for (Scheduled scheduled : due) {
            scheduled.executor.execute(scheduled.task);
        }
    }

    /** Timers waiting to come due (cancelled ones excluded). */
    public synchronized int pendingTimers() {
        return (int) timers.stream().filter(t -> !t.cancelled).count();
    }

    private final class Scheduled implements Timer, Comparable<Scheduled> {
        final long atMillis;
        final long order;
        final QueueExecutor executor;
        final Runnable task;
        volatile boolean cancelled;

        Scheduled(long atMillis, long order, QueueExecutor executor, Runnable task) {
            this.atMillis = atMillis;
            this.order = order;
            this.executor = executor;
            this.task = task;
        }

        @Override
        public void cancel() {
            synchronized (ManualClock.this) {
                cancelled = true;
                timers.remove(this);
            }
        }

        @Override
        public int compareTo(Scheduled other) {
            int byTime = Long.compare(atMillis, other.atMillis);
            return byTime != 0 ? byTime : Long.compare(order, other.order);
        }
    }
}
