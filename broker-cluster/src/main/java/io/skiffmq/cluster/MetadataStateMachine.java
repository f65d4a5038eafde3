package io.skiffmq.cluster;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import org.apache.ratis.proto.RaftProtos.LogEntryProto;
import org.apache.ratis.proto.RaftProtos.RaftConfigurationProto;
import org.apache.ratis.proto.RaftProtos.RaftPeerProto;
import org.apache.ratis.proto.RaftProtos.RoleInfoProto;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftGroupMemberId;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.protocol.TermIndex;
import org.apache.ratis.server.storage.RaftStorage;
import org.apache.ratis.statemachine.TransactionContext;
import org.apache.ratis.statemachine.impl.BaseStateMachine;
import org.apache.ratis.statemachine.impl.SimpleStateMachineStorage;
import org.apache.ratis.statemachine.impl.SingleFileSnapshotInfo;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;
import org.apache.ratis.util.LifeCycle;

/**
 * The metadata group's state machine: unframes each committed entry ({@link EntryKind}) and hands the applier's
 * entries to the {@link LogApplier}, keeps the cluster's own small state (its name), writes and reads snapshots, and
 * completes appends once this node has applied them. Applying, snapshotting and reloading all run on Ratis' state
 * machine updater thread, which owns the applier's state; the cluster name is published through a volatile field.
 * Leader changes, configuration changes and a lasting lack of a leader are logged here, each once.
 */
final class MetadataStateMachine extends BaseStateMachine {
    private static final System.Logger LOG = System.getLogger(MetadataStateMachine.class.getName());
    /** "SKMS": a snapshot file of this state machine; then a version. */
    private static final int SNAPSHOT_MAGIC = 0x534b4d53;
    private static final int SNAPSHOT_VERSION = 1;

    /** A read-only request's first byte: the node's readings ({@link #query}). */
    static final byte READINGS = 1;

    private final LogApplier applier;
    private final String nodeName;
    /** This node's readings, for {@link #READINGS}: bytes its broker gives and another node's broker reads. */
    private final java.util.function.Supplier<byte[]> readings;
    private final SnapshotStorage storage = new SnapshotStorage();
    /**
     * Entries between two snapshots ({@link ClusterSettings#snapshotEvery}): Ratis asks more often, for the queue
     * groups that share its threshold ({@link QueueGroupMachine#ASKED_EVERY}).
     */
    private final long snapshotEvery;
    /** Appends waiting for this node to apply their index; guarded by itself. */
    private final TreeMap<Long, List<CompletableFuture<Long>>> waiting = new TreeMap<>();
    private volatile String clusterName;
    private volatile String leader;
    private volatile List<String> members = List.of();
    /** Set while no leader is known past Ratis' no-leader timeout: logged once until one is elected. */
    private volatile boolean leaderless;

    MetadataStateMachine(LogApplier applier, String nodeName, java.util.function.Supplier<byte[]> readings,
            long snapshotEvery) {
        this.applier = applier;
        this.snapshotEvery = snapshotEvery;
        this.nodeName = nodeName;
        this.readings = readings;
    }

    @Override
    public void initialize(RaftServer server, RaftGroupId groupId, RaftStorage raftStorage) throws IOException {
        super.initialize(server, groupId, raftStorage);
        storage.init(raftStorage);
        SnapshotFiles.removePartials(storage);
        getLifeCycle().startAndTransition(() -> load(storage.getLatestSnapshot()), IOException.class);
    }

    /** Before a snapshot from the leader replaces the state: Ratis reloads only a paused state machine. */
    @Override
    public void pause() {
        storage.paused();
        SnapshotFiles.pause(getLifeCycle());
    }

    @Override
    public void reinitialize() throws IOException {
        // a snapshot from the leader replaced the log: everything comes from it
        getLifeCycle().transition(LifeCycle.State.STARTING);
        load(storage.reload());
        getLifeCycle().transition(LifeCycle.State.RUNNING);
    }

    @Override
    public SimpleStateMachineStorage getStateMachineStorage() {
        return storage;
    }

    private void load(SingleFileSnapshotInfo snapshot) throws IOException {
        if (snapshot == null) {
            return;
        }
        SnapshotFiles.read(snapshot, SNAPSHOT_MAGIC, SNAPSHOT_VERSION, in -> {
            String name = in.readUTF();
            clusterName = name.isEmpty() ? null : name;
            applier.installSnapshot(in);
        });
        TermIndex last = snapshot.getTermIndex();
        setLastAppliedTermIndex(last);
        LOG.log(System.Logger.Level.INFO, "metadata state loaded from the snapshot at index {0}", last.getIndex());
        completeUpTo(last.getIndex());
    }

