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

    /** Its members' node names in their order ({@link #ordered}): the preferred leader first. */
    List<String> members();

    /**
     * A member set in the order that names its group: {@code preferred} (the member that leads the group whenever
     * it can: docs/quorum-queues.md, "Where leaders go"), then the others by name. One member set has a group per
     * preferred member, so that its queues' leaders spread over its nodes. A null or absent {@code preferred} puts
     * the first by name first, which names the group a member set had before leaders were preferred.
     */
    static List<String> ordered(java.util.Collection<String> members, String preferred) {
        List<String> sorted = members.stream().distinct().sorted().toList();
        if (preferred == null || !sorted.contains(preferred) || sorted.get(0).equals(preferred)) {
            return sorted;
        }
        List<String> ordered = new java.util.ArrayList<>(sorted.size());
        ordered.add(preferred);
        sorted.stream().filter(m -> !m.equals(preferred)).forEach(ordered::add);
        return List.copyOf(ordered);
    }

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
