package io.skiffmq.cluster;

import java.io.IOException;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BiFunction;
import org.apache.ratis.client.impl.ClientProtoUtils;
import org.apache.ratis.proto.RaftProtos.StartLeaderElectionRequestProto;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftGroupMemberId;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.protocol.TermIndex;

/**
 * Elections held at once when a group's leader's node is known gone (its node-to-node link closed: a killed
 * process's sockets close at once), instead of after the election timeout without a heartbeat, as RabbitMQ's Ra
 * followers do on {@code nodedown}. One surviving member stands: the one whose log is the longest (each survivor asks
 * the others' servers for their last entry, and stands only when no other's is longer, the first by name among
 * equals), so that two candidates do not split the vote, and so that the candidate is not refused for a log behind
 * another survivor's. That refusal cannot be mended afterwards: the refused candidacy raised the other survivor's term
 * past its last entry's, and Ratis then refuses it an early election ({@code recognizeLeader}), leaving it to its
 * election timeout. A survivor that cannot be asked counts as no longer. It asks its own server through Ratis'
 * transfer-leadership path ({@code startLeaderElection}, as if from the leader), which starts a forced election (no
 * pre-vote, the next term) only while this node is a follower and its log is at least its own last entry. Raft's
 * vote keeps it safe: a candidate whose log lacks a committed entry is refused. A link that drops while its node lives
 * (a partition) costs at most one election per group per {@code quiet} interval. Thread-safe.
 */
final class EarlyElections {
    private static final System.Logger LOG = System.getLogger(EarlyElections.class.getName());

    private final RaftServer server;
    private final RaftPeerId self;
    private final long quietNanos;
    /** A member's last log entry of a group, asked of its server; null when it cannot be asked. */
    private final BiFunction<RaftGroupId, RaftPeer, TermIndex> lastEntryAt;
    /** When this node last started an early election of each group. */
    private final Map<RaftGroupId, Long> last = new ConcurrentHashMap<>();

    EarlyElections(RaftServer server, RaftPeerId self, long quietMillis,
            BiFunction<RaftGroupId, RaftPeer, TermIndex> lastEntryAt) {
        this.server = server;
        this.self = self;
        this.quietNanos = quietMillis * 1_000_000L;
        this.lastEntryAt = lastEntryAt;
    }

    /** The link to {@code node} closed: each group it leads and this node follows may elect at once. */
    void nodeLost(String node) {
        RaftPeerId lost = RaftPeerId.valueOf(node);
        try {
            for (RaftGroupId id : server.getGroupIds()) {
                elect(id, lost);
            }
        } catch (IOException | RuntimeException e) {
            LOG.log(System.Logger.Level.DEBUG, "no early election after losing " + node, e);
        }
    }

    private void elect(RaftGroupId id, RaftPeerId lost) throws IOException {
        RaftServer.Division division = server.getDivision(id);
        if (!division.getInfo().isFollower() || !lost.equals(division.getInfo().getLeaderId())) {
            return;
        }
        TermIndex mine = division.getRaftLog().getLastEntryTermIndex();
        if (mine == null) {
            return;
        }
        for (RaftPeer other : division.getRaftConf().getCurrentPeers()) {
            if (other.getId().equals(lost) || other.getId().equals(self)) {
                continue;
            }
            TermIndex theirs = lastEntryAt.apply(id, other);
            int longer = theirs == null ? -1 : theirs.compareTo(mine);
            if (longer > 0 || longer == 0 && other.getId().toString().compareTo(self.toString()) < 0) {
                LOG.log(System.Logger.Level.INFO, "the link to node {0}, leader of group {1}, closed: {2} stands"
                    + " (its last entry {3}, this node''s {4})", lost, id, other.getId(), theirs, mine);
                return;
            }
        }
        long now = System.nanoTime();
        Long before = last.get(id);
        if (before != null && now - before < quietNanos) {
            return;
        }
        last.put(id, now);
        StartLeaderElectionRequestProto request = StartLeaderElectionRequestProto.newBuilder()
            .setServerRequest(ClientProtoUtils.toRaftRpcRequestProtoBuilder(RaftGroupMemberId.valueOf(lost, id), self))
            .setLeaderLastEntry(mine.toProto()).build();
        boolean started = server.startLeaderElection(request).getServerReply().getSuccess();
        LOG.log(System.Logger.Level.INFO, "the link to node {0}, leader of group {1}, closed: {2}", lost, id,
            started ? "early election started (last entry " + mine + ")" : "early election refused (this node is no"
                + " longer a follower, or its last entry is of an older term)");
    }
}
