package io.skiffmq.cluster;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Executor;
import org.apache.ratis.proto.RaftProtos.LogEntryProto;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftGroupMemberId;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.server.DivisionInfo;
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
 * A queue group's state machine on one node: unframes each committed entry and hands it to the
 * {@link QueueGroupApplier}. Three kinds of entry: {@link #LEADER} (a leader's node name: its index is the new
 * epoch), {@link #COMMAND} (an epoch, then the applier's bytes), applied only when of the current epoch, so that a
 * deposed leader's commands, committed after a new leader's entry, change nothing (the reply says which), and
 * {@link #TRANSFER} (the applier's bytes, from any node: a queue moving in from another group).
 *
 * <p>Snapshots (the epoch, the leader and the applier's state) are asked for by Ratis every {@link #ASKED_EVERY}
 * entries at least, and taken once the entries applied since the last one add up to {@code everyBytes}
 * ({@link ClusterSettings#queueSnapshotBytes}: about what a restarted member replays) and to a quarter of the last
 * snapshot's size: a queue holding many messages is not written whole again for a few changes, so what snapshots
 * write stays within about four times what the log received, and a restart replays at most a quarter of what the
 * snapshot holds (at half, a restart of 10M messages replayed 3.9M; docs/quorum-queues.md). The state is taken on
 * the apply thread ({@link QueueGroupApplier#snapshot}) and written on {@code writer} while applying goes on; the
 * log is cut at its index once it is on disk, the next time Ratis asks. Applying, taking and loading run on Ratis'
 * state machine updater thread of the group, which owns {@link #epoch} and the snapshot fields; {@link #leader} is
 * published for readers. At start the snapshot is read on {@code reader} while Ratis reads the log after it
 * ({@link #loading}): applying and snapshots wait for it, Ratis' leadership callbacks are put off until it is read.
 */
final class QueueGroupMachine extends BaseStateMachine {
    /** Entry kinds; on disk, never reused. */
    static final byte LEADER = 1;
    static final byte COMMAND = 2;
    /** The applier's bytes, from any node and outside the epochs: {@link QueueGroupApplier#transfer}. */
    static final byte TRANSFER = 3;
    /**
     * Nothing to apply: appended by the leader after a leader or transfer entry, so that the followers learn that it
     * is committed at once (the queue server appends no commit-index entries of its own; {@link ClusterNode}), not
     * with the next heartbeat. Their nodes route to the queue's leader by the leader entry.
     */
    static final byte NOTICE = 4;
    static final Message APPLIED = Message.valueOf(ByteString.copyFrom(new byte[] {1}));
    static final Message STALE = Message.valueOf(ByteString.copyFrom(new byte[] {0}));
    private static final System.Logger LOG = System.getLogger(QueueGroupMachine.class.getName());
    /** "SKQS": a snapshot file of a queue group; then a version. */
    private static final int SNAPSHOT_MAGIC = 0x534b5153;
    private static final int SNAPSHOT_VERSION = 1;
    /** Ratis asks a group whether to take a snapshot after at most this many entries (the server's threshold). */
    static final long ASKED_EVERY = 64;

    private final QueueGroupApplier applier;
    private final QueueGroups groups;
    private final SnapshotStorage storage = new SnapshotStorage();
    private final Executor writer;
    /** Reads the snapshot at start ({@link #loading}). */
    private final Executor reader;
    private final long everyBytes;
    private String name;
    private long epoch = -1;
    private volatile String leader;
    /** The snapshot being written, or null. */
    private volatile CompletableFuture<SingleFileSnapshotInfo> writing;
    /** The index of the last snapshot Ratis was told of (it cuts the log there). */
    private long snapshotIndex = -1;
    /** The size of the last snapshot's file, and the bytes of the entries applied since it was taken. */
    private long snapshotBytes;
    private long bytesSince;
    /**
     * The group's state read from its snapshot when the node starts, on {@link #reader} while Ratis reads the log
     * after it; done once read. Applying and snapshots wait for it ({@link #loaded}); Ratis' leadership callbacks,
     * called under its locks, are put off until then instead ({@link #whenLoaded}).
     */
    private volatile CompletableFuture<Void> loading = CompletableFuture.completedFuture(null);
    /** The callbacks put off while the snapshot is read, in order; guarded by itself. */
    private final List<Runnable> putOff = new ArrayList<>();
    /** The snapshot is being read: callbacks are put off. Guarded by {@link #putOff}. */
    private boolean reading;

    QueueGroupMachine(QueueGroupApplier applier, QueueGroups groups, Executor writer, Executor reader,
            long everyBytes) {
        this.applier = applier;
        this.groups = groups;
        this.writer = writer;
        this.reader = reader;
        this.everyBytes = everyBytes;
    }

    @Override
    public void initialize(RaftServer server, RaftGroupId groupId, RaftStorage raftStorage) throws IOException {
        super.initialize(server, groupId, raftStorage);
        storage.init(raftStorage);
        SnapshotFiles.removePartials(storage);
        name = QueueGroups.name(groupId);
        getLifeCycle().startAndTransition(() -> {
            SingleFileSnapshotInfo snapshot = storage.getLatestSnapshot();
            if (snapshot != null) {
                // what Ratis reads of it as it starts (where its log resumes) is the file's name
                noted(snapshot);
                synchronized (putOff) {
                    reading = true;
                }
                loading = CompletableFuture.runAsync(() -> {
                    try {
                        read(snapshot);
                    } catch (IOException | RuntimeException e) {
                        // the group fails when it first applies (Ratis closes it), as its start failed before
                        LOG.log(System.Logger.Level.ERROR, "queue group " + name + ": its snapshot "
                            + snapshot.getFile().getPath() + " cannot be read", e);
                        throw new CompletionException(e);
                    } finally {
                        runPutOff();
                    }
                }, reader);
            }
        }, IOException.class);
    }

    /** Waits for the state read from the snapshot at start ({@link #loading}); throws when it could not be read. */
    private void loaded() {
        try {
            loading.join();
        } catch (CompletionException e) {
            throw new IllegalStateException("queue group " + name + ": its snapshot could not be read", e.getCause());
        }
    }

    /** Runs {@code action} now, or once the snapshot is read when it is being read, after those put off before. */
    private void whenLoaded(Runnable action) {
        synchronized (putOff) {
            if (reading) {
                putOff.add(action);
                return;
            }
        }
        action.run();
    }

    /** On the reader, the snapshot read (or not): the callbacks put off meanwhile, in order, until none are left. */
    private void runPutOff() {
        while (true) {
            List<Runnable> due;
            synchronized (putOff) {
                if (putOff.isEmpty()) {
                    reading = false;
                    return;
                }
                due = new ArrayList<>(putOff);
                putOff.clear();
            }
            for (Runnable action : due) {
                try {
                    action.run();
                } catch (RuntimeException e) {
                    LOG.log(System.Logger.Level.ERROR, "queue group " + name + ": a leadership change", e);
                }
            }
        }
    }

    /** Before a snapshot from the leader replaces the state: Ratis reloads only a paused state machine. */
    @Override
    public void pause() {
        storage.paused();
        SnapshotFiles.pause(getLifeCycle());
    }

    @Override
    public void reinitialize() throws IOException {
        // what the start read (or failed to) is replaced by the leader's snapshot
        loading.exceptionally(failed -> null).join();
        loading = CompletableFuture.completedFuture(null);
        // the leader's snapshot replaced the log: everything comes from it; a snapshot of ours being written is older
        writing = null;
        getLifeCycle().transition(LifeCycle.State.STARTING);
        SingleFileSnapshotInfo snapshot = storage.reload();
        if (snapshot != null) {
            noted(snapshot);
            read(snapshot);
        }
        getLifeCycle().transition(LifeCycle.State.RUNNING);
    }

    /** The snapshot the state is (or is being) read from: applied up to its index, the log cut there. */
    private void noted(SingleFileSnapshotInfo snapshot) throws IOException {
        setLastAppliedTermIndex(snapshot.getTermIndex());
        snapshotIndex = snapshot.getIndex();
        snapshotBytes = java.nio.file.Files.size(snapshot.getFile().getPath());
        bytesSince = 0;
    }

    /** Reads the state a snapshot holds: the epoch, the leader and the applier's. */
    private void read(SingleFileSnapshotInfo snapshot) throws IOException {
        long start = System.nanoTime();
        SnapshotFiles.read(snapshot, SNAPSHOT_MAGIC, SNAPSHOT_VERSION, in -> {
            epoch = in.readLong();
            String node = in.readUTF();
            leader = node.isEmpty() ? null : known(node);
            applier.restore(name, in);
        });
        LOG.log(System.Logger.Level.INFO, "queue group {0} loaded from its snapshot at index {1,number,#} ({2,number,#}"
            + " bytes) in {3,number,#} ms", name, snapshot.getIndex(), snapshotBytes,
            (System.nanoTime() - start) / 1_000_000);
        if (epoch >= 0) {
            applier.leader(name, leader, epoch, false);
        }
    }

    /**
     * The leader a leader entry names, as far as this member knows now: none when it names this member and the entry
     * is from before (replayed at start, or in a snapshot): this member no longer leads, and which does is known once
     * the next leader entry is applied here.
     */
    private String known(String node) {
        return node.equals(groups.self()) ? null : node;
    }

    /**
     * Ratis asks (its threshold of entries passed, or the group stops): starts a snapshot, or reports the one
     * written since, whose index the log is then cut at; -1 for none.
     */
    @Override
    public long takeSnapshot() {
        loaded();
        if (writing != null) {
            if (!writing.isDone()) {
                return -1;
            }
            CompletableFuture<SingleFileSnapshotInfo> done = writing;
            writing = null;
            try {
                SingleFileSnapshotInfo info = done.join();
                if (info.getIndex() <= snapshotIndex) {
                    return -1;
                }
                storage.updateLatestSnapshot(info);
                snapshotIndex = info.getIndex();
                snapshotBytes = java.nio.file.Files.size(info.getFile().getPath());
                return snapshotIndex;
            } catch (CompletionException | IOException e) {
                LOG.log(System.Logger.Level.ERROR, "queue group " + name + ": a snapshot could not be written",
                    e instanceof CompletionException ? e.getCause() : e);
                return -1;
            }
        }
        TermIndex last = getLastAppliedTermIndex();
        if (last == null || last.getIndex() <= snapshotIndex || bytesSince < Math.max(everyBytes, snapshotBytes / 4)) {
            return -1;
        }
        long start = System.nanoTime();
        QueueGroupApplier.Snapshot state = applier.snapshot(name);
        long taken = System.nanoTime() - start;
        long atEpoch = epoch;
        String atLeader = leader;
        bytesSince = 0;
        writing = CompletableFuture.supplyAsync(() -> {
            try {
                SingleFileSnapshotInfo info = SnapshotFiles.write(storage, last, SNAPSHOT_MAGIC, SNAPSHOT_VERSION,
                    out -> {
                        out.writeLong(atEpoch);
                        out.writeUTF(atLeader == null ? "" : atLeader);
                        state.write(out);
                    });
                LOG.log(System.Logger.Level.INFO, "queue group {0}: snapshot at index {1,number,#} taken in"
                    + " {2,number,#} ms on the apply thread, written in {3,number,#} ms", name, last.getIndex(),
                    taken / 1_000_000, (System.nanoTime() - start - taken) / 1_000_000);
                return info;
            } catch (IOException e) {
                throw new CompletionException(e);
            }
        }, writer);
        return -1;
    }

    @Override
    public SimpleStateMachineStorage getStateMachineStorage() {
        return storage;
    }

    @Override
    public CompletableFuture<Message> applyTransaction(TransactionContext transaction) {
        loaded();
        LogEntryProto entry = transaction.getLogEntry();
        ByteBuffer data = entry.getStateMachineLogEntry().getLogData().asReadOnlyByteBuffer();
        long index = entry.getIndex();
        Message reply = APPLIED;
        bytesSince += data.remaining();
        byte kind = data.get();
        if (kind == LEADER) {
            String node = StandardCharsets.UTF_8.decode(data).toString();
            boolean live = node.equals(groups.self()) && leaderOf(entry.getTerm());
            epoch = index;
            leader = live ? node : known(node);
            LOG.log(System.Logger.Level.DEBUG, "queue group {0}: leader entry of {1} applied at index {2,number,#}",
                name, node, index);
            applier.leader(name, leader, index, live);
            if (live) {
                groups.notice(getGroupId());
            }
        } else if (kind == COMMAND) {
            if (data.getLong() != epoch || !applier.applyCommand(name, index, data.slice())) {
                reply = STALE;
            }
        } else if (kind == TRANSFER) {
            applier.transfer(name, index, data.slice());
            if (leaderOf(entry.getTerm())) {
                groups.notice(getGroupId());
            }
        } else if (kind != NOTICE) {
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
        LOG.log(System.Logger.Level.INFO, "queue group {0}: leader is now {1}{2}", name, newLeader,
            member.getPeerId().equals(newLeader) ? " (this node)" : "");
        whenLoaded(() -> {
            if (newLeader != null && newLeader.equals(member.getPeerId())) {
                groups.announce(getGroupId());
            } else {
                applier.notLeader(name);
            }
        });
    }

    /**
     * This node's leadership ended (it stepped down, cut off from a majority, or handed it over): its live queues
     * go at once, so that publishes here wait in the hold for the next leader instead of meeting a log that refuses
     * them. Ratis tells {@link #notifyLeaderChanged} only once another leader is known, which a node cut off never
     * learns.
     */
    @Override
    public void notifyNotLeader(java.util.Collection<TransactionContext> pendingEntries) {
        whenLoaded(() -> applier.notLeader(name));
    }

    /** Waits for a snapshot being read or written: the group is stopping. */
    @Override
    public void close() {
        loading.exceptionally(failed -> null).join();
        CompletableFuture<SingleFileSnapshotInfo> left = writing;
        if (left != null) {
            try {
                left.join();
            } catch (CompletionException e) {
                LOG.log(System.Logger.Level.ERROR, "queue group " + name + ": a snapshot could not be written",
                    e.getCause());
            }
        }
    }
}
