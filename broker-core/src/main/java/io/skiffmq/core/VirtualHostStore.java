package io.skiffmq.core;

import io.skiffmq.core.queue.ClassicQueue;
import io.skiffmq.core.queue.Queue;
import io.skiffmq.core.queue.QueueContext;
import io.skiffmq.core.queue.QueueDeclaration;
import io.skiffmq.core.queue.QueueExecutor;
import io.skiffmq.core.queue.QueueType;

/**
 * What keeps a virtual host's durable state: it makes the queues (a durable one gets a log for its messages) and
 * is told when durable definitions change. The store module implements it on disk; {@link #TRANSIENT} keeps
 * nothing.
 */
public interface VirtualHostStore {
    /** Keeps nothing: every queue lives in memory only and a restart forgets everything. */
    VirtualHostStore TRANSIENT = new VirtualHostStore() {
        @Override
        public Queue createQueue(QueueDeclaration declaration, QueueExecutor executor, QueueContext context) {
            if (QueueType.of(declaration.arguments()) == QueueType.STREAM) {
                // a stream is its log on disk
                throw new BrokerException(BrokerException.Kind.NOT_IMPLEMENTED, "queue '" + declaration.name()
                    + "' in vhost '" + context.vhost() + "': streams need a broker with a data directory");
            }
            return new ClassicQueue(declaration, executor, null, Long.MAX_VALUE, context);
        }

        @Override
        public java.util.concurrent.CompletableFuture<Void> definitionsChanged(VirtualHost vhost) {
            return java.util.concurrent.CompletableFuture.completedFuture(null);
        }
    };

    /**
     * A new queue of the declaration's {@link QueueType}, checked already; only a {@link QueueDeclaration#persistent}
     * one keeps anything on disk. Called under the virtual host's write lock.
     *
     * @throws BrokerException when this store cannot keep a queue of that type
     */
    Queue createQueue(QueueDeclaration declaration, QueueExecutor executor, QueueContext context);

    /**
     * A durable exchange, {@link QueueDeclaration#persistent persistent} queue or binding was added or removed.
     * Called under the virtual host's write lock, so calls are serialised and each sees the state after its change
     * (queues being declared included: {@link VirtualHost#persistentQueues}); takes a snapshot there and returns at
     * once.
     *
     * @return completes once that snapshot, or a later one, is durable
     */
    java.util.concurrent.CompletableFuture<Void> definitionsChanged(VirtualHost vhost);
}
