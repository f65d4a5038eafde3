package io.skiffmq.core;

import io.skiffmq.core.definitions.DefinitionChange.VhostChange;
import io.skiffmq.core.queue.ClassicQueue;
import io.skiffmq.core.queue.Queue;
import io.skiffmq.core.queue.QueueContext;
import io.skiffmq.core.queue.QueueDeclaration;
import io.skiffmq.core.queue.QueueExecutor;
import io.skiffmq.core.queue.QueueType;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * What keeps a virtual host's durable state: it makes the queues (a durable one gets a log for its messages) and
 * is told of each change to the durable definitions, one small record each, never the whole state. The store module implements it on disk; {@link #TRANSIENT} keeps
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
        public CompletableFuture<Void> queueDeclared(QueueDeclaration declaration) {
            return CompletableFuture.completedFuture(null);
        }

        @Override
        public CompletableFuture<Void> changed(List<VhostChange> changes) {
            return CompletableFuture.completedFuture(null);
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
     * The {@link QueueDeclaration#persistent persistent} queue this store has just {@link #createQueue created} is to
     * be kept: the store appends its {@link VhostChange QueueDeclared}, with the id it gave it. Called under the
     * virtual host's write lock; returns at once.
     *
     * @return completes once the change is durable
     */
    CompletableFuture<Void> queueDeclared(QueueDeclaration declaration);

    /**
     * As {@link #queueDeclared(QueueDeclaration)}, for a queue of a cluster's shared definitions homed on this node:
     * the store keeps the record's {@code incarnation} with it and gives it back at recovery.
     */
    default CompletableFuture<Void> queueDeclared(QueueDeclaration declaration, long incarnation) {
        return queueDeclared(declaration);
    }

    /**
     * Durable definitions changed: a persistent queue deleted, a durable exchange declared or deleted, a binding
     * between durable ends added or removed ({@link io.skiffmq.core.definitions.DefinitionChange}). Called under the
     * virtual host's write lock, so calls are in the order of the changes; appends them and returns at once, whatever
     * the number of definitions already kept.
     *
     * @return completes once these changes (and every earlier one) are durable
     */
    CompletableFuture<Void> changed(List<VhostChange> changes);
}
