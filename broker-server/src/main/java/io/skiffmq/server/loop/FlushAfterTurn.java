package io.skiffmq.server.loop;

import io.skiffmq.core.queue.QueueExecutor;

/**
 * A connection's flush once the current turn of its event loop is done (its reads and the mailbox's tasks): work
 * handed over from queues in a burst (deliveries, confirms) goes out with one flush, however many ask for it.
 * Owned by the connection's event loop; not thread-safe.
 */
public final class FlushAfterTurn {
    private final QueueExecutor loop;
    private final Runnable task;
    private boolean scheduled;

    /** @param flush what to run, once per turn that asked for it */
    public FlushAfterTurn(QueueExecutor loop, Runnable flush) {
        this.loop = loop;
        this.task = () -> {
            scheduled = false;
            flush.run();
        };
    }

    /** A flush after this turn, unless one is already due. */
    public void request() {
        if (!scheduled) {
            scheduled = true;
            loop.afterTurn(task);
        }
    }
}
