package io.skiffmq.cluster;

import java.nio.ByteBuffer;
import java.util.concurrent.CompletableFuture;

/**
 * The cluster's replicated metadata log: one Raft group across all nodes, carrying entries that a {@link LogApplier}
 * applies in the same order on every node. Reads go to the applier's state on the local node; only changes go
 * through here. Thread-safe.
 */
public interface MetadataLog {
    /**
     * Appends one entry to the log.
     *
     * @param entry the bytes, read from its position to its limit (not changed; copied before this returns)
     * @return completes with the entry's index once a majority of the nodes have committed it and this node has
     *         applied it (so a read here afterwards sees it); fails with {@link NoMajorityException} when that did
     *         not happen within the append timeout. An entry whose append failed that way may still be committed
     *         later, once a majority is back: like any timed-out request, its outcome is unknown.
     */
    CompletableFuture<Long> append(ByteBuffer entry);

    /**
     * A read barrier: completes once this node has applied every entry committed anywhere before the call (the
     * leader's commit index, confirmed by a majority), so that a read here afterwards sees every change acknowledged
     * to any client by then. Appends nothing. Fails with {@link NoMajorityException} when no leader confirmed its
     * commit index within the append timeout.
     */
    CompletableFuture<Long> caughtUp();

    /** The index of the last entry applied on this node, 0 before the first. */
    long appliedIndex();
}
