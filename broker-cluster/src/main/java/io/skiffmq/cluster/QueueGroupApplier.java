package io.skiffmq.cluster;

import java.nio.ByteBuffer;

/**
 * What sits on the queue groups ({@link QueueGroup}): the replicas of the quorum queues that share each group, on
 * every member. Called on the group's own apply thread (one per group and node), in log order; a restarted node gets
 * the group's whole log again, from the first entry, before the group is used.
 */
public interface QueueGroupApplier {
    /** A committed command of the group's current epoch; {@code command} is valid during the call only. */
    void apply(String group, long index, ByteBuffer command);

    /**
     * The group's leader is established at this point of its log: its commands are those of {@code epoch} from now
     * on, older ones are refused.
     *
     * @param live true on the leader's own node while it is still the leader of the term that appended it: its
     *        replicas become the live queues there
     */
    void leader(String group, String node, long epoch, boolean live);

    /** This node's member is no longer the group's leader (another was elected, or none is known). */
    void notLeader(String group);
}
