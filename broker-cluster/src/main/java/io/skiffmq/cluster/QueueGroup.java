package io.skiffmq.cluster;

import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * A Raft group that quorum queues with one member set share, on the Ratis server each member already runs for the
 * metadata group: one log, one fsync stream and one set of Ratis threads per node however many queues use it. Its
 * commands are the {@link QueueGroupApplier}'s bytes, each appended under the epoch of the leader that issues it.
 * Thread-safe.
 */
public interface QueueGroup {
    /** The group's name, derived from its members, the same on every node. */
    String name();

    /** Its members' node names, sorted. */
    List<String> members();

    /** The established leader (its {@code leader} entry applied here), or null. */
    String leader();

    /**
     * Appends a command on this node, which must be the leader of {@code epoch}.
     *
     * @return completes once a majority has committed it and it was of the current epoch; fails with
     *         {@link NoMajorityException} when it was not committed within the append timeout, this node is not the
     *         leader, or the epoch was over
     */
    CompletableFuture<Void> append(long epoch, byte[] command);
}
