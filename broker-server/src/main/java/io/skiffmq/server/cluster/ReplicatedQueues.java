package io.skiffmq.server.cluster;

import io.skiffmq.cluster.ClusterNode;
import io.skiffmq.cluster.NodeAddress;
import io.skiffmq.cluster.QueueGroup;
import io.skiffmq.cluster.QueueGroupApplier;
import io.skiffmq.core.VirtualHost;
import io.skiffmq.core.definitions.DefinitionChange.QueueHomed;
import io.skiffmq.core.queue.ClassicQueue;
import io.skiffmq.core.queue.Queue;
import io.skiffmq.core.queue.QueueType;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/**
 * This node's replicated quorum queues (docs/quorum-queues.md, "How it is replicated"): which queue group each uses,
 * the replicas the groups' commands build ({@link QueueReplica}, on each group's apply thread), and the live queues
 * of the groups this node leads. Leaders and live queues change on one thread of its own ({@link #moves}), in the
 * order the groups' logs announce them, so that neither a group's apply thread nor the metadata log's waits on a
 * virtual host. A queue whose group this node is not a member of is reached at the leader the metadata log records
 * ({@link ReplicatedDefinitions#recordLeader}, appended by each new leader). A queue's move between groups changes
 * here which group it uses; the steps its group's leader takes for it are {@link QueueMoves}'. Thread-safe:
 * concurrent maps, volatile fields.
 */
public final class ReplicatedQueues implements QueueGroupApplier {
    private static final System.Logger LOG = System.getLogger(ReplicatedQueues.class.getName());
    private static final String GROUP_SIZE = "x-quorum-initial-group-size";
    private static final int DEFAULT_GROUP_SIZE = 3;
    private static final String LEADER_LOCATOR = "x-queue-leader-locator";
    /** How soon a leader tries again to record itself in the metadata log, which had no majority for it. */
    private static final long ANNOUNCE_RETRY_MILLIS = 1000;
    /** How long a retiring live queue's thread is waited for to hand its uncommitted publishes to the hold. */
    private static final long HAND_OVER_MILLIS = 1_000;
    /** How often held publishes are tried at a new leader, and refused once held for the append timeout. */
    private static final long HOLD_TICK_MILLIS = 20;

    private final Duration timeout;
    private final PublishHolds holds;
    private final Map<String, Group> groups = new ConcurrentHashMap<>();
    private final Map<QueueCommands.Key, Group> groupOf = new ConcurrentHashMap<>();
    private final Map<QueueCommands.Key, Live> live = new ConcurrentHashMap<>();
    /**
     * The epoch each queue's stand-in here (its proxy and its consumers) was last moved for, on a node that does not
     * lead it: changed on {@link #moves}, removed when the record is deleted.
     */
    private final Map<QueueCommands.Key, Long> standInEpochs = new ConcurrentHashMap<>();
    /**
     * Replicated queues whose group this node is not a member of, with the group's members: reached at the leader
     * the metadata log records ({@link ReplicatedDefinitions#recordLeader}).
     */
    private final Map<QueueCommands.Key, List<String>> outside = new ConcurrentHashMap<>();
    /** Declares of queues outside this node's groups waiting for a recorded leader; guarded by itself. */
    private final List<Runnable> waitingOutside = new ArrayList<>();
    /**
     * After {@link #close}, what the groups' apply threads still ask for while Ratis stops is dropped: a rejection
     * thrown into Ratis' state machine updater left it spinning, and the node's stop waiting for it, for good.
     */
    private final ScheduledExecutorService moves = new java.util.concurrent.ScheduledThreadPoolExecutor(1, r -> {
        Thread t = new Thread(r, "skiffmq-replicated-queues");
        t.setDaemon(true);
        return t;
    }, new java.util.concurrent.ThreadPoolExecutor.DiscardPolicy());
    private volatile ClusterNode node;
    private volatile ReplicatedDefinitions definitions;
    private volatile Function<String, VirtualHost> vhosts = name -> null;
    private final QueueMoves queueMoves = new QueueMoves(this);

