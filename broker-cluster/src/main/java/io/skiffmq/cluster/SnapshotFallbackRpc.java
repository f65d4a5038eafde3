package io.skiffmq.cluster;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
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
import org.apache.ratis.server.leader.LogAppenderBase;
import org.apache.ratis.server.raftlog.RaftLog;
import org.apache.ratis.server.raftlog.RaftLogIOException;
import org.apache.ratis.statemachine.SnapshotInfo;
import org.apache.ratis.util.DataQueue;

/**
 * Ratis' gRPC transport, whose leader sends its snapshot to a follower whose next entry is the first of the leader's
 * log when the entry before it was purged (Ratis 3.2.2 sends the entries instead, finds no previous entry for them,
 * and its appender for that follower dies for as long as the leader leads: RATIS-2487, fixed after 3.2.2), and
 * whose appender outlives a purge of the entries it is reading (Ratis 3.2.2's dies of a {@link RaftLogIOException},
 * and a dead appender is not restarted: RATIS-2499, fixed after 3.2.2).
 *
 * <p>It happens after a leader change: Ratis starts a segment of the log at each new term, and a snapshot cuts the
 * log by whole segments, so the leader's log can start just after the old term's last entry, below its snapshot's
 * index. The deposed leader, restarted, has its log up to exactly that entry. Named in {@code raft.rpc.type} by
 * class name (Ratis makes it by reflection).
 */
public final class SnapshotFallbackRpc implements RpcType {
    private static final System.Logger LOG = System.getLogger(SnapshotFallbackRpc.class.getName());

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
     * Ratis' gRPC appender of one follower, with RATIS-2487's two checks and a read of purged entries given up; on
     * the appender's own thread.
     */
    static final class Appender extends GrpcLogAppender {
        Appender(RaftServer.Division server, LeaderState state, FollowerInfo follower) {
            super(server, state, follower);
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

        /**
         * No entries whose previous entry is unknown, nor entries purged while they were read (a snapshot of the
         * leader cut its log meanwhile, as a follower far behind catches up): the next round sends the snapshot
         * instead.
         */
        @Override
        public AppendEntriesRequestProto newAppendEntriesRequest(long callId, boolean heartbeat)
                throws RaftLogIOException {
            FollowerInfo follower = getFollower();
            long next = follower.getNextIndex();
            if (!heartbeat && getHeartbeatWaitTimeMs() > 0 && next != follower.getSnapshotIndex() + 1
                    && !previousKnown(next)) {
                return null;
            }
            try {
                return super.newAppendEntriesRequest(callId, heartbeat);
            } catch (RaftLogIOException e) {
                if (next >= getRaftLog().getStartIndex()) {
                    throw e;
                }
                // what was read before the purge stays in the base class' buffer, whose next use must find it empty
                PurgedRead.clear(this);
                SnapshotFallbackRpc.LOG.log(System.Logger.Level.INFO, "{0}: entries from {1,number,#} were purged as"
                    + " they were read; the follower gets the snapshot instead", this, next);
                return null;
            }
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

    /** The entries {@link LogAppenderBase} keeps between reading and sending them: private, not emptied on a failure. */
    private static final class PurgedRead {
        private static final VarHandle BUFFER;

        static {
            try {
                BUFFER = MethodHandles.privateLookupIn(LogAppenderBase.class, MethodHandles.lookup())
                    .findVarHandle(LogAppenderBase.class, "buffer", DataQueue.class);
            } catch (ReflectiveOperationException e) {
                throw new ExceptionInInitializerError(e);
            }
        }

        private PurgedRead() {
        }

        static void clear(LogAppenderBase appender) {
            ((DataQueue<?>) BUFFER.get(appender)).clear();
        }
    }
}
