package io.skiffmq.core.queue;

import io.skiffmq.core.time.BrokerClock;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BooleanSupplier;

/**
 * A queue's hold on its publishers (as RabbitMQ calls it, "flow"): when publishers outrun consumers that keep up
 * well, they are paced to the consumers' rate instead of filling the queue's memory and making it page to disk.
 *
 * <p>A backlog that fast consumers would drain within seconds is a pipeline's publishers running ahead; paging it
 * costs the queue's loop more than the messages themselves (measured: docs/benchmarks.md), which slows delivery
 * further. A backlog that slow consumers work through for longer is what a queue is for, and it is kept (paged when
 * it outgrows memory) while publishers go on at their own pace, as in RabbitMQ. So the queue holds publishers when
 * <ul>
 *   <li>its in-memory backlog has passed half its memory limit, until it is back under a quarter;</li>
 *   <li>its consumers took a message in the last {@link #STALL_MILLIS} (stopped consumers hold nobody);</li>
 *   <li>at the best rate they took messages in the last second, they would drain every waiting message (paged ones
 *       too) within {@link #DRAIN_MILLIS}, until it would take twice that. The best rate, because a queue that
 *       pages delivers more slowly than its consumers can take: the rate at hand would keep it paging.</li>
 * </ul>
 * The broker setting {@code publisher-flow=false} switches this off; see docs/queues.md. Apart from all that, a
 * queue that pages holds its publishers while the store's page writes are behind the disk ({@link
 * QueuePages#writesBehind}), so that paging waits for the disk in the publishers, not on the queue's thread.
 *
 * <p>Threads: {@link #dispatched} and {@link #update} run on the queue's executor, which owns the rate and the
 * timer; {@link #holding()} and {@link #await} are called from publishers' threads and read volatile fields.
 * Publishers that wait leave a resume task, run (on whatever thread sees the hold end) once the queue no longer holds
 * them: at once when its backlog drops, otherwise within {@link #RECHECK_MILLIS} of its consumers stalling.
 */
public final class PublisherFlow {
    /** Consumers that took nothing for this long have stalled: nobody is held for them. */
    static final long STALL_MILLIS = 100;
    /** The consumers' rate is measured over windows of this length, and the best of the last {@link #WINDOWS}. */
    static final long RATE_WINDOW_MILLIS = 100;
    static final int WINDOWS = 10;
    /** Consumers that would drain the backlog within this are keeping up; twice this, and they are not. */
    static final long DRAIN_MILLIS = 2000;
    /** How often held publishers are looked at again while the queue holds them. */
    static final long RECHECK_MILLIS = 5;
    private final QueueExecutor executor;
    private final BrokerClock clock;
    private final BooleanSupplier pagesBehind;
    private final long high;
    private final long low;
    // the consumers' rate, on the queue's executor: no window until they first take a message
    private long windowStart = Long.MIN_VALUE;
    private long windowTaken;
    private final long[] windowRates = new long[WINDOWS];
    private int nextWindow;
    private long takenPerSecond;
    private volatile boolean holding;
    private volatile long takenAt = Long.MIN_VALUE / 2;
    private final ConcurrentLinkedQueue<Runnable> waiters = new ConcurrentLinkedQueue<>();
    private final AtomicBoolean recheckArmed = new AtomicBoolean();
    private final Runnable recheck = this::recheck;
    private final Runnable arm = this::arm;

    /**
     * @param memoryLimit the queue's in-memory limit in bytes; {@code Long.MAX_VALUE}, or {@code enabled} false:
     *        it never holds publishers
     */
    public PublisherFlow(QueueExecutor executor, BrokerClock clock, long memoryLimit, boolean enabled) {
        this(executor, clock, memoryLimit, enabled, () -> false);
    }

    /**
     * @param pagesBehind any thread: the queue's page writes are behind the disk ({@link QueuePages#writesBehind});
     *        publishers are held while it says so, whatever {@code enabled} says (the alternative is the queue's
     *        thread waiting for the disk), and let go by the recheck timer once it no longer does
     */
    public PublisherFlow(QueueExecutor executor, BrokerClock clock, long memoryLimit, boolean enabled,
            BooleanSupplier pagesBehind) {
        this.pagesBehind = pagesBehind;
        this.executor = executor;
        this.clock = clock;
        boolean never = !enabled || memoryLimit == Long.MAX_VALUE;
        this.high = never ? Long.MAX_VALUE : memoryLimit / 2;
        this.low = never ? Long.MAX_VALUE : memoryLimit / 4;
    }

    /** After each dispatch, on the queue's executor: {@code taken} messages went to consumers in it. */
    void dispatched(int taken) {
        long now = clock.millis();
        if (taken > 0) {
            takenAt = now;
            windowTaken += taken;
            if (windowStart == Long.MIN_VALUE) {
                windowStart = now;
            }
        }
        long window = now - windowStart; // overflows with no window yet, and is not used then
        if (windowStart != Long.MIN_VALUE && window >= RATE_WINDOW_MILLIS) {
            windowRates[nextWindow] = windowTaken * 1000 / window;
            nextWindow = (nextWindow + 1) % WINDOWS;
            long best = 0;
            for (long rate : windowRates) {
                best = Math.max(best, rate);
            }
            takenPerSecond = best;
            windowStart = now;
            windowTaken = 0;
        }
    }

    /**
     * After each dispatch, on the queue's executor: starts or stops holding, given the in-memory backlog's
     * {@code footprint} in bytes and the number of messages {@code waiting} (paged ones too).
     */
    void update(long footprint, long waiting, boolean consumers) {
        if (holding) {
            if (footprint < low || !consumers || waiting * 1000 > takenPerSecond * 2 * DRAIN_MILLIS) {
                release();
            }
        } else if (footprint >= high && consumers && !stalled() && waiting * 1000 <= takenPerSecond * DRAIN_MILLIS) {
            holding = true;
        }
    }

    /** Cheap enough for every publish (two volatile reads): the queue may be holding its publishers. */
    public boolean holding() {
        return holding || pagesBehind.getAsBoolean();
    }

    /**
     * When the queue holds its publishers now: keeps {@code resume}, to run once on any thread when it no longer
     * does, and returns true. Otherwise false, and {@code resume} is dropped.
     */
    public boolean await(Runnable resume) {
        if (!holds()) {
            return false;
        }
        waiters.add(resume);
        if (recheckArmed.compareAndSet(false, true)) {
            executor.execute(arm);
        }
        if (!holds()) {
            wakeAll(); // released while we were adding: the release may have looked before we were there
        }
        return true;
    }

    /** Lets every publisher go (the backlog dropped, or the queue is deleted or closed). */
    void release() {
        holding = false;
        wakeAll();
    }

    private boolean holds() {
        return holding && !stalled() || pagesBehind.getAsBoolean();
    }

    private boolean stalled() {
        return clock.millis() - takenAt >= STALL_MILLIS;
    }

    private void arm() {
        clock.schedule(clock.millis() + RECHECK_MILLIS, executor, recheck);
    }

    private void recheck() {
        if (!holds()) {
            wakeAll();
        }
        if (!waiters.isEmpty()) {
            arm();
            return;
        }
        recheckArmed.set(false);
        if (!waiters.isEmpty() && recheckArmed.compareAndSet(false, true)) {
            arm(); // a publisher came between our look and the flag
        }
    }

    private void wakeAll() {
        for (Runnable resume; (resume = waiters.poll()) != null; ) {
            resume.run();
        }
    }
}
