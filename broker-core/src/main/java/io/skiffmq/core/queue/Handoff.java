package io.skiffmq.core.queue;

import java.util.Queue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import org.jctools.queues.MpscUnboundedXaddArrayQueue;

/**
 * Hands items from any thread to one owner thread in batches: items wait in a multi-producer queue, and one task
 * drains everything that arrived before it ran, so a burst costs the owner one task, not one per item. In the
 * broker that task goes through the owner loop's mailbox, shared with every other handoff to that loop.
 *
 * <p>{@link #offer} is safe from any thread. The handler runs on the owner's thread only, one item at a time in
 * the order each producer offered them, and {@code batchEnd} once after each drain (of at most {@link #BATCH_LIMIT}
 * items).
 */
public final class Handoff<T> {
    /**
     * Items taken per drain, then {@code batchEnd}, and the rest in a drain of its own behind the owner's other
     * tasks: a few milliseconds of publishes at most, so a producer as fast as the owner cannot keep it from its
     * dispatching, flushing and I/O.
     */
    static final int BATCH_LIMIT = 4096;
    /** Drained chunks kept for reuse: with two, bursts of 100 still made a chunk every other burst; four make none. */
    static final int SPARE_CHUNKS = 4;
    private final QueueExecutor owner;
    /**
     * Chunks of 64 slots, kept for reuse once drained (up to {@link #SPARE_CHUNKS}): a steady flow allocates no
     * chunk, where Netty's chunked queues drop each drained chunk and make a new one (280 B per burst of 100 items
     * in {@code HandoffTest}). An idle handoff (one per link) keeps its one chunk.
     */
    private final Queue<T> items = new MpscUnboundedXaddArrayQueue<>(64, SPARE_CHUNKS);
    private final AtomicBoolean scheduled = new AtomicBoolean();
    private final Consumer<T> handler;
    private final Runnable batchEnd;
    private final Runnable drain = this::drain;

    /**
     * @param handler takes each item, on the owner's thread
     * @param batchEnd runs on the owner's thread after each batch (e.g. to flush); may be null
     */
    public Handoff(QueueExecutor owner, Consumer<T> handler, Runnable batchEnd) {
        this.owner = owner;
        this.handler = handler;
        this.batchEnd = batchEnd;
    }

    /** Queues {@code item} for the owner; schedules a drain unless one is pending already. */
    public void offer(T item) {
        items.offer(item);
        if (!scheduled.get() && scheduled.compareAndSet(false, true)) {
            owner.execute(drain);
        }
    }

    private void drain() {
        // cleared first: an item offered while we drain schedules another drain rather than being missed
        scheduled.set(false);
        T item;
        for (int n = 0; n < BATCH_LIMIT && (item = items.poll()) != null; n++) {
            handler.accept(item);
        }
        if (batchEnd != null) {
            batchEnd.run();
        }
        if (!items.isEmpty() && !scheduled.get() && scheduled.compareAndSet(false, true)) {
            owner.execute(drain); // the rest after the owner's other work: a producer that keeps up cannot hold it
        }
    }
}
