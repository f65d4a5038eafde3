package io.skiffmq.core.queue;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A prefetch limit shared by the consumers of one channel (AMQP 0-9-1 {@code basic.qos} with {@code global}):
 * at most {@link #limit()} unsettled deliveries across them, whichever queues they consume from. Queues on different
 * threads take slots with {@link #tryAcquire} and give them back on settlement; a consumer refused a slot waits,
 * and is woken on its queue's thread when a slot frees.
 *
 * <p>Thread-safe: the count is atomic; the waiting consumers are a concurrent set.
 */
public final class PrefetchLimit {
    private final AtomicInteger inFlight = new AtomicInteger();
    private volatile int limit;
    private final Set<QueueConsumer> waiting = ConcurrentHashMap.newKeySet();

    /** @param limit the most unsettled deliveries; 0 for no limit */
    public PrefetchLimit(int limit) {
        limit(limit);
    }

    public int limit() {
        return limit;
    }

    /** Changes the limit; raising it wakes the waiting consumers. */
    public void limit(int limit) {
        if (limit < 0) {
            throw new IllegalArgumentException("prefetch " + limit + " is negative");
        }
        this.limit = limit;
        wakeAll();
    }

    public int inFlight() {
        return inFlight.get();
    }

    /** Takes a slot for one delivery to {@code consumer}; when none is free, the consumer waits for one. */
    boolean tryAcquire(QueueConsumer consumer) {
        if (take()) {
            return true;
        }
        waiting.add(consumer);
        // a release between the failed take and the add would have found no one to wake: look again
        if (take()) {
            waiting.remove(consumer);
            return true;
        }
        return false;
    }

    private boolean take() {
        for (;;) {
            int current = inFlight.get();
            int max = limit;
            if (max > 0 && current >= max) {
                return false;
            }
            if (inFlight.compareAndSet(current, current + 1)) {
                return true;
            }
        }
    }

    /** Gives back {@code count} slots (deliveries settled) and wakes the waiting consumers. */
    void release(int count) {
        if (count > 0) {
            inFlight.addAndGet(-count);
            wakeAll();
        }
    }

    private void wakeAll() {
        if (!waiting.isEmpty()) {
            for (QueueConsumer consumer : waiting) {
                if (waiting.remove(consumer)) {
                    consumer.queue.resume(consumer);
                }
            }
        }
    }
}
