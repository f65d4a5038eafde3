package io.skiffmq.core.queue;

import java.util.ArrayDeque;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A prefetch limit shared by the consumers of one channel (AMQP 0-9-1 {@code basic.qos} with {@code global}), as
 * RabbitMQ's {@code rabbit_limiter} keeps it: at most {@link #limit()} unsettled deliveries across the channel's
 * consumers, whichever queues they consume from. Queues on different threads take a slot per delivery with
 * {@link #tryAcquire} and give it back on settlement; a consumer attached after it had deliveries out brings them
 * with it ({@link #add}), so the count is the channel's unacked deliveries, whenever the limit came. A pre-settled
 * (no-ack) consumer takes no slot but waits while the channel is at its limit, as in RabbitMQ.
 *
 * <p>Fairness: a consumer refused a slot waits in line, and while some wait, a slot goes to the first in line only:
 * that one is woken (on its queue's thread) and takes it, then the next is woken if there is room left. Were the
 * freed slot free for all, the consumer of the queue that just settled would take it every time, its queue's thread
 * being there first, and the channel's other queues would starve (RabbitMQ's queues wait for its limiter process,
 * which wakes them in a random order). A consumer woken that takes nothing (its queue is empty, it is gone) leaves
 * the line when its queue says so ({@link #resumed}).
 *
 * <p>Thread-safe: the count is atomic, and a slot is taken without a lock while nobody waits; the line is under this
 * object's lock, allocation-free once grown.
 */
public final class PrefetchLimit {
    private final AtomicInteger inFlight = new AtomicInteger();
    private volatile int limit;
    /** Guarded by {@code this}; each consumer at most once ({@link QueueConsumer#waitingForSlot}). */
    private final ArrayDeque<QueueConsumer> waiting = new ArrayDeque<>();
    /** The line's length, read without the lock: a slot is taken at once only while it is 0. */
    private volatile int waitingCount;

    /** @param limit the most unsettled deliveries; 0 for no limit */
    public PrefetchLimit(int limit) {
        limit(limit);
    }

    public int limit() {
        return limit;
    }

    /** Changes the limit; when that leaves room, the first in line is woken. */
    public void limit(int limit) {
        if (limit < 0) {
            throw new IllegalArgumentException("prefetch " + limit + " is negative");
        }
        this.limit = limit;
        wakeFirst();
    }

    public int inFlight() {
        return inFlight.get();
    }

    /** Counts {@code count} deliveries already out to a consumer attached now; they give their slots back too. */
    void add(int count) {
        inFlight.addAndGet(count);
    }

    /**
     * Takes a slot for one delivery to {@code consumer} (a pre-settled one only needs the channel to be below its
     * limit). When there is none, or others wait for one before it, it waits in line to be resumed.
     */
    boolean tryAcquire(QueueConsumer consumer) {
        consumer.slotAsks++;
        if (waitingCount == 0 && take(consumer)) {
            return true;
        }
        QueueConsumer next;
        synchronized (this) {
            // first in line, it may take one: the count is read after the line's length is written, so a release
            // that read no one in line has lowered the count already, and one that came later will wake it
            if (!line(consumer) || !take(consumer)) {
                return false;
            }
            leaveLine();
            next = roomFor(waiting.peekFirst());
        }
        resume(next);
        return true;
    }

    /** Puts the consumer at the end of the line unless it is in it; true when it is first now. */
    private boolean line(QueueConsumer consumer) {
        if (!consumer.waitingForSlot) {
            consumer.waitingForSlot = true;
            waiting.addLast(consumer);
            waitingCount = waiting.size();
        }
        return waiting.peekFirst() == consumer;
    }

    private void leaveLine() {
        waiting.pollFirst().waitingForSlot = false;
        waitingCount = waiting.size();
    }

    private boolean take(QueueConsumer consumer) {
        for (;;) {
            int current = inFlight.get();
            int max = limit;
            if (max > 0 && current >= max) {
                return false;
            }
            if (consumer.preSettled || inFlight.compareAndSet(current, current + 1)) {
                return true;
            }
        }
    }

    /** Gives back {@code count} slots (deliveries settled); the first in line is woken if that leaves room. */
    void release(int count) {
        if (count > 0) {
            inFlight.addAndGet(-count);
            wakeFirst();
        }
    }

    /**
     * The consumer's queue dispatched after it was woken. If that dispatch asked for no slot, it wants nothing now (no
     * message, no credit, gone), so if it is still first in line it leaves, and the next one is woken. A consumer refused a slot
     * in that dispatch must not leave, even when there is room by now: that room comes from a release whose wake
     * may not have looked at the line yet, and finding it empty it would wake nobody (the consumer stalled, with
     * messages ready, in PrefetchLimitTest on CI).
     *
     * @param asksBefore the consumer's {@link QueueConsumer#slotAsks} before that dispatch
     */
    void resumed(QueueConsumer consumer, long asksBefore) {
        if (consumer.slotAsks != asksBefore) {
            return; // it asked: it took a slot and left the line, or was refused and stays in it
        }
        QueueConsumer next;
        synchronized (this) {
            if (waiting.peekFirst() != consumer || roomFor(consumer) == null) {
                return;
            }
            leaveLine();
            next = roomFor(waiting.peekFirst());
        }
        resume(next);
    }

    private void wakeFirst() {
        if (waitingCount > 0) {
            QueueConsumer first;
            synchronized (this) {
                first = roomFor(waiting.peekFirst());
            }
            resume(first);
        }
    }

    /** {@code consumer}, when there is room for a delivery; null otherwise. */
    private QueueConsumer roomFor(QueueConsumer consumer) {
        int max = limit;
        return max > 0 && inFlight.get() >= max ? null : consumer;
    }

    /** The limit, the slots taken and the consumers in line, for logs and failed tests. */
    @Override
    public String toString() {
        return "PrefetchLimit[limit=" + limit + ", inFlight=" + inFlight.get() + ", waiting=" + waitingCount + "]";
    }

    private static void resume(QueueConsumer consumer) {
        if (consumer != null) {
            // outside the lock: a queue on the caller's thread may dispatch at once (only classic queues take part)
            ((ClassicQueue) consumer.queue).resume(consumer);
        }
    }
}
