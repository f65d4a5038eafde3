package io.skiffmq.core.time;

import io.skiffmq.core.queue.QueueExecutor;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * {@link BrokerClock#SYSTEM}: {@link System#currentTimeMillis()}, with timers on one daemon thread that only hands
 * each due task to its executor (queues do their own work on their own threads).
 */
final class SystemClock implements BrokerClock {
    private final ScheduledThreadPoolExecutor timers;

    SystemClock() {
        timers = new ScheduledThreadPoolExecutor(1, runnable -> {
            Thread thread = new Thread(runnable, "skiffmq-timer");
            thread.setDaemon(true);
            return thread;
        });
        timers.setRemoveOnCancelPolicy(true); // a queue cancels and re-arms its timer often
    }

    @Override
    public long millis() {
        return System.currentTimeMillis();
    }

    @Override
    public Timer schedule(long atMillis, QueueExecutor executor, Runnable task) {
        long delay = Math.max(0, atMillis - millis());
        ScheduledFuture<?> future = timers.schedule(() -> executor.execute(task), delay, TimeUnit.MILLISECONDS);
        return () -> future.cancel(false);
    }
}
