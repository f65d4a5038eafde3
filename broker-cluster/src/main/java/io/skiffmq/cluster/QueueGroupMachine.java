package io.skiffmq.cluster;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;
import org.apache.ratis.proto.RaftProtos.LogEntryProto;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftGroupMemberId;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.server.DivisionInfo;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.storage.RaftStorage;
import org.apache.ratis.statemachine.TransactionContext;
import org.apache.ratis.statemachine.impl.BaseStateMachine;
import org.apache.ratis.statemachine.impl.SimpleStateMachineStorage;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;

/**
 * A queue group's state machine on one node: unframes each committed entry and hands it to the
 * {@link QueueGroupApplier}. Two kinds of entry: {@link #LEADER} (a leader's node name: its index is the new epoch)
 * and {@link #COMMAND} (an epoch, then the applier's bytes), applied only when of the current epoch, so that a
 * deposed leader's commands, committed after a new leader's entry, change nothing; the reply says which. No
 * snapshots yet: a restart replays the whole log. Applying runs on Ratis' state machine updater thread of the
 * group, which owns {@link #epoch}; {@link #leader} is published for readers.
 */
final class QueueGroupMachine extends BaseStateMachine {
    /** Entry kinds; on disk, never reused. */
    static final byte LEADER = 1;
    static final byte COMMAND = 2;
    static final Message APPLIED = Message.valueOf(ByteString.copyFrom(new byte[] {1}));
    static final Message STALE = Message.valueOf(ByteString.copyFrom(new byte[] {0}));

    private final QueueGroupApplier applier;
    private final QueueGroups groups;
    private final SimpleStateMachineStorage storage = new SimpleStateMachineStorage();
    private String name;
    private long epoch = -1;
    private volatile String leader;

    QueueGroupMachine(QueueGroupApplier applier, QueueGroups groups) {
        this.applier = applier;
        this.groups = groups;
    }

    @Override
    public void initialize(RaftServer server, RaftGroupId groupId, RaftStorage raftStorage) throws IOException {
        super.initialize(server, groupId, raftStorage);
        storage.init(raftStorage);
        name = QueueGroups.name(groupId);
        getLifeCycle().startAndTransition(() -> { });
    }

    @Override
    public SimpleStateMachineStorage getStateMachineStorage() {
        return storage;
    }

    @Override
    public CompletableFuture<Message> applyTransaction(TransactionContext transaction) {
        LogEntryProto entry = transaction.getLogEntry();
        ByteBuffer data = entry.getStateMachineLogEntry().getLogData().asReadOnlyByteBuffer();
        long index = entry.getIndex();
        Message reply = APPLIED;
        byte kind = data.get();
        if (kind == LEADER) {
            String node = StandardCharsets.UTF_8.decode(data).toString();
            epoch = index;
            leader = node;
            applier.leader(name, node, index, node.equals(groups.self()) && leaderOf(entry.getTerm()));
        } else if (kind == COMMAND) {
            if (data.getLong() == epoch) {
                applier.apply(name, index, data.slice());
            } else {
                reply = STALE;
            }
        } else {
            throw new IllegalStateException("unknown queue group entry kind " + kind + ": written by a newer version?");
        }
        updateLastAppliedTermIndex(entry.getTerm(), index);
        return CompletableFuture.completedFuture(reply);
    }

    /** Whether this node's member leads the group now, in {@code term}: not a leader entry replayed from before. */
    private boolean leaderOf(long term) {
        try {
            DivisionInfo info = getServer().get().getDivision(getGroupId()).getInfo();
            return info.isLeader() && info.getCurrentTerm() == term;
        } catch (IOException | InterruptedException | java.util.concurrent.ExecutionException e) {
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
            return false;
        }
    }

    String leader() {
        return leader;
    }

    @Override
    public void notifyLeaderChanged(RaftGroupMemberId member, RaftPeerId newLeader) {
        if (newLeader != null && newLeader.equals(member.getPeerId())) {
            groups.announce(getGroupId());
        } else {
            applier.notLeader(name);
        }
    }
}
