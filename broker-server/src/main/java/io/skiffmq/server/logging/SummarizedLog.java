package io.skiffmq.server.logging;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.LongSupplier;

/**
 * Lines of one kind under a {@link LogLimiter}, whose suppressed lines are summarized by a timer: the first line
 * suppressed schedules {@link #summarize} {@code summaryDelayNanos} later, so the count of a storm's last lines is
 * logged even when nothing follows them. The summary itself is the owner's ({@code summary} gets the count and the
 * window). Thread-safe (the limiter is).
 */
public final class SummarizedLog {
    /** Runs a task after a delay. */
    @FunctionalInterface
    public interface Timer {
        void schedule(Runnable task, long delayNanos);
    }

    /** The JDK's shared delay thread ({@link CompletableFuture#delayedExecutor}): for owners without a loop. */
    public static final Timer JDK_TIMER =
        (task, delayNanos) -> CompletableFuture.delayedExecutor(delayNanos, TimeUnit.NANOSECONDS).execute(task);

    private final LogLimiter limiter;
    private final long summaryDelayNanos;
    private final Consumer<LogLimiter.Suppressed> summary;

    /**
     * @param summary logs the summary line; called only when lines were suppressed
     */
    public SummarizedLog(double perSecond, int burst, long summaryDelayNanos, LongSupplier nanoClock,
            Consumer<LogLimiter.Suppressed> summary) {
        this.limiter = new LogLimiter(perSecond, burst, nanoClock);
        this.summaryDelayNanos = summaryDelayNanos;
        this.summary = summary;
    }

    /** A timer on {@code scheduler} (an event loop); when it is stopping, the summary runs at once. */
    public static Timer on(ScheduledExecutorService scheduler) {
        return (task, delayNanos) -> {
            try {
                scheduler.schedule(task, delayNanos, TimeUnit.NANOSECONDS);
            } catch (RejectedExecutionException e) {
                task.run(); // the loop is stopping with the broker: no window to wait for
            }
        };
    }

    /**
     * Whether one more line may be logged now; when not, it is counted, and the first one suppressed since the
     * last summary has the summary scheduled on {@code timer}.
     */
    public boolean admit(Timer timer) {
        return switch (limiter.acquire()) {
            case LOG -> true;
            case SUPPRESS_FIRST -> {
                timer.schedule(this::summarize, summaryDelayNanos);
                yield false;
            }
            case SUPPRESS -> false;
        };
    }

    /** The summary of the lines suppressed since the last one, if any were. */
    public void summarize() {
        LogLimiter.Suppressed suppressed = limiter.takeSuppressed();
        if (suppressed.count() > 0) {
            summary.accept(suppressed);
        }
    }

    /** A window's length in seconds as the summaries print it: {@code 5.0}. */
    public static String seconds(long nanos) {
        return String.format(java.util.Locale.ROOT, "%.1f", nanos / 1e9);
    }
}
