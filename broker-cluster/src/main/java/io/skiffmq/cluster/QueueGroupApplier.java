package io.skiffmq.cluster;

import java.io.DataInput;
import java.io.DataOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;

/**
 * What sits on the queue groups ({@link QueueGroup}): the replicas of the quorum queues that share each group, on
 * every member. Called on the group's own apply thread (one per group and node), in log order. A restarted node gets
 * the group's state from its newest snapshot ({@link #restore}) and the log after it, before the group is used; a
 * node too far behind the leader's log gets the leader's snapshot the same way.
 */
public interface QueueGroupApplier {
    /** A committed command of the group's current epoch; {@code command} is valid during the call only. */
    void apply(String group, long index, ByteBuffer command);

    /**
     * As {@link #apply}, answering whether the command was taken: false refuses it as a stale epoch's would be (its
     * append fails), as a queue frozen by a membership change refuses its deposed live queue's last commands.
     */
    default boolean applyCommand(String group, long index, ByteBuffer command) {
        apply(group, index, command);
        return true;
    }

    /**
     * A committed transfer ({@link ClusterNode#transfer}): state moved into the group from outside its epochs (a
     * queue's replica adopted from the group it leaves), applied whatever the epoch.
     */
    default void transfer(String group, long index, ByteBuffer command) {
    }

    /**
     * The group's leader is established at this point of its log: its commands are those of {@code epoch} from now
     * on, older ones are refused.
     *
     * @param node the leader's node; null when it is this node's and the entry is from before this member last
     *        started or lost the lead (which member leads is then known at the next leader entry)
     * @param live true on the leader's own node while it is still the leader of the term that appended it: its
     *        replicas become the live queues there
     */
    void leader(String group, String node, long epoch, boolean live);

    /** This node's member is no longer the group's leader (another was elected, or none is known). */
    void notLeader(String group);

    /**
     * The group's state as of the last command applied, for a snapshot: called on the apply thread, and written on
     * another while the group goes on applying, so it must not change under the writer (copy or share what is
     * immutable).
     */
    Snapshot snapshot(String group);

    /**
     * Replaces the group's state by what {@link Snapshot#write} wrote, on the apply thread: at start, or when the
     * leader sent its snapshot.
     */
    void restore(String group, DataInput in) throws IOException;

    /** A group's state taken by {@link #snapshot}. */
    interface Snapshot {
        void write(DataOutputStream out) throws IOException;
    }
}
