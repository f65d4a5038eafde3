package io.skiffmq.cluster;

import java.io.IOException;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
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
 * followers do on {@code nodedown}. One surviving member asks first, the first by name, so that two candidates do not
 * split the vote; it asks its own server through Ratis' transfer-leadership path ({@code startLeaderElection}, as if
 * from the leader), which starts a forced election (no pre-vote, the next term) only while this node is a follower
 * and its log is at least its own last entry. The first survivor's vote fails when another survivor's log is longer:
 * that survivor then has no leader, and would wait out the election timeout. So the next survivor by name asks in its
 * turn, {@code step} later, if it still has no leader; and so on. Raft's vote keeps it safe: a candidate whose log
 * lacks a committed entry is refused. A link that drops while its node lives (a partition) costs at most one election
 * per group and survivor per {@code quiet} interval. Thread-safe.
 */
final class EarlyElections {
    private static final System.Logger LOG = System.getLogger(EarlyElections.class.getName());

    private final RaftServer server;
    private final RaftPeerId self;
    private final long quietNanos;
    /** How long each survivor waits for a leader before it stands, after the one before it by name. */
    private final long stepMillis;
    /** When this node last started an early election of each group. */
    private final Map<RaftGroupId, Long> last = new ConcurrentHashMap<>();

    EarlyElections(RaftServer server, RaftPeerId self, long quietMillis, long stepMillis) {
        this.server = server;
        this.self = self;
        this.quietNanos = quietMillis * 1_000_000L;
        this.stepMillis = stepMillis;
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
        RaftPeerId leader = division.getInfo().getLeaderId();
        // no leader: the first survivor's candidacy may have reached this one already
        if (!division.getInfo().isFollower() || leader != null && !leader.equals(lost)) {
            return;
        }
        List<RaftPeerId> members = division.getRaftConf().getCurrentPeers().stream().map(RaftPeer::getId).toList();
        List<RaftPeerId> survivors = members.stream().filter(p -> !p.equals(lost))
            .sorted(Comparator.comparing(RaftPeerId::toString)).toList();
        int turn = survivors.indexOf(self);
        if (turn < 0 || !members.contains(lost)) {
            return;
        }
        if (turn == 0) {
            stand(id, lost, division, 0);
        } else {
            // stands only if no leader came of those before it (a longer log here refused their candidacy)
            CompletableFuture.delayedExecutor(turn * stepMillis, TimeUnit.MILLISECONDS)
                .execute(() -> standIfLeaderless(id, lost, turn));
        }
    }

    private void standIfLeaderless(RaftGroupId id, RaftPeerId lost, int turn) {
        try {
            RaftServer.Division division = server.getDivision(id);
            RaftPeerId leader = division.getInfo().getLeaderId();
            if (division.getInfo().isFollower() && (leader == null || leader.equals(lost))) {
                stand(id, lost, division, turn);
            }
        } catch (IOException | RuntimeException e) {
            LOG.log(System.Logger.Level.DEBUG, "no early election of group " + id, e);
        }
    }

    /** Starts an election of the group here, unless this node did so within the quiet interval. */
    private void stand(RaftGroupId id, RaftPeerId lost, RaftServer.Division division, int turn) throws IOException {
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
            (started ? "early election started" : "early election refused (this node is no longer a follower,"
                + " or its last entry is of an older term)") + (turn == 0 ? "" : " (survivor " + (turn + 1)
                + " by name: no leader " + turn * stepMillis + " ms after the link closed)"));
    }
}
