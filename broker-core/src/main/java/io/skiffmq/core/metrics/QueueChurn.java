package io.skiffmq.core.metrics;

import java.util.concurrent.atomic.LongAdder;

/**
 * Queues declared, created and deleted on the node, over all its virtual hosts (RabbitMQ's
 * {@code queues_declared_total}, {@code queues_created_total}, {@code queues_deleted_total}): counted where a
 * declaration or deletion happens, never per message. A deleted virtual host's counts stay. Thread-safe.
 */
public final class QueueChurn {
    private final LongAdder declared = new LongAdder();
    private final LongAdder created = new LongAdder();
    private final LongAdder deleted = new LongAdder();

    /** A declaration asked for a queue, new or existing. */
    public void declared() {
        declared.increment();
    }

    /** A declaration made a new queue. */
    public void created() {
        created.increment();
    }

    /** A queue was deleted, for whatever reason. */
    public void deleted() {
        deleted.increment();
    }

    public long declaredCount() {
        return declared.sum();
    }

    public long createdCount() {
        return created.sum();
    }

    public long deletedCount() {
        return deleted.sum();
    }
}