    @Override
    public long takeSnapshot() throws IOException {
        TermIndex last = getLastAppliedTermIndex();
        if (last == null || last.getIndex() < 0) {
            return -1;
        }
        var latest = storage.getLatestSnapshot();
        if (latest != null && last.getIndex() - latest.getIndex() < snapshotEvery) {
            return -1;
        }
        storage.updateLatestSnapshot(SnapshotFiles.write(storage, last, SNAPSHOT_MAGIC, SNAPSHOT_VERSION, out -> {
            String name = clusterName;
            out.writeUTF(name == null ? "" : name);
            applier.writeSnapshot(new SnapshotFiles.NonClosing(out));
        }));
        LOG.log(System.Logger.Level.INFO, "metadata snapshot taken at index {0}", last.getIndex());
        return last.getIndex();
    }

    @Override
    public CompletableFuture<Message> applyTransaction(TransactionContext transaction) {
        LogEntryProto entry = transaction.getLogEntry();
        ByteBuffer data = entry.getStateMachineLogEntry().getLogData().asReadOnlyByteBuffer();
        long index = entry.getIndex();
        EntryKind kind = EntryKind.of(data.get());
        switch (kind) {
            case APPLIER -> applier.apply(index, data.slice());
            case CLUSTER_NAME -> clusterName = EntryKind.text(data);
        }
        updateLastAppliedTermIndex(entry.getTerm(), index);
        completeUpTo(index);
        return CompletableFuture.completedFuture(Message.EMPTY);
    }

    /**
     * A read-only request, never on the log. Empty: a read barrier ({@link ClusterNode#caughtUp}), which Ratis passes
     * here once this node has applied the leader's commit index as of the request; the answer is the index applied
     * here, 8 bytes. {@link #READINGS}: another node asks for this node's readings ({@link ClusterNode#readingsOf}).
     */
    @Override
    public CompletableFuture<Message> query(Message request) {
        var content = request.getContent();
        if (!content.isEmpty() && content.byteAt(0) == READINGS) {
            byte[] answer = readings.get();
            return CompletableFuture.completedFuture(Message.valueOf(ByteString.copyFrom(answer)));
        }
        return CompletableFuture.completedFuture(Message.valueOf(ByteString.copyFrom(
            ByteBuffer.allocate(Long.BYTES).putLong(0, appliedIndex()))));
    }

    /** Completes with {@code index} once this node has applied it. */
    CompletableFuture<Long> whenApplied(long index) {
        CompletableFuture<Long> applied = new CompletableFuture<>();
        synchronized (waiting) {
            if (appliedIndex() < index) {
                waiting.computeIfAbsent(index, i -> new ArrayList<>(1)).add(applied);
                return applied;
            }
        }
        applied.complete(index);
        return applied;
    }

    private void completeUpTo(long index) {
        List<CompletableFuture<Long>> done = new ArrayList<>();
        synchronized (waiting) {
            Map<Long, List<CompletableFuture<Long>>> head = waiting.headMap(index, true);
            head.values().forEach(done::addAll);
            head.clear();
        }
        // outside the lock: what waits on them runs here
        done.forEach(f -> f.complete(index));
    }

    long appliedIndex() {
        TermIndex last = getLastAppliedTermIndex();
        return last == null ? 0 : Math.max(0, last.getIndex());
    }

    String clusterName() {
        return clusterName;
    }

    String leader() {
        return leader;
    }

    @Override
    public void notifyLeaderChanged(RaftGroupMemberId member, RaftPeerId newLeader) {
        String name = newLeader == null ? null : newLeader.toString();
        String previous = leader;
        leader = name;
        leaderless = false;
        if (name != null && !name.equals(previous)) {
            LOG.log(System.Logger.Level.INFO, "metadata leader is now {0}{1}", name,
                name.equals(nodeName) ? " (this node)" : "");
        }
    }

    @Override
    public void notifyConfigurationChanged(long term, long index, RaftConfigurationProto configuration) {
        List<String> now = configuration.getPeersList().stream().map(RaftPeerProto::getId)
            .map(id -> id.toStringUtf8()).sorted().toList();
        List<String> before = members;
        members = now;
        if (!now.equals(before)) {
            LOG.log(System.Logger.Level.INFO, "cluster members are now {0}", now);
        }
    }

    @Override
    public void notifyExtendedNoLeader(RoleInfoProto role) {
        if (!leaderless) {
            leaderless = true;
            LOG.log(System.Logger.Level.WARNING, "no metadata leader: a majority of the cluster is not reachable"
                + " from this node; metadata changes fail until it is");
        }
    }

    @Override
    public void close() {
        List<CompletableFuture<Long>> left = new ArrayList<>();
        synchronized (waiting) {
            waiting.values().forEach(left::addAll);
            waiting.clear();
        }
        left.forEach(f -> f.completeExceptionally(new NoMajorityException("the node is stopping", null)));
    }
}
