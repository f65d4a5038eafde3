package io.skiffmq.cluster;

import java.io.IOException;
import java.util.Comparator;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
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
 * followers do on {@code nodedown}. One surviving member asks, the first by name, so that two candidates do not split
 * the vote; it asks its own server through Ratis' transfer-leadership path ({@code startLeaderElection}, as if from
 * the leader), which starts a forced election (no pre-vote, the next term) only while this node follows that leader
 * and its log is at least its own last entry. Raft's vote keeps it safe: a candidate whose log lacks a committed entry
 * is refused. A link that drops while its node lives (a partition) costs at most one election per group per
 * {@code quiet} interval. Thread-safe.
 */
final class EarlyElections {
    private static final System.Logger LOG = System.getLogger(EarlyElections.class.getName());

    private final RaftServer server;
    private final RaftPeerId self;
    private final long quietNanos;
    /** When this node last started an early election of each group. */
    private final Map<RaftGroupId, Long> last = new ConcurrentHashMap<>();

    EarlyElections(RaftServer server, RaftPeerId self, long quietMillis) {
        this.server = server;
        this.self = self;
        this.quietNanos = quietMillis * 1_000_000L;
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
        Optional<RaftPeerId> asker = division.getRaftConf().getCurrentPeers().stream().map(RaftPeer::getId)
            .filter(p -> !p.equals(lost)).min(Comparator.comparing(RaftPeerId::toString));
        if (asker.isEmpty() || !asker.get().equals(self)) {
            return;
        }
        long now = System.nanoTime();
        Long before = last.get(id);
        if (before != null && now - before < quietNanos) {
            return;
        }
        TermIndex lastEntry = division.getRaftLog().getLastEntryTermIndex();
        if (lastEntry == null) {
            return;
        }
        last.put(id, now);
        StartLeaderElectionRequestProto request = StartLeaderElectionRequestProto.newBuilder()
            .setServerRequest(ClientProtoUtils.toRaftRpcRequestProtoBuilder(RaftGroupMemberId.valueOf(lost, id), self))
            .setLeaderLastEntry(lastEntry.toProto()).build();
        boolean started = server.startLeaderElection(request).getServerReply().getSuccess();
        LOG.log(System.Logger.Level.INFO, "the link to node {0}, leader of group {1}, closed: {2}", lost, id,
            started ? "early election started" : "early election refused (this node is no longer its follower,"
                + " or its last entry is of an older term)");
    }
}
