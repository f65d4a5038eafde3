package io.skiffmq.cluster;

import java.io.IOException;
import java.io.InterruptedIOException;
import org.apache.ratis.conf.Parameters;
import org.apache.ratis.grpc.GrpcFactory;
import org.apache.ratis.grpc.server.GrpcLogAppender;
import org.apache.ratis.proto.RaftProtos.AppendEntriesRequestProto;
import org.apache.ratis.rpc.RpcFactory;
import org.apache.ratis.rpc.RpcType;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.leader.FollowerInfo;
import org.apache.ratis.server.leader.LeaderState;
import org.apache.ratis.server.leader.LogAppender;
import org.apache.ratis.server.raftlog.RaftLog;
import org.apache.ratis.server.raftlog.RaftLogIOException;
import org.apache.ratis.statemachine.SnapshotInfo;

/**
 * Ratis' gRPC transport, whose leader sends its snapshot to a follower whose next entry is the first of the leader's
 * log when the entry before it was purged (Ratis 3.2.2 sends the entries instead, finds no previous entry for them,
 * and its appender for that follower dies for as long as the leader leads: RATIS-2487, fixed after 3.2.2), and
 * whose appender that fails is started again (Ratis 3.2.2 leaves it dead: RATIS-2499, fixed after 3.2.2; a snapshot
 * that purges the entries it is reading for a follower far behind makes it fail), and that tries a silent follower
 * every 100 ms without spinning in between ({@link Appender#getWaitTimeMs}).
 *
 * <p>It happens after a leader change: Ratis starts a segment of the log at each new term, and a snapshot cuts the
 * log by whole segments, so the leader's log can start just after the old term's last entry, below its snapshot's
 * index. The deposed leader, restarted, has its log up to exactly that entry. Named in {@code raft.rpc.type} by
 * class name (Ratis makes it by reflection).
 */
public final class SnapshotFallbackRpc implements RpcType {
    private static final System.Logger LOG = System.getLogger(SnapshotFallbackRpc.class.getName());
    /** How long a failed appender waits before a new one takes its follower over. */
    private static final long RESTART_PAUSE_MILLIS = 100;
    /**
     * How often a follower that has missed two heartbeats is tried (beside the retry policy's wait after errors,
     * {@code raft.server.log.appender.retry.policy}).
     */
    private static final long SILENT_PROBE_MILLIS = 100;

    @Override
    public String name() {
        return SnapshotFallbackRpc.class.getName();
    }

    @Override
    public RpcFactory newFactory(Parameters parameters) {
        return new GrpcFactory(parameters) {
            @Override
            public LogAppender newLogAppender(RaftServer.Division server, LeaderState state, FollowerInfo follower) {
                return new Appender(server, state, follower);
            }
        };
    }

    /**
     * Ratis' gRPC appender of one follower, with RATIS-2487's two checks, started again when it fails (RATIS-2499);
     * on the appender's own thread.
     */
    static final class Appender extends GrpcLogAppender {
        Appender(RaftServer.Division server, LeaderState state, FollowerInfo follower) {
            super(server, state, follower);
        }

        /**
         * Ratis' loop; when it fails while this node still leads, a new appender takes this follower over, from its
         * next index as it stands (the snapshot when the log no longer has it).
         */
        @Override
        public void run() throws IOException {
            try {
                super.run();
            } catch (IOException | RuntimeException e) {
                // not when it was stopped (interrupted), nor when this node no longer leads
                if (e instanceof InterruptedIOException || !isRunning()) {
                    throw e;
                }
                SnapshotFallbackRpc.LOG.log(System.Logger.Level.WARNING, this + " failed; a new one takes over", e);
                // a failure that lasts (an entry that cannot be read) is tried again at this pace, not spun on
                try {
                    Thread.sleep(RESTART_PAUSE_MILLIS);
                } catch (InterruptedException stopped) {
                    Thread.currentThread().interrupt();
                    return;
                }
                getLeaderState().restart(this);
            }
        }

        /**
         * Ratis' wait before the next round; for a silent follower ({@link #silent}), until its next probe. With its
         * stream to a follower that is down reset and nothing to send, Ratis' loop goes round with no wait (about a
         * thousand rounds a second, cheap ones) and tries the follower only once a heartbeat is due, every quarter of
         * {@code raft.server.rpc.timeout.min} (250 ms at the default election timeout, 750 ms at the 3 s of
         * {@code benchmarks/replica-restart}); the first try after it listens again fails at once, as the client
         * is still connecting: a member started again idled 0.8 to 1.4 s before its leader's first append, 0.2 to
         * 0.4 s with the probe (docs/quorum-queues.md, "Restart time").
         */
        @Override
        public long getWaitTimeMs() {
            if (!silent()) {
                return super.getWaitTimeMs();
            }
            // Ratis' own wait when it has entries to send (or a heartbeat due sooner), else the probe's
            long ratis = hasAppendEntries() ? super.getWaitTimeMs() : Math.max(0, getHeartbeatWaitTimeMs());
            return Math.min(ratis, Math.max(0, SILENT_PROBE_MILLIS - getFollower().getLastRpcSendTime()
                .elapsedTimeMs()));
        }

        /** A round sends when Ratis' would, or when a silent follower's probe is due ({@link #getWaitTimeMs}). */
        @Override
        public boolean shouldSendAppendEntries() {
            return super.shouldSendAppendEntries() || probeDue();
        }

        private boolean probeDue() {
            return silent() && getFollower().getLastRpcSendTime().elapsedTimeMs() >= SILENT_PROBE_MILLIS;
        }

        /** No response for two heartbeats: down, starting again, or stalled. */
        private boolean silent() {
            return getFollower().getLastRpcResponseTime().elapsedTimeMs() > getServer().properties().minRpcTimeoutMs()
                / 2;
        }

        @Override
        public SnapshotInfo shouldInstallSnapshot() {
            SnapshotInfo ratis = super.shouldInstallSnapshot();
            if (ratis != null) {
                return ratis;
            }
            SnapshotInfo snapshot = getServer().getStateMachine().getLatestSnapshot();
            RaftLog log = getRaftLog();
            long next = getFollower().getNextIndex();
            return snapshot != null && next < log.getNextIndex() && next == log.getStartIndex()
                && !previousKnown(next) ? snapshot : null;
        }

        /** No entries whose previous entry is unknown: the next round sends the snapshot instead. */
        @Override
        public AppendEntriesRequestProto newAppendEntriesRequest(long callId, boolean heartbeat)
                throws RaftLogIOException {
            FollowerInfo follower = getFollower();
            long next = follower.getNextIndex();
            if (!heartbeat && getHeartbeatWaitTimeMs() > 0 && next != follower.getSnapshotIndex() + 1
                    && !previousKnown(next)) {
                return null;
            }
            AppendEntriesRequestProto request = super.newAppendEntriesRequest(callId, heartbeat);
            if (request == null && probeDue()) {
                // a probe: a heartbeat whose failure has Ratis' client connect again at once
                return super.newAppendEntriesRequest(callId, true);
            }
            return request;
        }

        /** Whether the leader knows the term of the entry before {@code next}: in its log, or its snapshot's last. */
        private boolean previousKnown(long next) {
            if (next <= RaftLog.LEAST_VALID_LOG_INDEX) {
                return true;
            }
            if (getRaftLog().getTermIndex(next - 1) != null) {
                return true;
            }
            SnapshotInfo snapshot = getServer().getStateMachine().getLatestSnapshot();
            return snapshot != null && snapshot.getIndex() == next - 1;
        }
    }
}