    /** A queue group as this node knows it. */
    static final class Group {
        final Map<QueueCommands.Key, QueueReplica> replicas = new ConcurrentHashMap<>();
        final Set<QueueCommands.Key> queues = ConcurrentHashMap.newKeySet();
        /** Declares waiting for a leader, abandoned moves' requests for the queue served again; guarded by itself. */
        final List<Runnable> waiting = new ArrayList<>();
        /** The keys of the commands applied, on the group's apply thread. */
        final QueueCommands.Keys keys = new QueueCommands.Keys();
        volatile QueueGroup handle;
        volatile String leader;
        volatile long epoch = -1;
        volatile boolean leadingHere;
    }

    private record Live(Queue queue, ReplicatedQueueLog log, long epoch) {
    }

    ReplicatedQueues(Duration timeout) {
        this(timeout, 1000);
    }

    /** @param holdCount the publishes held per queue between two leaders past which its publishers wait */
    ReplicatedQueues(Duration timeout, int holdCount) {
        this.timeout = timeout;
        this.holds = new PublishHolds(timeout.toMillis(), holdCount, this::leaderOf);
        moves.scheduleWithFixedDelay(this::tendHolds, HOLD_TICK_MILLIS, HOLD_TICK_MILLIS, TimeUnit.MILLISECONDS);
    }

    /** The publishes this node holds between two leaders of its queues. */
    PublishHolds holds() {
        return holds;
    }

    /**
     * Where a hold goes: the queue's live queue here, or what reaches its leader; null while neither serves it, or
     * while the live queue here has lost its leadership and is not retired yet.
     */
    private Queue leaderOf(QueueCommands.Key key, String vhost, QueueHomed record) {
        Live here = live.get(key);
        if (here != null) {
            return here.log.leads() ? here.queue : null;
        }
        QueueHomed at = atLeader(vhost, record);
        ReplicatedDefinitions known = definitions;
        return at == null || known == null ? null : known.leaderQueue(vhost, at);
    }

