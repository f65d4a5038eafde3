package io.skiffmq.core;

import io.skiffmq.core.queue.ClassicQueue;
import io.skiffmq.core.queue.Queue;
import io.skiffmq.core.queue.QueueDeclaration;
import io.skiffmq.core.queue.QueueExecutor;

/**
 * What keeps a virtual host's durable state: it makes the queues (a durable one gets a log for its messages) and
 * is told when durable definitions change. The store module implements it on disk; {@link #TRANSIENT} keeps
 * nothing.
 */
public interface VirtualHostStore {
    /** Keeps nothing: every queue lives in memory only and a restart forgets everything. */
    VirtualHostStore TRANSIENT = new VirtualHostStore() {
        @Override
        public Queue createQueue(QueueDeclaration declaration, QueueExecutor executor) {
            return new ClassicQueue(declaration, executor, null, Long.MAX_VALUE);
        }

        @Override
        public void definitionsChanged(VirtualHost vhost, Queue declaring) {
        }
    };

    /** A new queue; only a {@link QueueDeclaration#persistent} one keeps anything on disk. Called under the virtual host's write lock. */
    Queue createQueue(QueueDeclaration declaration, QueueExecutor executor);

    /**
     * A durable exchange, {@link QueueDeclaration#persistent persistent} queue or binding was added or removed. Called under the virtual host's write lock, so
     * calls are serialised and each sees the state after its change; it returns once the change is durable.
     *
     * @param declaring a durable queue being declared, not yet in {@code vhost} (it becomes visible only once
     *        this returns); null for other changes
     */
    void definitionsChanged(VirtualHost vhost, Queue declaring);
}
