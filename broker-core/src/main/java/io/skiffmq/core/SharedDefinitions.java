package io.skiffmq.core;

import io.skiffmq.core.definitions.DefinitionChange.QueueHomed;
import io.skiffmq.core.definitions.DefinitionChange.VhostChange;
import java.util.concurrent.CompletableFuture;

/**
 * Where a clustered node's virtual hosts put the definitions every node shares (durable exchanges and queues, and the
 * bindings between them): a change appended here is applied on every node, this one included, once a majority has committed
 * it ({@link VirtualHost#applyShared}), never before. A single node has none: its virtual hosts keep everything in
 * their {@link VirtualHostStore}. What replicates the changes (the cluster's metadata log) is not broker-core's
 * concern.
 *
 * <p>Thread-safe.
 */
public interface SharedDefinitions {
    /**
     * Appends one change of virtual host {@code vhost}.
     *
     * @return completes once a majority has committed it and this node has applied it; fails with a
     *         {@link java.util.concurrent.TimeoutException} when no majority committed it in time (its outcome is
     *         then unknown: it may still be committed later)
     */
    CompletableFuture<Void> append(String vhost, VhostChange change);

    /**
     * A read barrier: completes once this node has applied every change committed in the cluster before the call, so
     * that a delete that finds nothing here has not merely come before this node applied the declare it undoes.
     * Fails with a {@link java.util.concurrent.TimeoutException} without a majority.
     */
    default CompletableFuture<Void> caughtUp() {
        return CompletableFuture.completedFuture(null);
    }

    /** This node's name: the home node of the durable queues declared on it. */
    String node();

    /**
     * What stands on this node for the queue of {@code record}, homed on another node: a queue whose messages and
     * consumers travel to and from its home (docs/cluster.md, "Messages between nodes"); null while nothing can
     * reach the other nodes yet (the broker is starting).
     */
    default io.skiffmq.core.queue.Queue remoteQueue(String vhost, QueueHomed record) {
        return null;
    }

    /**
     * Whether the queue of {@code record} is a replicated quorum queue (docs/quorum-queues.md, "How it is
     * replicated"), set up on this node when it is one: it is then a record here, as a queue homed elsewhere, and
     * its live queue appears on whichever node leads its group ({@link VirtualHost#replicaLive}). Called on the
     * log's applier thread for each record applied.
     */
    default boolean replicated(String vhost, QueueHomed record) {
        return false;
    }

    /**
     * The nodes of a replicated queue, its leader first when one is known: null when {@code record} is not a
     * replicated queue here.
     */
    default java.util.List<String> replicaNodes(String vhost, QueueHomed record) {
        return null;
    }

    /** A replicated queue's record was deleted: its replica here goes. */
    default void replicaDeleted(String vhost, QueueHomed record) {
    }

    /**
     * Completes once the replicated queue of {@code record} has a leader (its live queue on some node), or fails
     * after the append timeout.
     */
    default CompletableFuture<Void> whenLed(String vhost, QueueHomed record) {
        return CompletableFuture.completedFuture(null);
    }

    /**
     * What a message routed to the replicated queue of {@code record} goes to when nothing reaches its leader now
     * (none, or between two): a queue that holds publishes until a leader serves it; null to refuse them.
     */
    default io.skiffmq.core.queue.Queue unled(String vhost, QueueHomed record) {
        return null;
    }

    /** Builds a replicated queue's live queue on the node that leads its group. */
    @FunctionalInterface
    interface LiveQueueFactory {
        io.skiffmq.core.queue.Queue make(io.skiffmq.core.queue.QueueDeclaration declaration,
            io.skiffmq.core.queue.QueueExecutor executor, io.skiffmq.core.queue.QueueContext context);
    }
}
