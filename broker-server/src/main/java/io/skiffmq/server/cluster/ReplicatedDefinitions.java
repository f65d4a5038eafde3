package io.skiffmq.server.cluster;

import io.skiffmq.cluster.LogApplier;
import io.skiffmq.cluster.MetadataLog;
import io.skiffmq.cluster.NoMajorityException;
import io.skiffmq.core.SharedDefinitions;
import io.skiffmq.core.definitions.DefinitionChange.InVhost;
import io.skiffmq.core.definitions.DefinitionChange.NextQueueId;
import io.skiffmq.core.definitions.DefinitionChange.VhostAdded;
import io.skiffmq.core.definitions.DefinitionChange.VhostChange;
import io.skiffmq.core.definitions.DefinitionChange.VhostDeleted;
import io.skiffmq.store.definitions.VhostReplica;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeoutException;
import io.skiffmq.core.definitions.BrokerDefinitions;
import io.skiffmq.core.definitions.DefinitionChange;
import io.skiffmq.core.definitions.DefinitionChange.BrokerChange;
import io.skiffmq.core.definitions.DefinitionCodec;
import io.skiffmq.server.authz.DefinitionsLog;
import io.skiffmq.store.definitions.BrokerReplica;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * The broker's definitions (virtual hosts, users, permissions, topic permissions, limits) replicated by the
 * cluster's metadata log: each change is one entry ({@link DefinitionCodec}'s bytes after a kind byte), applied on
 * every node in commit order, first to the {@link BrokerReplica} held here (a change costs O(1), as in the single
 * node's store), then to the broker ({@link Target}) once it is {@link #attach attached}: entries may be applied
 * while the node starts, before the broker's parts exist. A snapshot is the changes that rebuild the definitions,
 * as the replica writes them for the single node's snapshot file ({@link BrokerReplica#snapshot}), then each virtual
 * host's shared definitions as {@link InVhost} changes.
 *
 * <p>It is also the virtual hosts' {@link SharedDefinitions}: their durable exchanges, queue records and the bindings
 * between them are {@link InVhost} changes, kept here per virtual host ({@link VhostReplica}) and handed to the
 * broker, which applies them to the {@link io.skiffmq.core.VirtualHost} ({@code applyShared}).
 *
 * <p>Entries: {@code 1} then one change; {@code 2} then changes (each an int length and its bytes) applied only when
 * the definitions have no virtual host and no user, which is how each node of a new cluster offers its first-start
 * definitions (guest and {@code /}) without the others' copies, or a later node's, adding to what is there;
 * {@code 3} then a replicated quorum queue's leader ({@link #recordLeader}), as RabbitMQ's quorum queue record
 * carries its leader, so that nodes outside its group reach it; {@code 4} and {@code 5}, a quorum queue's membership
 * change asked for and ended ({@link #askMove}, {@link #endMove}). A snapshot holds these after the changes.
 *
 * <p>The definitions and the target are owned by the log's applier thread; {@link #attach} takes them over under
 * {@code this}, which the applier's methods also hold.
 */
public final class ReplicatedDefinitions implements LogApplier, DefinitionsLog, SharedDefinitions {
    private static final byte CHANGE = 1;
    private static final byte SEED = 2;
    private static final byte LEADER = 3;
    /** A quorum queue's membership change asked for ({@link #askMove}). */
    private static final byte MOVE = 4;
    /** A membership change ended: done (the queue's members are the new ones) or abandoned ({@link #endMove}). */
    private static final byte MOVE_ENDED = 5;

    /** What the applied changes act on: the broker's definitions in force and their effects. */
    public interface Target {
        /** A committed change, after the definitions here have it; an {@link InVhost} for a virtual host's. */
        void applied(BrokerChange change);

        /**
         * Every definition replaced: at {@link #attach}, and when a snapshot is installed or the node resets.
         *
         * @param vhosts each virtual host's shared definitions, as changes that rebuild them
         */
        void replaceAll(BrokerDefinitions definitions, Map<String, List<VhostChange>> vhosts);
    }

    private BrokerReplica replica = new BrokerReplica();
    /** Each virtual host's shared definitions (exchanges, queue records, bindings), by virtual host name. */
    private Map<String, VhostReplica> vhosts = new HashMap<>();
    private Target target;
    private volatile MetadataLog log;
    private volatile String node;

    /** @param node this node's name */
    void log(MetadataLog log, String node) {
        this.log = log;
        this.node = node;
    }

    @Override
    public String node() {
        return node;
    }

    /** What makes the queues that stand here for those homed on other nodes; set once the listeners are up. */
    private volatile java.util.function.BiFunction<String, DefinitionChange.QueueHomed, io.skiffmq.core.queue.Queue>
        remoteQueues;

    public void remoteQueues(
            java.util.function.BiFunction<String, DefinitionChange.QueueHomed, io.skiffmq.core.queue.Queue> factory) {
        this.remoteQueues = factory;
    }

    @Override
    public io.skiffmq.core.queue.Queue remoteQueue(String vhost, DefinitionChange.QueueHomed record) {
        var factory = remoteQueues;
        if (factory == null) {
            return null;
        }
        ReplicatedQueues replicated = queues;
        if (replicated != null && replicated.replicated(vhost, record)) {
            QueueCommands.Key key = ReplicatedQueues.key(vhost, record);
            PublishHolds holds = replicated.holds();
            if (holds.holding(key)) {
                return null; // publishes held between two leaders go first: later ones are held behind them
            }
            io.skiffmq.core.queue.Queue drainedTo = holds.heldTarget(key);
            if (drainedTo != null) {
                return drainedTo;
            }
            DefinitionChange.QueueHomed atLeader = replicated.atLeader(vhost, record);
            io.skiffmq.core.queue.Queue proxy = atLeader == null ? null : factory.apply(vhost, atLeader);
            if (proxy != null) {
                io.skiffmq.server.peer.PeerLinks.onUnsent(proxy, holds.unsent(key, vhost, record));
            }
            return proxy;
        }
        return factory.apply(vhost, record);
    }

    /** What reaches a replicated queue at the leader {@code atLeader} names (homed there); null before the links. */
    io.skiffmq.core.queue.Queue leaderQueue(String vhost, DefinitionChange.QueueHomed atLeader) {
        var factory = remoteQueues;
        return factory == null ? null : factory.apply(vhost, atLeader);
    }

    @Override
    public io.skiffmq.core.queue.Queue unled(String vhost, DefinitionChange.QueueHomed record) {
        ReplicatedQueues replicated = queues;
        return replicated != null && replicated.replicated(vhost, record)
            ? replicated.holds().unled(ReplicatedQueues.key(vhost, record), vhost, record) : null;
    }

    /** The replicated quorum queues; null until the node starts. */
    private volatile ReplicatedQueues queues;

    void queues(ReplicatedQueues replicated) {
        this.queues = replicated;
    }

    @Override
    public boolean replicated(String vhost, DefinitionChange.QueueHomed record) {
        ReplicatedQueues replicated = queues;
        return replicated != null && replicated.replicated(vhost, record);
    }

    @Override
    public java.util.List<String> replicaNodes(String vhost, DefinitionChange.QueueHomed record) {
        ReplicatedQueues replicated = queues;
        java.util.List<String> members = replicated == null ? null : replicated.members(vhost, record);
        if (members == null) {
            return null;
        }
        String leader = replicated.leader(vhost, record);
        java.util.List<String> nodes = new java.util.ArrayList<>(members.size());
        if (leader != null && members.contains(leader)) {
            nodes.add(leader);
        }
        members.stream().filter(m -> !m.equals(leader)).forEach(nodes::add);
        return nodes;
    }

    @Override
    public void replicaDeleted(String vhost, DefinitionChange.QueueHomed record) {
        ReplicatedQueues replicated = queues;
        if (replicated != null) {
            replicated.deleted(vhost, record);
        }
    }

    @Override
    public CompletableFuture<Void> whenLed(String vhost, DefinitionChange.QueueHomed record) {
        ReplicatedQueues replicated = queues;
        return replicated == null ? CompletableFuture.completedFuture(null) : replicated.whenLed(vhost, record);
    }

    /** Hands the definitions applied so far to {@code target}, and every later change. */
    public synchronized void attach(Target target) {
        target.replaceAll(replica.definitions(), vhostDefinitions());
        this.target = target;
    }

    /**
     * Appends a change of a virtual host's shared definitions; completes once committed and applied here, fails
     * with a {@link TimeoutException} without a majority.
     */
    @Override
    public CompletableFuture<Void> append(String vhost, VhostChange change) {
        return timedOut(log.append(entry(new InVhost(vhost, change))));
    }

    /** Completes with nothing once {@code done} has; a {@link NoMajorityException} becomes a timeout. */
    private static CompletableFuture<Void> timedOut(CompletableFuture<Long> done) {
        return done.<Void>thenApply(index -> null)
            .exceptionallyCompose(failure -> {
                Throwable cause = failure instanceof CompletionException && failure.getCause() != null
                    ? failure.getCause() : failure;
                return CompletableFuture.failedFuture(cause instanceof NoMajorityException
                    ? new TimeoutException(cause.getMessage()) : cause);
            });
    }

    @Override
    public CompletableFuture<Void> caughtUp() {
        return timedOut(log.caughtUp());
    }

    private Map<String, List<VhostChange>> vhostDefinitions() {
        Map<String, List<VhostChange>> all = new HashMap<>();
        vhosts.forEach((name, vhost) -> all.put(name, changes(vhost)));
        return all;
    }

    /** The changes that rebuild a virtual host's shared definitions. */
    private static List<VhostChange> changes(VhostReplica vhost) {
        List<VhostChange> changes = new ArrayList<>();
        vhost.snapshot(change -> {
            if (!(change instanceof NextQueueId)) { // queue ids are each node's own store's
                changes.add((VhostChange) change);
            }
        });
        return changes;
    }

    @Override
    public boolean appliesChanges() {
        return true;
    }

    /** One entry per change; completes once the last is committed by a majority and applied here. */
    @Override
    public CompletableFuture<Void> append(List<? extends BrokerChange> changes) {
        CompletableFuture<Long> last = CompletableFuture.completedFuture(0L);
        for (BrokerChange change : changes) {
            last = log.append(entry(change));
        }
        return last.thenApply(index -> null);
    }

    /** The log entry of one change. */
    static ByteBuffer entry(BrokerChange change) {
        byte[] bytes = DefinitionCodec.encode(change);
        return ByteBuffer.allocate(1 + bytes.length).put(CHANGE).put(bytes).flip();
    }

    /** The log entry that offers {@code seed} as the first definitions of a cluster that has none. */
    static ByteBuffer seedEntry(List<? extends BrokerChange> seed) {
        List<byte[]> encoded = seed.stream().map(DefinitionCodec::encode).toList();
        ByteBuffer entry = ByteBuffer.allocate(1 + encoded.stream().mapToInt(b -> 4 + b.length).sum()).put(SEED);
        encoded.forEach(b -> entry.putInt(b.length).put(b));
        return entry.flip();
    }

    /** Offers {@code seed} as the cluster's first definitions: applied only where there are none yet. */
    CompletableFuture<Void> seed(List<? extends BrokerChange> seed) {
        return log.append(seedEntry(seed)).thenApply(index -> null);
    }

    @Override
    public synchronized void apply(long index, ByteBuffer entry) {
        byte kind = entry.get();
        if (kind == CHANGE) {
            apply(decode(entry, entry.remaining()));
        } else if (kind == SEED) {
            BrokerDefinitions definitions = replica.definitions();
            boolean empty = definitions.vhosts().isEmpty() && definitions.users().isEmpty();
            while (entry.hasRemaining()) {
                BrokerChange change = decode(entry, entry.getInt());
                if (empty) {
                    apply(change);
                }
            }
        } else if (kind == LEADER) {
            applyLeader(entry);
        } else if (kind == MOVE || kind == MOVE_ENDED) {
            applyMove(kind, entry);
        } else {
            throw new IllegalStateException("metadata entry " + index + " is of kind " + kind
                + ", which this version does not know: was it written by a newer node?");
        }
    }

    private void apply(BrokerChange change) {
        if (change instanceof InVhost in) {
            VhostReplica vhost = vhosts.get(in.vhost());
            if (vhost == null) {
                return; // deleted since
            }
            vhost.apply(in.change());
            if (in.change() instanceof DefinitionChange.QueueDeleted deleted) {
                leaders.keySet().removeIf(k -> k.vhost().equals(in.vhost()) && k.name().equals(deleted.name()));
                memberSets.keySet().removeIf(k -> k.vhost().equals(in.vhost()) && k.name().equals(deleted.name()));
                pendingMoves.keySet().removeIf(k -> k.vhost().equals(in.vhost()) && k.name().equals(deleted.name()));
            }
        } else {
            replica.apply(change);
            if (change instanceof VhostAdded added) {
                vhosts.putIfAbsent(added.vhost().name(), new VhostReplica());
            } else if (change instanceof VhostDeleted deleted) {
                vhosts.remove(deleted.name());
                leaders.keySet().removeIf(k -> k.vhost().equals(deleted.name()));
                memberSets.keySet().removeIf(k -> k.vhost().equals(deleted.name()));
                pendingMoves.keySet().removeIf(k -> k.vhost().equals(deleted.name()));
            }
        }
        if (target != null) {
            target.applied(change);
        }
    }

    /** The change in the next {@code length} bytes of {@code entry}, which it moves past them. */
    private static BrokerChange decode(ByteBuffer entry, int length) {
        ByteBuffer bytes = entry.slice(entry.position(), length);
        entry.position(entry.position() + length);
        DefinitionChange change = DefinitionCodec.decode(bytes);
        if (!(change instanceof BrokerChange broker)) {
            throw new IllegalStateException("not a broker definition change: " + change);
        }
        return broker;
    }

    // ---- the leaders of replicated queues, for the nodes outside their groups ---------------------------------

    /** A replicated queue's leader as the metadata log last recorded it, and the group's epoch it led. */
    record RecordedLeader(String node, long epoch) {
    }

    /** Written on the applier thread (under {@code this}), read on any. */
    private final Map<QueueCommands.Key, RecordedLeader> leaders = new java.util.concurrent.ConcurrentHashMap<>();

    /**
     * Records that {@code leader} leads the queue's group from {@code epoch} on: one entry per leader change, which
     * the leader appends once its live queue is up. Applied on every node; an older epoch than the one recorded (a
     * replay, or a late append) changes nothing.
     */
    CompletableFuture<Long> recordLeader(QueueCommands.Key key, String leader, long epoch) {
        return log.append(leaderEntry(key, leader, epoch));
    }

    /** The log entry that records {@code leader} as the queue's leader from {@code epoch} on. */
    static ByteBuffer leaderEntry(QueueCommands.Key key, String leader, long epoch) {
        return ByteBuffer.wrap(leaderEntry(key, new RecordedLeader(leader, epoch)));
    }

    /** The leader the metadata log recorded for the queue, or null. */
    RecordedLeader recordedLeader(QueueCommands.Key key) {
        return leaders.get(key);
    }

    private static byte[] leaderEntry(QueueCommands.Key key, RecordedLeader leader) {
        java.io.ByteArrayOutputStream bytes = new java.io.ByteArrayOutputStream();
        try (DataOutputStream out = new DataOutputStream(bytes)) {
            out.writeByte(LEADER);
            out.writeUTF(key.vhost());
            out.writeUTF(key.name());
            out.writeLong(key.incarnation());
            out.writeUTF(leader.node());
            out.writeLong(leader.epoch());
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
        return bytes.toByteArray();
    }

    private void applyLeader(ByteBuffer entry) {
        try {
            byte[] bytes = new byte[entry.remaining()];
            entry.get(bytes);
            DataInputStream in = new DataInputStream(new java.io.ByteArrayInputStream(bytes));
            recorded(new QueueCommands.Key(in.readUTF(), in.readUTF(), in.readLong()),
                new RecordedLeader(in.readUTF(), in.readLong()));
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    private void recorded(QueueCommands.Key key, RecordedLeader leader) {
        if (!vhosts.containsKey(key.vhost())) {
            return; // deleted since
        }
        RecordedLeader before = leaders.get(key);
        if (before != null && before.epoch() >= leader.epoch()) {
            return;
        }
        leaders.put(key, leader);
        ReplicatedQueues replicated = queues;
        if (replicated != null) {
            replicated.leaderRecorded(key);
        }
    }

    // ---- the members of replicated queues, changed since declared (docs/quorum-queues.md, "Changing members") --

    /** A membership change under way: its id, and the members the queue is to have. */
    record Move(long id, List<String> members) {
    }

    /** The members of each queue whose members were changed; written on the applier thread, read on any. */
    private final Map<QueueCommands.Key, List<String>> memberSets = new java.util.concurrent.ConcurrentHashMap<>();
    /** The membership changes asked for and not ended; written on the applier thread, read on any. */
    private final Map<QueueCommands.Key, Move> pendingMoves = new java.util.concurrent.ConcurrentHashMap<>();

    /** The members the metadata log gives the queue since a membership change, or null (those it was declared with). */
    List<String> memberSet(QueueCommands.Key key) {
        return memberSets.get(key);
    }

    /** The membership change of the queue under way, or null. */
    Move pendingMove(QueueCommands.Key key) {
        return pendingMoves.get(key);
    }

    /** Asks for the queue's members to become {@code members}: the leader of its group carries the change out. */
    CompletableFuture<Long> askMove(QueueCommands.Key key, long id, List<String> members) {
        return log.append(moveEntry(true, key, id, members, false));
    }

    /**
     * Ends the change {@code id}: {@code done}, the queue's members are the new ones from this entry on; else it is
     * abandoned and they stay. The first end of a change in the log wins; a later one changes nothing.
     */
    CompletableFuture<Long> endMove(QueueCommands.Key key, long id, boolean done) {
        return log.append(moveEntry(false, key, id, List.of(), done));
    }

    /** The log entry of a move asked for ({@code asked}) or ended. */
    static ByteBuffer moveEntry(boolean asked, QueueCommands.Key key, long id, List<String> members, boolean done) {
        return ByteBuffer.wrap(moveEntry(asked ? MOVE : MOVE_ENDED, key, id, members, done));
    }

    private static byte[] moveEntry(byte kind, QueueCommands.Key key, long id, List<String> members, boolean done) {
        java.io.ByteArrayOutputStream bytes = new java.io.ByteArrayOutputStream();
        try (DataOutputStream out = new DataOutputStream(bytes)) {
            out.writeByte(kind);
            out.writeUTF(key.vhost());
            out.writeUTF(key.name());
            out.writeLong(key.incarnation());
            out.writeLong(id);
            out.writeBoolean(done);
            out.writeInt(members.size());
            for (String member : members) {
                out.writeUTF(member);
            }
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
        return bytes.toByteArray();
    }

    /**
     * A change asked for replaces one under way (whose end then changes nothing); an end of the change under way
     * sets the members when done (id 0 in a snapshot: the members as they are). The queue's recorded leader goes
     * with its group: the new group's epochs are its own.
     */
    private void applyMove(byte kind, ByteBuffer entry) {
        QueueCommands.Key key;
        long id;
        boolean done;
        List<String> members = new ArrayList<>();
        try {
            byte[] bytes = new byte[entry.remaining()];
            entry.get(bytes);
            DataInputStream in = new DataInputStream(new java.io.ByteArrayInputStream(bytes));
            key = new QueueCommands.Key(in.readUTF(), in.readUTF(), in.readLong());
            id = in.readLong();
            done = in.readBoolean();
            for (int n = in.readInt(); n > 0; n--) {
                members.add(in.readUTF());
            }
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
        if (!vhosts.containsKey(key.vhost())) {
            return;
        }
        ReplicatedQueues replicated = queues;
        if (kind == MOVE) {
            pendingMoves.put(key, new Move(id, List.copyOf(members)));
            if (replicated != null) {
                replicated.moveAsked(key);
            }
            return;
        }
        if (id == 0) { // from a snapshot
            memberSets.put(key, List.copyOf(members));
            return;
        }
        Move move = pendingMoves.get(key);
        if (move == null || move.id() != id) {
            return;
        }
        pendingMoves.remove(key);
        if (done) {
            memberSets.put(key, move.members());
            leaders.remove(key);
        }
        if (replicated != null) {
            replicated.moveEnded(key, id, done);
        }
    }

    @Override
    public synchronized void writeSnapshot(OutputStream out) throws IOException {
        List<byte[]> changes = new ArrayList<>();
        replica.snapshot(change -> changes.add(DefinitionCodec.encode(change)));
        vhosts.forEach((name, vhost) -> changes(vhost).forEach(
            change -> changes.add(DefinitionCodec.encode(new InVhost(name, change)))));
        DataOutputStream data = new DataOutputStream(out);
        writeEntries(data, changes);
        List<byte[]> recorded = new ArrayList<>();
        leaders.forEach((key, leader) -> recorded.add(leaderEntry(key, leader)));
        writeEntries(data, recorded);
        // the members changed since declared, then the changes under way, as the entries that made them
        List<byte[]> moves = new ArrayList<>();
        memberSets.forEach((key, members) -> moves.add(moveEntry(MOVE_ENDED, key, 0, members, true)));
        pendingMoves.forEach((key, move) -> moves.add(moveEntry(MOVE, key, move.id(), move.members(), false)));
        writeEntries(data, moves);
        data.flush();
    }

    /** A section of a snapshot: a count, then each entry's length and bytes. */
    private static void writeEntries(DataOutputStream data, List<byte[]> entries) throws IOException {
        data.writeInt(entries.size());
        for (byte[] bytes : entries) {
            data.writeInt(bytes.length);
            data.write(bytes);
        }
    }

    @Override
    public synchronized void installSnapshot(InputStream in) throws IOException {
        DataInputStream data = new DataInputStream(in);
        Target attached = target;
        target = null; // the changes rebuild the replicas; the target gets the result whole
        replica = new BrokerReplica();
        vhosts = new HashMap<>();
        leaders.clear();
        memberSets.clear();
        pendingMoves.clear();
        try {
            for (int n = data.readInt(); n > 0; n--) {
                byte[] bytes = data.readNBytes(data.readInt());
                apply(decode(ByteBuffer.wrap(bytes), bytes.length));
            }
            // then the recorded leaders, then the members changed and the moves under way: each a section of
            // entries as the log carries them, which a snapshot written before them lacks
            for (int section = 0; section < 2; section++) {
                int count;
                try {
                    count = data.readInt();
                } catch (java.io.EOFException e) {
                    break;
                }
                for (; count > 0; count--) {
                    ByteBuffer entry = ByteBuffer.wrap(data.readNBytes(data.readInt()));
                    byte kind = entry.get();
                    if (kind == LEADER) {
                        applyLeader(entry);
                    } else {
                        applyMove(kind, entry);
                    }
                }
            }
        } finally {
            target = attached;
        }
        replaced();
    }

    @Override
    public synchronized void reset() {
        replica = new BrokerReplica();
        vhosts = new HashMap<>();
        leaders.clear();
        memberSets.clear();
        pendingMoves.clear();
        replaced();
    }

    private void replaced() {
        if (target != null) {
            target.replaceAll(replica.definitions(), vhostDefinitions());
        }
    }

    /** The definitions applied so far; for tests and the applier thread. */
    synchronized BrokerDefinitions definitions() {
        return replica.definitions();
    }

    /** A virtual host's shared definitions applied so far, as changes that rebuild them; for tests. */
    synchronized List<VhostChange> definitions(String vhost) {
        VhostReplica replica = vhosts.get(vhost);
        return replica == null ? List.of() : changes(replica);
    }
}
