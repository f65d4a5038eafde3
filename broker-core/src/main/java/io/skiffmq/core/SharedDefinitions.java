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
}