    /** On {@link #moves}. */
    private void tendHolds() {
        try {
            holds.tend();
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.ERROR, "held publishes", e);
        }
    }

    void node(ClusterNode clusterNode, ReplicatedDefinitions replicatedDefinitions) {
        this.definitions = replicatedDefinitions;
        this.node = clusterNode;
    }

    ClusterNode node() {
        return node;
    }

    ReplicatedDefinitions definitions() {
        return definitions;
    }

    /** The moves of the replicated queues between queue groups, as far as this node takes part. */
    QueueMoves queueMoves() {
        return queueMoves;
    }

    /** Where the live queues go: set once the broker's virtual hosts exist. */
    public void vhosts(Function<String, VirtualHost> lookup) {
        this.vhosts = lookup;
        moves.execute(() -> {
            groups.values().forEach(this::settle);
            outside.keySet().forEach(this::moveOutside);
        });
    }

    private Group group(String name) {
        return groups.computeIfAbsent(name, n -> new Group());
    }

    static QueueCommands.Key key(String vhost, QueueHomed record) {
        return new QueueCommands.Key(vhost, record.name(), record.incarnation());
    }

    // ---- the records, from the metadata log ------------------------------------------------------------------

    /** See {@link io.skiffmq.core.SharedDefinitions#replicated}: sets the queue's group up here the first time. */
    boolean replicated(String vhost, QueueHomed record) {
        if (QueueType.of(record.arguments()) != QueueType.QUORUM || node == null) {
            return false;
        }
        QueueCommands.Key key = key(vhost, record);
        if (groupOf.containsKey(key) || outside.containsKey(key)) {
            return true;
        }
        List<String> changed = definitions == null ? null : definitions.memberSet(key);
        List<String> members = changed != null ? changed : declaredMembers(record);
        if (members.size() < 2 && changed == null) {
            return false; // a group of one: the queue is its home node's, journaled there, as on a single node
        }
        synchronized (this) {
            if (groupOf.containsKey(key) || outside.containsKey(key)) {
                return true;
            }
            Group group = join(key, members);
            if (group != null) {
                moves.execute(() -> settle(group));
            } else if (outside.containsKey(key)) {
                moves.execute(() -> moveOutside(key));
            }
        }
        return true;
    }

    /**
     * Under {@code this}: the queue uses the group of {@code members} here, or is reached outside it; the group
     * (null outside, or when it cannot be set up).
     */
    private Group join(QueueCommands.Key key, List<String> members) {
        if (!members.contains(node.name())) {
            outside.put(key, members);
            return null;
        }
        try {
            Group group = hosted(members);
            group.queues.add(key);
            groupOf.put(key, group);
            return group;
        } catch (IOException | RuntimeException e) {
            LOG.log(System.Logger.Level.ERROR, "cannot set up the queue group of quorum queue '" + key.name()
                + "' in vhost '" + key.vhost() + "'", e);
            return null;
        }
    }

    /**
     * The members of a queue's group as declared: {@code x-quorum-initial-group-size} (default 3) capped at the
     * cluster's size, from the declaring node on, in name order; in a group's order ({@link QueueGroup#ordered}),
     * its preferred leader first, as {@code x-queue-leader-locator} places it (docs/quorum-queues.md, "Where leaders
     * go"): the declaring node for {@code client-local} (the default), or one of the members picked by the queue's
     * name for {@code balanced} (and RabbitMQ's older names for it), the same on every node.
     */
    private List<String> declaredMembers(QueueHomed record) {
        List<String> all = node.members().stream().map(NodeAddress::name).sorted().toList();
        Object asked = record.arguments().get(GROUP_SIZE);
        int size = Math.min(asked instanceof Number n ? n.intValue() : DEFAULT_GROUP_SIZE, all.size());
        int first = Math.max(0, all.indexOf(record.node()));
        List<String> members = new ArrayList<>(size);
        for (int i = 0; i < size; i++) {
            members.add(all.get((first + i) % all.size()));
        }
        String preferred = members.get(0);
        Object locator = record.arguments().get(LEADER_LOCATOR);
        if (locator != null && !"client-local".equals(locator.toString())) {
            preferred = members.get(Math.floorMod(record.name().hashCode(), size));
        }
        return QueueGroup.ordered(members, preferred);
    }

    /** The group of {@code members}, this node among them, on this node's server. */
    private Group hosted(List<String> members) throws IOException {
        QueueGroup handle = node.queueGroup(members);
        Group group = group(handle.name());
        group.handle = handle;
        return group;
    }

    void deleted(String vhost, QueueHomed record) {
        QueueCommands.Key key = key(vhost, record);
        holds.deleted(key);
        outside.remove(key);
        queueMoves.deleted(key);
        standInEpochs.remove(key);
        Group group = groupOf.remove(key);
        if (group != null) {
            group.queues.remove(key);
            group.replicas.remove(key); // and when its delete command is applied, on a member that missed this
            Live gone = live.remove(key);
            if (gone != null) {
                gone.log.retire();
                // the replicas drop it on every member, and on a replay of the log
                group.handle.append(gone.epoch, QueueCommands.batch(List.of(QueueCommands.delete(key))));
            }
        }
    }

    /** Completes once the queue's group has a leader whose live queue is up (here or there). */
    CompletableFuture<Void> whenLed(String vhost, QueueHomed record) {
        QueueCommands.Key key = key(vhost, record);
        Group group = groupOf.get(key);
        if (group == null && !outside.containsKey(key)) {
            return CompletableFuture.completedFuture(null);
        }
        return once(group != null ? group.waiting : waitingOutside,
            () -> group != null ? led(group, key) : recordedLeader(key) != null);
    }

    /**
     * Completes once {@code condition} holds, checked now and each time {@code waiting} is run; fails after the
     * append timeout.
     */
    private CompletableFuture<Void> once(List<Runnable> waiting, java.util.function.BooleanSupplier condition) {
        CompletableFuture<Void> held = new CompletableFuture<>();
        Runnable check = () -> {
            if (condition.getAsBoolean()) {
                held.complete(null);
            }
        };
        synchronized (waiting) {
            waiting.add(check);
        }
        check.run();
        return held.orTimeout(timeout.toMillis(), TimeUnit.MILLISECONDS).whenComplete((done, failure) -> {
            synchronized (waiting) {
                waiting.remove(check);
            }
        });
    }

    /** The leader the metadata log recorded for a queue outside this node's groups, or null. */
    private String recordedLeader(QueueCommands.Key key) {
        ReplicatedDefinitions known = definitions;
        ReplicatedDefinitions.RecordedLeader leader = known == null ? null : known.recordedLeader(key);
        return leader == null ? null : leader.node();
    }

    private boolean led(Group group, QueueCommands.Key key) {
        String leader = group.leader;
        return leader != null && node != null && (!leader.equals(node.name()) || live.containsKey(key));
    }

    /** The leader of a replicated queue's group, or null (not replicated, or none known). */
    public String leader(String vhost, QueueHomed record) {
        QueueCommands.Key key = key(vhost, record);
        Group group = groupOf.get(key);
        if (group == null) {
            return outside.containsKey(key) ? recordedLeader(key) : null;
        }
        return group.leader;
    }

    /** The members of a replicated queue's group, or null when it is not replicated here. */
    public List<String> members(String vhost, QueueHomed record) {
        QueueCommands.Key key = key(vhost, record);
        Group group = groupOf.get(key);
        if (group == null) {
            return outside.get(key);
        }
        return group.handle == null ? null : group.handle.members();
    }

    /** A replicated queue this node is a member of, and the name of the queue group it shares. */
    public record GroupedQueue(String vhost, String queue, String group) {
    }

    /** The replicated queues this node is a member of, each with its group's name. */
    public List<GroupedQueue> groupedQueues() {
        List<GroupedQueue> out = new ArrayList<>();
        groupOf.forEach((key, group) -> {
            QueueGroup handle = group.handle;
            if (handle != null) {
                out.add(new GroupedQueue(key.vhost(), key.name(), handle.name()));
            }
        });
        return out;
    }

    /** Where the node links reach a replicated queue: its record, homed on its leader's node; null for none. */
    QueueHomed atLeader(String vhost, QueueHomed record) {
        QueueCommands.Key key = key(vhost, record);
        Group group = groupOf.get(key);
        String leader = group != null ? group.leader : outside.containsKey(key) ? recordedLeader(key) : null;
        if (leader == null || leader.equals(node.name())) {
            return null;
        }
        return new QueueHomed(record.name(), record.autoDelete(), record.arguments(), leader, record.incarnation());
    }

    /**
     * What a consumer of {@code name} subscribes to when it is a replicated quorum queue here: a
     * {@link MovingConsumer}, which follows the queue's leader. Null for any other queue.
     */
    public Queue following(VirtualHost vhost, String name, Queue found) {
        QueueHomed record = vhost.remoteQueue(name);
        QueueCommands.Key key = record == null ? null : key(vhost.name(), record);
        if (key == null || !groupOf.containsKey(key) && !outside.containsKey(key)) {
            return null;
        }
        return new MovingConsumer(this, vhost, record, found, timeout.toMillis());
    }

    /** True for a consumer's refusal because a replicated queue's group had no majority ({@link MovingConsumer}). */
    public static boolean noMajority(String refusal) {
        return refusal.startsWith(MovingConsumer.NO_MAJORITY);
    }

    /** True for a queue reached on another node, directly or by a consumer that follows a leader there. */
    public static boolean remote(Queue queue) {
        return queue instanceof MovingConsumer moving ? moving.remoteNow() : io.skiffmq.server.peer.PeerLinks.isRemote(queue);
    }

    /**
     * Completes once the queue's group commits an entry appended now, when this node runs its live queue (what a
     * consume asks first, as RabbitMQ's checkout is a command of the queue's log); at once otherwise (another node
     * leads: the consumer must reach it). Fails when no majority commits within the append timeout.
     */
    CompletableFuture<Void> barrier(String vhost, QueueHomed record) {
        QueueCommands.Key key = key(vhost, record);
        Live here = live.get(key);
        Group group = groupOf.get(key);
        if (here == null || group == null) {
            return CompletableFuture.completedFuture(null);
        }
        return group.handle.append(here.epoch, EMPTY);
    }

    private static final byte[] EMPTY = QueueCommands.batch(List.of());

    /**
     * Runs {@code retry} on this node's thread for moves after {@code millis} (a consumer waiting for a leader, a
     * queue's move between groups going on).
     */
    void later(Runnable retry, long millis) {
        try {
            moves.schedule(retry, millis, TimeUnit.MILLISECONDS);
        } catch (java.util.concurrent.RejectedExecutionException e) {
            // the node is stopping
        }
    }

    // ---- the leaders of queues outside this node's groups, from the metadata log ------------------------------

    /** On the metadata log's applier thread: the log recorded a new leader for the queue. */
    void leaderRecorded(QueueCommands.Key key) {
        holds.unserved(key);
        try {
            moves.execute(() -> moveOutside(key));
        } catch (java.util.concurrent.RejectedExecutionException e) {
            // the node is stopping
        }
    }

    /**
     * On {@link #moves}: what stands here for a queue outside this node's groups (its proxy, its consumers' queues
     * underneath) goes once per recorded leader, as a follower's does ({@link #settle}); the next use reaches the
     * new leader.
     */
    private void moveOutside(QueueCommands.Key key) {
        ReplicatedDefinitions known = definitions;
        ReplicatedDefinitions.RecordedLeader leader = known == null ? null : known.recordedLeader(key);
        VirtualHost vhost = vhosts.apply(key.vhost());
        if (leader != null && vhost != null && outside.containsKey(key)) {
            Long seen = standInEpochs.put(key, leader.epoch());
            if (seen == null || seen != leader.epoch()) {
                vhost.replicaMoved(key.name(), null); // nothing to drop when no leader was known before
            }
        }
        List<Runnable> waiting;
        synchronized (waitingOutside) {
            waiting = new ArrayList<>(waitingOutside);
        }
        waiting.forEach(Runnable::run);
    }

    /**
     * Once this node's live queue of a group is up: records it as the queue's leader in the metadata log, for the
     * nodes outside the group; again later while it leads that epoch, when there is no majority for it now.
     */
    private void announce(Group group, QueueCommands.Key key, long epoch) {
        ReplicatedDefinitions known = definitions;
        Live here = live.get(key);
        if (known == null || here == null || here.epoch != epoch || !groupOf.containsKey(key)
                || group.handle.members().size() >= node.members().size()) {
            return; // no longer leading it, or every node a member: none outside to tell
        }
        ReplicatedDefinitions.RecordedLeader recorded = known.recordedLeader(key);
        if (recorded != null && recorded.epoch() >= epoch) {
            return;
        }
        known.recordLeader(key, node.name(), epoch).whenComplete((index, failure) -> {
            if (failure != null) {
                later(() -> announce(group, key, epoch), ANNOUNCE_RETRY_MILLIS);
            }
        });
    }

    // ---- the groups' logs ------------------------------------------------------------------------------------

    @Override
    public void apply(String groupName, long index, ByteBuffer entry) {
        applyCommand(groupName, index, entry);
    }

    /** False when a command was refused: its queue is frozen by a move ({@link QueueReplica#apply}). */
    @Override
    public boolean applyCommand(String groupName, long index, ByteBuffer entry) {
        Group group = group(groupName);
        boolean taken = true;
        while (entry.hasRemaining()) { // a batch: QueueCommands.batch
            int length = entry.getInt();
            ByteBuffer command = entry.slice(entry.position(), length);
            entry.position(entry.position() + length);
            byte kind = command.get();
            QueueCommands.Key key = group.keys.read(command);
            if (kind == QueueCommands.DELETE) {
                group.replicas.remove(key);
            } else {
                taken &= group.replicas.computeIfAbsent(key, k -> new QueueReplica()).apply(kind, command);
            }
            if (kind == QueueCommands.UNFREEZE) {
                later(() -> runWaiting(group), 0); // an abandoned move's request waits for it (servedAgain)
            }
        }
        return taken;
    }

    /**
     * A part of a queue's state moving in ({@link QueueCommands#adopt}): into a replica made for that move, which a
     * part of another move replaces unless the queue is served here since (then the part is late, and dropped).
     */
    @Override
    public void transfer(String groupName, long index, ByteBuffer entry) {
        Group group = group(groupName);
        while (entry.hasRemaining()) {
            int length = entry.getInt();
            ByteBuffer command = entry.slice(entry.position(), length);
            entry.position(entry.position() + length);
            byte kind = command.get();
            QueueCommands.Key key = QueueCommands.key(command);
            if (kind != QueueCommands.ADOPT) {
                LOG.log(System.Logger.Level.ERROR, "queue group " + groupName + ": a transfer of kind " + kind
                    + " ignored");
                continue;
            }
            long move = command.getLong();
            // kept: this move's replica, or one served here now (changed since its adoption, not frozen since)
            QueueReplica replica = group.replicas.compute(key, (k, held) -> held != null && (held.adopted() == move
                || held.sealed() && held.frozen() == 0) ? held : new QueueReplica(0, move, false));
            if (replica.adopted() != move) {
                continue; // the queue is live here since another move
            }
            byte[] rest = new byte[command.remaining()];
            command.get(rest);
            try {
                replica.adopt(move, new java.io.DataInputStream(new java.io.ByteArrayInputStream(rest)));
            } catch (IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        }
    }

    /** This node's replica of a queue of the group, or null. */
    QueueReplica replica(String groupName, QueueCommands.Key key) {
        Group group = groups.get(groupName);
        return group == null ? null : group.replicas.get(key);
    }

    /** On the group's apply thread: each replica as of now ({@link ReplicaSnapshot}). */
    @Override
    public Snapshot snapshot(String groupName) {
        return ReplicaSnapshot.take(group(groupName).replicas);
    }

    /** On the group's apply thread: the replicas as a snapshot has them, in place of those held. */
    @Override
    public void restore(String groupName, java.io.DataInput in) throws IOException {
        Map<QueueCommands.Key, QueueReplica> read = ReplicaSnapshot.read(in);
        Group group = group(groupName);
        group.replicas.clear();
        group.replicas.putAll(read);
    }

    @Override
    public void leader(String groupName, String leaderNode, long epoch, boolean liveHere) {
        Group group = group(groupName);
        group.leader = leaderNode;
        group.epoch = epoch;
        group.leadingHere = liveHere;
        group.queues.forEach(holds::unserved);
        if (liveHere) {
            // the replicas are complete at this point of the log: the live queues are built from them now
            Map<QueueCommands.Key, HeldMessages> held = new java.util.HashMap<>();
            Map<QueueCommands.Key, Enqueuers> numbers = new java.util.HashMap<>();
            for (QueueCommands.Key key : group.queues) {
                QueueReplica replica = group.replicas.get(key);
                held.put(key, replica == null ? HeldMessages.NONE : replica.held());
                numbers.put(key, replica == null ? new Enqueuers() : replica.enqueuers());
            }
            moves.execute(() -> settle(group, held, numbers));
        } else {
            moves.execute(() -> settle(group));
        }
    }

    @Override
    public void notLeader(String groupName) {
        Group group = group(groupName);
        group.leadingHere = false;
        group.queues.forEach(holds::unserved);
        moves.execute(() -> settle(group));
    }

    /** On {@link #moves}. */
    void settle(Group group) {
        settle(group, null, null);
    }

    /**
     * On {@link #moves}: makes this node's live queues of the group what its leadership says. {@code held}: the
     * replicas' messages as of the leader's entry, when it is this node's, and {@code numbers} the numbers they took
     * from forwarding nodes.
     */
    private void settle(Group group, Map<QueueCommands.Key, HeldMessages> held,
            Map<QueueCommands.Key, Enqueuers> numbers) {
        if (node == null) { // the groups' logs replayed while the node starts: settled again once it has
            return;
        }
        long epoch = group.epoch;
        boolean leading = group.leadingHere && node.name().equals(group.leader);
        for (QueueCommands.Key key : group.queues) {
            HeldMessages messages = held != null ? held.remove(key) : null;
            Live here = live.get(key);
            VirtualHost vhost = vhosts.apply(key.vhost());
            ReplicatedDefinitions.Move move = leading ? definitions.pendingMove(key) : null;
            QueueReplica kept = leading ? group.replicas.get(key) : null;
            if (leading && vhost != null && move != null) {
                queueMoves.carryOn(group, key, move, epoch, here == null ? null : () -> retire(key, here, vhost));
            } else if (leading && vhost != null && kept != null && kept.frozen() != 0) {
                queueMoves.thaw(group, key, kept.frozen(), epoch);
            } else if (leading && vhost != null && !queueMoves.adoptedAsEnded(key, kept)) {
                LOG.log(System.Logger.Level.ERROR, "quorum queue ''{0}'' in vhost ''{1}'': its replica here is not"
                    + " the one its move ended with: not served", key.name(), key.vhost());
            } else if (leading && vhost != null && (here == null || here.epoch != epoch)) {
                if (here != null) {
                    retire(key, here, vhost);
                }
                Enqueuers taken = numbers != null ? numbers.get(key) : null;
                if (messages == null) {
                    QueueReplica replica = group.replicas.get(key);
                    messages = replica == null ? HeldMessages.NONE : replica.held();
                    taken = replica == null ? null : replica.enqueuers();
                }
                goLive(group, key, vhost, epoch, messages, taken == null ? new Enqueuers() : taken);
            } else if (!leading && here != null) {
                retire(key, here, vhost);
            } else if (!leading && vhost != null) {
                Long seen = standInEpochs.put(key, epoch);
                if (seen == null || seen != epoch) {
                    // what stood for the old leader goes, once per leader: a queue joining the group, or the
                    // node starting, moves no consumer
                    vhost.replicaMoved(key.name(), null);
                }
            }
        }
        runWaiting(group);
    }

    /** Checks again what waits on the group ({@link #whenLed}, {@link #servedAgain}). */
    private static void runWaiting(Group group) {
        List<Runnable> waiting;
        synchronized (group.waiting) {
            waiting = new ArrayList<>(group.waiting);
        }
        waiting.forEach(Runnable::run);
    }

    // ---- membership changes (docs/quorum-queues.md, "Changing members"); their steps are QueueMoves' ------------

    /** On the metadata log's applier thread: a move of the queue was asked for. */
    void moveAsked(QueueCommands.Key key) {
        ReplicatedDefinitions.Move move = definitions == null ? null : definitions.pendingMove(key);
        if (node == null || move == null) {
            return; // replayed while the node starts: the group's leader carries it on once it settles
        }
        if (move.members().contains(node.name())) {
            try {
                hosted(move.members()); // the new group on this member's server, for the adoption
            } catch (IOException | RuntimeException e) {
                LOG.log(System.Logger.Level.ERROR, "cannot set up the queue group of " + move.members(), e);
            }
        }
        Group group = groupOf.get(key);
        if (group != null) {
            moves.execute(() -> settle(group));
        }
    }

    /**
     * On the metadata log's applier thread: a move of the queue ended. Done: the queue leaves its group (or the
     * nodes outside it) for the new one here; what stood for its old leader goes, and its consumers follow it to the
     * new leader. Abandoned: its group's leader thaws it.
     */
    void moveEnded(QueueCommands.Key key, long id, boolean done) {
        Group thawing = done || node == null ? null : groupOf.get(key);
        queueMoves.ended(key, id, done, thawing);
        if (node == null) {
            return;
        }
        if (!done) {
            if (thawing != null) {
                moves.execute(() -> settle(thawing));
            }
            return;
        }
        holds.unserved(key); // its new group's leader serves it now
        List<String> members = definitions.memberSet(key);
        Group old;
        Group now;
        Live gone;
        synchronized (this) {
            if (!groupOf.containsKey(key) && !outside.containsKey(key)) {
                return; // not set up here (yet): it will be with its new members
            }
            old = groupOf.remove(key);
            outside.remove(key);
            standInEpochs.remove(key);
            queueMoves.movedIn(key, id);
            if (old != null) {
                old.queues.remove(key);
            }
            gone = live.remove(key);
            now = join(key, members);
        }
        moves.execute(() -> {
            VirtualHost vhost = vhosts.apply(key.vhost());
            if (gone != null) {
                gone.log.deposed(); // what it had not committed goes to the new group's leader; frozen, it has none
            }
            if (vhost != null) {
                vhost.replicaMoved(key.name(), gone == null ? null : gone.queue);
            }
            if (old != null && old.leadingHere && node.name().equals(old.leader)) {
                // every member of the group it left drops its replica, and so does a replay of that group's log
                old.handle.append(old.epoch, QueueCommands.batch(List.of(QueueCommands.delete(key))));
            }
            if (now != null) {
                settle(now);
            } else {
                moveOutside(key);
            }
        });
    }

    /**
     * Completes once the queue of the group, whose move was abandoned, is thawed in this node's replica and served by
     * the group's leader (by this node's live queue when it leads), or has left the group; fails after the append
     * timeout.
     */
    CompletableFuture<Void> servedAgain(Group group, QueueCommands.Key key) {
        return once(group.waiting, () -> {
            QueueReplica replica = group.replicas.get(key);
            return !group.queues.contains(key) || (replica == null || replica.frozen() == 0) && led(group, key);
        });
    }

    /**
     * The groups of the replicated queues {@code chosen} picks, this node's and those it reaches outside its groups,
     * each with its leader as known here and the number of those queues.
     */
    List<QueueRebalance.LedGroup> ledGroups(java.util.function.Predicate<QueueCommands.Key> chosen) {
        Map<List<String>, String> leaders = new java.util.HashMap<>();
        Map<List<String>, Integer> counts = new java.util.HashMap<>();
        groupOf.forEach((key, group) -> {
            if (chosen.test(key) && group.handle != null) {
                counts.merge(group.handle.members(), 1, Integer::sum);
                leaders.putIfAbsent(group.handle.members(), group.leader);
            }
        });
        outside.forEach((key, members) -> {
            if (chosen.test(key)) {
                counts.merge(members, 1, Integer::sum);
                String recorded = recordedLeader(key);
                if (recorded != null) {
                    leaders.put(members, recorded);
                }
            }
        });
        List<QueueRebalance.LedGroup> out = new ArrayList<>();
        counts.forEach((members, n) -> out.add(new QueueRebalance.LedGroup(members, leaders.get(members), n)));
        return out;
    }

    /** The key of a replicated queue here, or null when it is not one. */
    QueueCommands.Key replicatedKey(String vhost, QueueHomed record) {
        QueueCommands.Key key = key(vhost, record);
        return groupOf.containsKey(key) || outside.containsKey(key) ? key : null;
    }

    /** Builds the live queue here from its replica's {@code messages}. */
    private void goLive(Group group, QueueCommands.Key key, VirtualHost vhost, long epoch,
            HeldMessages messages, Enqueuers enqueuers) {
        ReplicatedQueueLog[] log = new ReplicatedQueueLog[1];
        Queue queue = vhost.replicaLive(key.name(), (declaration, executor, context) -> {
            QueueHomed record = vhost.remoteQueue(key.name());
            log[0] = new ReplicatedQueueLog(group.handle, key, epoch, executor, enqueuers,
                record == null ? null : holds.unled(key, key.vhost(), record),
                record == null ? null : holds.unsent(key, key.vhost(), record), group.replicas.get(key));
            ClassicQueue made = new ClassicQueue(declaration, executor, log[0], Long.MAX_VALUE, context);
            QueueReplica.restore(made, messages);
            made.recovered();
            holds.ledHere(key, made);
            return made;
        });
        if (queue != null) {
            live.put(key, new Live(queue, log[0], epoch));
            announce(group, key, epoch);
            LOG.log(System.Logger.Level.INFO, "quorum queue ''{0}'' in vhost ''{1}'': this node leads it (epoch {2,number,#},"
                + " {3} messages)", key.name(), key.vhost(), epoch, messages.size());
        } else if (log[0] != null) {
            log[0].retire();
        }
    }

    /**
     * The live queue goes. What it had not committed is in the queue's hold before its routing changes (waited for a
     * moment on its thread), so that it stays ahead of what is published after.
     */
    private void retire(QueueCommands.Key key, Live here, VirtualHost vhost) {
        live.remove(key, here);
        try {
            here.log.deposed().get(HAND_OVER_MILLIS, TimeUnit.MILLISECONDS);
        } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
            LOG.log(System.Logger.Level.WARNING, "quorum queue ''{0}'' in vhost ''{1}'': its publishes not yet"
                + " committed were not handed to its hold within {2} ms", key.name(), key.vhost(), HAND_OVER_MILLIS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (vhost != null) {
            vhost.replicaMoved(key.name(), here.queue);
        }
    }

    void close() {
        moves.shutdownNow();
        holds.close();
    }
}
