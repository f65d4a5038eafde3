package io.skiffmq.cluster;

/**
 * One Raft group's figures on this node, as RabbitMQ's {@code ra_metrics} reports each Ra server: the term, the
 * log's snapshot, applied, committed and written (flushed) indexes, and the recent time an entry this node
 * appended took to be committed.
 *
 * @param group the group's name: {@link ClusterNode#METADATA_NAME} or a queue group's
 * @param commitLatencySeconds a moving average of this node's appends, append to commit; 0 before the first
 */
public record RaftReading(String group, long term, long snapshotIndex, long lastAppliedIndex, long commitIndex,
        long lastWrittenIndex, double commitLatencySeconds) {

    /**
     * Group {@code id}'s figures on {@code server}, named {@code name}; null when the server has no such group, or
     * has it only in part: a group being added has its division before its log, and Ratis' {@code getRaftLog}
     * throws {@code IllegalStateException} ("log is uninitialized") until then. A node's first scrape, while it
     * started, met a queue group the metadata log was adding, and the node exited.
     */
    static RaftReading of(org.apache.ratis.server.RaftServer server, org.apache.ratis.protocol.RaftGroupId id,
            String name, CommitLatency latency) {
        try {
            org.apache.ratis.server.RaftServer.Division division = server.getDivision(id);
            org.apache.ratis.server.raftlog.RaftLog log = division.getRaftLog();
            return new RaftReading(name, division.getInfo().getCurrentTerm(), Math.max(0, log.getSnapshotIndex()),
                Math.max(0, division.getInfo().getLastAppliedIndex()), Math.max(0, log.getLastCommittedIndex()),
                Math.max(0, log.getFlushIndex()), latency.seconds());
        } catch (java.io.IOException e) {
            return null; // removed, or the server is closing
        } catch (IllegalStateException e) {
            return null; // being added
        }
    }
}
