package io.skiffmq.cluster;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.ratis.RaftConfigKeys;
import org.apache.ratis.client.RaftClient;
import org.apache.ratis.client.RaftClientConfigKeys;
import org.apache.ratis.conf.Parameters;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.protocol.GroupInfoReply;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.protocol.exceptions.AlreadyClosedException;
import org.apache.ratis.retry.RetryPolicies;
import org.apache.ratis.retry.RetryPolicy;
import org.apache.ratis.rpc.SupportedRpcType;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.storage.RaftStorage;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;
import org.apache.ratis.util.TimeDuration;

/**
 * This node's place in the cluster: a Ratis server on the cluster port holding the one metadata group, a second on
 * the queue port ({@link ClusterSettings#QUEUE_PORT_OFFSET}) holding the queue groups ({@link ServerProperties} says
 * how the two differ), and a client of the metadata group through which this node appends ({@link MetadataLog}),
 * names the cluster, and adds and removes members. Everything between nodes is mutual TLS keyed by the cluster secret
 * ({@link SecretTls}). Thread-safe; Ratis runs its own threads, and the applier is called on its state machine
 * updater thread.
 */
public final class ClusterNode implements MetadataLog, AutoCloseable {
    private static final System.Logger LOG = System.getLogger(ClusterNode.class.getName());
    /** The metadata group's id: the same in every SkiffMQ cluster, which the secret keeps apart. */
    static final RaftGroupId METADATA_GROUP = RaftGroupId.valueOf(
        UUID.nameUUIDFromBytes("skiffmq metadata".getBytes(StandardCharsets.US_ASCII)));
    /** RabbitMQ's name for the Raft cluster of its metadata store (Khepri's), which the metadata group plays. */
    public static final String METADATA_NAME = "rabbitmq_metadata";
    /** Between two tries of an append whose leader is unknown or unreachable. */
    private static final TimeDuration RETRY_SLEEP = TimeDuration.valueOf(100, TimeUnit.MILLISECONDS);
    /** How long a peer has to answer {@link #status}: a live node on loopback or a LAN answers in milliseconds. */
    private static final TimeDuration PING_TIMEOUT = TimeDuration.valueOf(2, TimeUnit.SECONDS);

    private final ClusterSettings settings;
    private final LogApplier applier;
    /** The state machine of the group this node runs now: a new one each time it joins a cluster. */
    private final AtomicReference<MetadataStateMachine> stateMachine = new AtomicReference<>();
    private final RaftPeerId selfId;
    private final Parameters parameters;
    private final NodeTls nodeTls;
    private final RaftServer server;
    /** The queue groups' server; null when the node was started without them. */
    private final RaftServer queueServer;
    /**
     * Appends go through this client, in order. Ratis closes an ordered client for good once one request fails, so
     * a failure replaces it ({@link #send}).
     */
    private final AtomicReference<RaftClient> client;
    /** Appends sent through {@link #client} and not yet completed: a client is swapped only when none is. */
    private final AtomicInteger inFlight = new AtomicInteger();
    /** This node's appends to the metadata group, sent to committed. */
    private final CommitLatency metadataLatency = new CommitLatency();
    private final RaftGroup seeds;
    /** What this node answers {@link #readingsOf} on another node; nothing until {@link #answerReadings}. */
    private volatile java.util.function.Supplier<byte[]> readings = () -> new byte[0];
    /** Read barriers ({@link #caughtUp}) go through this client to this node's own server only, unordered. */
    private final RaftClient reader;
    /**
     * Runs the blocking pings of {@link #status}, and closes replaced append clients: closing one whose leader is
     * cut off waits out gRPC's graceful shutdown, which an append must not wait for.
     */
    private final ExecutorService background = Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "cluster-background");
        t.setDaemon(true);
        return t;
    });

    /** The queue groups this server hosts beside the metadata group; null when the node was started without them. */
    private final QueueGroups queueGroups;
    /** The node's timer: the appends' deadlines, and the queue groups' new leader entries, tried until they are in. */
    private final java.util.concurrent.ScheduledExecutorService timer;
    /** The appends' timeouts count only the time this process ran. */
    private final RunningTime running;
    /** Elections held when a leader's node-to-node link closes, rather than after the election timeout. */
    private final EarlyElections earlyElections;
    private final EarlyElections earlyQueueElections;

    private ClusterNode(ClusterSettings settings, LogApplier applier, QueueGroupApplier queueApplier)
            throws IOException {
        this.settings = settings;
        this.selfId = RaftPeerId.valueOf(settings.self().name());
        this.applier = applier;
        // what the groups' Ratis threads ask of it while this node stops is dropped, not thrown back at them
        var scheduler = new java.util.concurrent.ScheduledThreadPoolExecutor(1, r -> {
            Thread t = new Thread(r, "cluster-timer");
            t.setDaemon(true);
            return t;
        }, new java.util.concurrent.ThreadPoolExecutor.DiscardPolicy());
        scheduler.setRemoveOnCancelPolicy(true); // an append's deadline is cancelled once it commits
        this.timer = scheduler;
        this.running = new RunningTime(scheduler);
        this.queueGroups = queueApplier == null ? null : new QueueGroups(queueApplier, selfId,
            settings.appendTimeout(), timer, running, settings.queueSnapshotBytes());
        SecretTls tls = new SecretTls(settings.secret(), settings.self().name());
        this.nodeTls = tls.nodeTls();
        this.parameters = ServerProperties.tls(tls.grpcConfig());
        this.seeds = RaftGroup.valueOf(METADATA_GROUP, settings.seeds().stream().map(ClusterNode::peer).toList());
        Files.createDirectories(settings.dataDir());
        this.server = RaftServer.newBuilder().setServerId(selfId).setGroup(seeds)
            .setProperties(ServerProperties.metadata(settings)).setParameters(parameters)
            .setStateMachineRegistry(group -> newStateMachine())
            // an existing log is recovered and its membership wins over the seeds; an empty directory is formatted
            .setOption(RaftStorage.StartupOption.RECOVER).build();
        this.client = new AtomicReference<>(newAppender(seeds));
        this.reader = newClient(RaftGroup.valueOf(METADATA_GROUP, peer(settings.self())), adminRetries(settings));
        // at most one early election per group per two of its longest election timeouts
        long quiet = 4 * settings.electionTimeout().toMillis();
        this.earlyElections = new EarlyElections(server, selfId, quiet, this::lastEntryAt);
        if (queueGroups != null) {
            Files.createDirectories(settings.queueDataDir());
            ServerProperties.moveQueueGroups(settings.dataDir(), settings.queueDataDir());
            this.queueServer = RaftServer.newBuilder().setServerId(selfId)
                .setProperties(ServerProperties.queues(settings))
                .setParameters(parameters).setStateMachineRegistry(queueGroups::machine)
                .setOption(RaftStorage.StartupOption.RECOVER).build(); // the groups it held are recovered
            queueGroups.server(queueServer);
            this.earlyQueueElections = new EarlyElections(queueServer, selfId, quiet, this::lastEntryAt);
        } else {
            this.queueServer = null;
            this.earlyQueueElections = null;
        }
    }

    /**
     * This node's link to {@code nodeName} closed (its process died, or the network between them failed): the groups
     * that node leads and this node follows may elect a new leader at once ({@link EarlyElections}). Returns at once.
     */
    public void nodeLinkLost(String nodeName) {
        background.execute(() -> {
            earlyElections.nodeLost(nodeName);
            if (earlyQueueElections != null) {
                earlyQueueElections.nodeLost(nodeName);
            }
        });
    }

    /**
     * Starts this node's Raft server on its cluster port and joins the metadata group (forming it with the seeds on
     * a first start, recovering its log otherwise).
     */
    public static ClusterNode start(ClusterSettings settings, LogApplier applier) throws IOException {
        return start(settings, applier, null);
    }

    /**
     * As {@link #start(ClusterSettings, LogApplier)}, with queue groups ({@link #queueGroup}) applied by
     * {@code queueApplier}; those this server held are recovered with it, their logs replayed into the applier.
     */
    public static ClusterNode start(ClusterSettings settings, LogApplier applier, QueueGroupApplier queueApplier)
            throws IOException {
        ClusterNode node = new ClusterNode(settings, applier, queueApplier);
        node.server.start();
        if (node.queueServer != null) {
            node.queueServer.start();
        }
        LOG.log(System.Logger.Level.INFO, "cluster node {0} listening on {1}:{2,number,#}{3}, seeds {4}",
            settings.self().name(), settings.bindHost(), settings.self().port(), node.queueServer == null ? ""
                : " and, for queue groups, " + (settings.self().port() + ClusterSettings.QUEUE_PORT_OFFSET),
            settings.seeds());
        return node;
    }

    private MetadataStateMachine newStateMachine() {
        MetadataStateMachine machine = new MetadataStateMachine(applier, settings.self().name(),
            () -> readings.get(), settings.snapshotEvery());
        stateMachine.set(machine);
        return machine;
    }

    /**
     * Appends are tried until {@link #send}'s timeout fails them: it then closes the client, which ends the tries.
     * (A count of tries would end sooner: a refused connection fails at once.)
     */
    private static final RetryPolicy APPEND_RETRIES = RetryPolicies.retryForeverWithSleep(RETRY_SLEEP);

    /** Membership changes, which block: tried for about the append timeout. */
    private static RetryPolicy adminRetries(ClusterSettings settings) {
        int tries = (int) Math.max(1, settings.appendTimeout().toMillis() / RETRY_SLEEP.toLong(TimeUnit.MILLISECONDS));
        return RetryPolicies.retryUpToMaximumCountWithFixedSleep(tries, RETRY_SLEEP);
    }

    private RaftClient newClient(RaftGroup group, RetryPolicy retry) {
        return RaftClient.newBuilder().setRaftGroup(group).setProperties(clientProperties())
            .setParameters(parameters).setRetryPolicy(retry).build();
    }

    /** The append client, sent first to the leader this node's server follows when it knows one. */
    private RaftClient newAppender(RaftGroup group) {
        RaftPeerId leader = knownLeader();
        RaftClient.Builder builder = RaftClient.newBuilder().setRaftGroup(group).setProperties(clientProperties())
            .setParameters(parameters).setRetryPolicy(APPEND_RETRIES);
        if (leader != null && group.getPeer(leader) != null) {
            builder.setLeaderId(leader);
        }
        return builder.build();
    }

    private RaftPeerId knownLeader() {
        MetadataStateMachine machine = stateMachine.get();
        String leader = machine == null ? null : machine.leader();
        return leader == null ? null : RaftPeerId.valueOf(leader);
    }

    private RaftProperties clientProperties() {
        RaftProperties p = new RaftProperties();
        RaftConfigKeys.Rpc.setType(p, SupportedRpcType.GRPC);
        RaftClientConfigKeys.Rpc.setRequestTimeout(p, PING_TIMEOUT);
        return p;
    }

    static RaftPeer peer(NodeAddress node) {
        return RaftPeer.newBuilder().setId(node.name()).setAddress(node.socketAddress()).build();
    }

    /** A member of a queue group: the node's queue server. */
    static RaftPeer queuePeer(NodeAddress node) {
        return queuePeer(node, 0);
    }

    /** A member of a queue group with its Ratis priority ({@link QueueGroups#group}). */
    static RaftPeer queuePeer(NodeAddress node, int priority) {
        return RaftPeer.newBuilder().setId(node.name())
            .setAddress(node.host() + ":" + (node.port() + ClusterSettings.QUEUE_PORT_OFFSET)).setPriority(priority)
            .build();
    }

    @Override
    public CompletableFuture<Long> append(ByteBuffer entry) {
        return send(EntryKind.APPLIER.frame(entry));
    }

    /** Names the cluster (rabbitmqctl {@code set_cluster_name}), on every node. */
    public CompletableFuture<Long> setClusterName(String name) {
        if (name == null || name.isBlank()) {
            throw new IllegalArgumentException("a cluster name must not be empty");
        }
        return send(EntryKind.CLUSTER_NAME.frame(ByteBuffer.wrap(name.getBytes(StandardCharsets.UTF_8))));
    }

    private CompletableFuture<Long> send(byte[] framed) {
        long timeout = settings.appendTimeout().toMillis();
        RaftClient appender;
        CompletableFuture<RaftClientReply> sent;
        synchronized (inFlight) {
            appender = client.get();
            // A client keeps the leader it last reached, and a leader cut off by a partition (not dead: its packets
            // are dropped, nothing is refused) holds each request for the client's request timeout before Ratis
            // tries another peer: longer than an append may wait. So an idle client whose leader is no longer the
            // one this node's server follows is swapped for one sent there. Only when idle: appends through one
            // client keep their order.
            RaftPeerId leader = knownLeader();
            if (inFlight.get() == 0 && leader != null && !leader.equals(appender.getLeaderId())) {
                RaftClient fresh = newAppender(appenderGroup());
                client.set(fresh);
                closeInBackground(appender);
                appender = fresh;
            }
            inFlight.incrementAndGet();
            sent = appender.async().send(Message.valueOf(ByteString.copyFrom(framed)));
        }
        RaftClient used = appender;
        long began = System.nanoTime();
        long sentAt = running.ran();
        CompletableFuture<Long> committed = sent.whenComplete((reply, e) -> inFlight.decrementAndGet())
            .thenCompose(reply -> {
                if (!reply.isSuccess()) {
                    throw new CompletionException(new NoMajorityException("the metadata change was not committed",
                        reply.getException()));
                }
                metadataLatency.add(System.nanoTime() - began);
                return stateMachine.get().whenApplied(reply.getLogIndex());
            });
        return running.within(committed, timeout)
            .exceptionallyCompose(e -> {
                boolean closedUnderIt = client.get() != used && unwrap(e) instanceof AlreadyClosedException;
                replace(used);
                long left = timeout - TimeUnit.NANOSECONDS.toMillis(running.ran() - sentAt);
                if (closedUnderIt && left > 0) {
                    // Another append through the same client timed out and closed it, ending this one's tries too:
                    // it still waits out its own time, as each change waits for a majority for the whole timeout.
                    return running.within(new CompletableFuture<Long>(), left)
                        .exceptionallyCompose(late -> CompletableFuture.failedFuture(noMajority(late, timeout)));
                }
                return CompletableFuture.failedFuture(noMajority(e, timeout));
            });
    }

    @Override
    public CompletableFuture<Long> caughtUp() {
        long timeout = settings.appendTimeout().toMillis();
        CompletableFuture<Long> read = reader.async().sendReadOnlyUnordered(Message.EMPTY, selfId)
            .thenCompose(reply -> {
                if (!reply.isSuccess()) {
                    throw new CompletionException(new NoMajorityException("no metadata leader confirmed the"
                        + " commit index", reply.getException()));
                }
                // the state machine answered with its applied index, at least the leader's commit index
                return stateMachine.get().whenApplied(reply.getMessage().getContent().asReadOnlyByteBuffer()
                    .getLong());
            });
        return running.within(read, timeout)
            .exceptionallyCompose(e -> CompletableFuture.failedFuture(noMajority(e, timeout)));
    }

    /** After a failed append: Ratis' ordered client is closed for good then, and closing it ends its retries. */
    private void replace(RaftClient failed) {
        RaftClient fresh = newAppender(appenderGroup());
        if (client.compareAndSet(failed, fresh)) {
            closeInBackground(failed);
        } else {
            closeQuietly(fresh);
        }
    }

    private RaftGroup appenderGroup() {
        RaftGroup group = RaftGroup.valueOf(METADATA_GROUP, members().stream().map(ClusterNode::peer).toList());
        return group.getPeers().isEmpty() ? seeds : group;
    }

    private void closeInBackground(RaftClient c) {
        try {
            background.execute(() -> closeQuietly(c));
        } catch (RejectedExecutionException e) {
            closeQuietly(c); // this node is closing
        }
    }

    private static void closeQuietly(RaftClient c) {
        try {
            c.close();
        } catch (IOException | RuntimeException e) {
            LOG.log(System.Logger.Level.DEBUG, "closing a metadata client failed", e);
        }
    }

    private static Throwable unwrap(Throwable failure) {
        return failure instanceof CompletionException && failure.getCause() != null ? failure.getCause() : failure;
    }

    private static Throwable noMajority(Throwable failure, long timeout) {
        Throwable cause = unwrap(failure);
        if (cause instanceof NoMajorityException) {
            return cause;
        }
        String why = cause instanceof TimeoutException
            ? "no majority of the cluster committed the metadata change within " + timeout + " ms"
            : "the metadata change failed: " + cause;
        return new NoMajorityException(why, cause);
    }

    /**
     * The queue group of these members (node names, this node among them), added to this node's server when it is
     * not there yet: every member does so when it applies the record of a queue that uses it.
     *
     * @throws IOException when the server cannot add it
     * @throws IllegalArgumentException when a name is not a member of the cluster, or this node is not among them
     */
    public QueueGroup queueGroup(List<String> memberNames) throws IOException {
        if (queueGroups == null) {
            throw new IllegalStateException("this node was started without queue groups");
        }
        List<NodeAddress> all = members();
        List<NodeAddress> chosen = new ArrayList<>();
        for (String name : memberNames) {
            chosen.add(all.stream().filter(m -> m.name().equals(name)).findFirst()
                .orElseThrow(() -> new IllegalArgumentException("node " + name + " is not a member")));
        }
        return queueGroups.group(chosen);
    }

    /**
     * Appends a transfer to the queue group of {@code memberNames} ({@link QueueGroupApplier#transfer}), from this
     * node whether it is a member or not: through a client of that group, which finds its leader. The group must be
     * on its members' servers (each adds it when it applies what asks for it); until it is, or has a leader, it is
     * tried again.
     *
     * @return completes once committed; fails with {@link NoMajorityException} after the append timeout
     */
    public CompletableFuture<Void> transfer(List<String> memberNames, byte[] command) {
        List<NodeAddress> all = members();
        List<RaftPeer> peers = new ArrayList<>();
        for (String member : memberNames) {
            NodeAddress address = all.stream().filter(m -> m.name().equals(member)).findFirst().orElse(null);
            if (address == null) {
                return CompletableFuture.failedFuture(new IllegalArgumentException("node " + member
                    + " is not a member"));
            }
            peers.add(queuePeer(address));
        }
        byte[] entry = new byte[1 + command.length];
        entry[0] = QueueGroupMachine.TRANSFER;
        System.arraycopy(command, 0, entry, 1, command.length);
        long timeout = settings.appendTimeout().toMillis();
        RaftGroup group = RaftGroup.valueOf(QueueGroups.id(memberNames), peers);
        return transferOnce(group, Message.valueOf(ByteString.copyFrom(entry)), System.nanoTime()
            + TimeUnit.MILLISECONDS.toNanos(timeout), timeout);
    }

    /**
     * One try of a transfer. A member that has not added the group yet (it applies the metadata log a heartbeat
     * behind its leader) refuses it, and Ratis' client gives up on such a refusal: tried again until the deadline.
     * A reply that refuses the transfer ends it.
     */
    private CompletableFuture<Void> transferOnce(RaftGroup group, Message entry, long deadline, long timeout) {
        long left = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
        RaftClient one = newClient(group, APPEND_RETRIES);
        return one.async().send(entry).orTimeout(Math.max(1, left), TimeUnit.MILLISECONDS)
            .handle((reply, failure) -> {
                closeInBackground(one); // ends its tries
                if (failure == null && !reply.isSuccess()) { // answered and refused: not tried again
                    throw new CompletionException(noMajority(Objects.requireNonNullElseGet(reply.getException(),
                        () -> new IOException("not committed")), timeout));
                }
                return failure;
            })
            .thenCompose(failure -> {
                if (failure == null) {
                    return CompletableFuture.<Void>completedFuture(null);
                }
                Throwable cause = unwrap(failure);
                long retryNanos = RETRY_SLEEP.toLong(TimeUnit.NANOSECONDS);
                if (cause instanceof TimeoutException || System.nanoTime() + retryNanos >= deadline) {
                    return CompletableFuture.<Void>failedFuture(noMajority(cause, timeout));
                }
                return CompletableFuture.supplyAsync(() -> null, CompletableFuture.delayedExecutor(retryNanos,
                    TimeUnit.NANOSECONDS)).thenCompose(again -> transferOnce(group, entry, deadline, timeout));
            });
    }

    /**
     * Asks the queue group of {@code memberNames} to hand its leadership to {@code to} (rabbitmq-queues'
     * {@code rebalance}), from any node; blocks until it has, for at most the append timeout.
     *
     * @throws IOException when the group does not, in time
     */
    public void transferQueueGroupLeader(List<String> memberNames, String to) throws IOException {
        List<NodeAddress> all = members();
        List<RaftPeer> peers = new ArrayList<>();
        for (String member : memberNames) {
            peers.add(queuePeer(all.stream().filter(m -> m.name().equals(member)).findFirst()
                .orElseThrow(() -> new IllegalArgumentException("node " + member + " is not a member"))));
        }
        try (RaftClient one = newClient(RaftGroup.valueOf(QueueGroups.id(memberNames), peers),
                adminRetries(settings))) {
            check(one.admin().transferLeadership(RaftPeerId.valueOf(to), settings.appendTimeout().toMillis()),
                "make " + to + " the leader of queue group " + memberNames);
        }
    }

    /**
     * The figures of every Raft group on this node (RabbitMQ's {@code ra_metrics}): the metadata group, named
     * {@link #METADATA_NAME}, then each queue group under its name.
     */
    public List<RaftReading> raftReadings() {
        List<RaftReading> out = new ArrayList<>();
        RaftReading metadata = RaftReading.of(server, METADATA_GROUP, METADATA_NAME, metadataLatency);
        if (metadata != null) {
            out.add(metadata);
        }
        if (queueGroups != null) {
            queueGroups.readings(out);
        }
        return out;
    }

    /** This node's TLS for its message traffic with the other nodes: the same certificate as Raft's. */
    public NodeTls tls() {
        return nodeTls;
    }

    @Override
    public long appliedIndex() {
        return stateMachine.get().appliedIndex();
    }

    /** This node's name. */
    /** The metadata group's leader as this node's state machine last heard it; null when none is known. */
    String metadataLeader() {
        return stateMachine.get().leader();
    }

    public String name() {
        return settings.self().name();
    }

    /** The members of the metadata group as this node's log has them, with their addresses. */
    public List<NodeAddress> members() {
        try {
            return server.getDivision(METADATA_GROUP).getRaftConf().getCurrentPeers().stream()
                .map(p -> NodeAddress.parse(p.getId() + ":" + port(p.getAddress())))
                .sorted(java.util.Comparator.comparing(NodeAddress::name)).toList();
        } catch (IOException e) {
            throw new IllegalStateException("the metadata group is not running on this node", e);
        }
    }

    private static int port(String address) {
        return Integer.parseInt(address.substring(address.lastIndexOf(':') + 1));
    }

    /**
     * The cluster as seen from here: every member is asked over the cluster transport, in parallel; those that
     * answer within two seconds are running. Blocks for at most that long.
     */
    public ClusterStatus status() {
        List<NodeAddress> members = members();
        List<CompletableFuture<String>> answers = new ArrayList<>();
        for (NodeAddress member : members) {
            if (member.name().equals(name())) {
                answers.add(CompletableFuture.completedFuture(name()));
            } else {
                answers.add(CompletableFuture.supplyAsync(() -> ping(member) ? member.name() : null, background));
            }
        }
        List<String> running = answers.stream().map(CompletableFuture::join).filter(Objects::nonNull).sorted()
            .toList();
        List<String> names = members.stream().map(NodeAddress::name).toList();
        return new ClusterStatus(clusterName(), name(), names, running, stateMachine.get().leader());
    }

    /**
     * What this node answers when another asks for its readings ({@link #readingsOf}): bytes its broker encodes,
     * made on a Ratis server thread for each request.
     */
    public void answerReadings(java.util.function.Supplier<byte[]> answer) {
        readings = answer;
    }

    /**
     * Asks {@code member} for its readings ({@link #answerReadings}), directly over the cluster transport as a
     * read-only request answered by its state machine: nothing goes through the log, and no majority is needed.
     * Fails when it does not answer within two seconds.
     */
    public CompletableFuture<byte[]> readingsOf(String member) {
        NodeAddress address = members().stream().filter(m -> m.name().equals(member)).findFirst().orElse(null);
        if (address == null) {
            return CompletableFuture.failedFuture(new IllegalArgumentException("no member " + member));
        }
        return CompletableFuture.supplyAsync(() -> {
            try (RaftClient one = newClient(RaftGroup.valueOf(METADATA_GROUP, peer(address)),
                    RetryPolicies.noRetry())) {
                // a stale read at index 0: the member's state machine answers whatever it has applied
                RaftClientReply reply = one.io().sendStaleRead(Message.valueOf(ByteString.copyFrom(
                    new byte[] {MetadataStateMachine.READINGS})), 0, RaftPeerId.valueOf(member));
                if (!reply.isSuccess()) {
                    throw new CompletionException(reply.getException());
                }
                return reply.getMessage().getContent().toByteArray();
            } catch (IOException e) {
                throw new CompletionException(e);
            }
        }, background);
    }

    /** The name set with {@link #setClusterName}, else the first member's name (the same on every node). */
    public String clusterName() {
        String set = stateMachine.get().clusterName();
        if (set != null) {
            return set;
        }
        List<NodeAddress> members = members();
        return members.isEmpty() ? name() : members.get(0).name();
    }

    /** A member's last log entry of a group, asked of its server once; null when it cannot be asked. */
    private org.apache.ratis.server.protocol.TermIndex lastEntryAt(RaftGroupId group, RaftPeer member) {
        try (RaftClient one = newClient(RaftGroup.valueOf(group, member), RetryPolicies.noRetry())) {
            GroupInfoReply info = one.getGroupManagementApi(member.getId()).info(group);
            return info.isSuccess() && info.getLogInfoProto().hasLastEntry()
                ? org.apache.ratis.server.protocol.TermIndex.valueOf(info.getLogInfoProto().getLastEntry()) : null;
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }

    private boolean ping(NodeAddress member) {
        try (RaftClient one = newClient(RaftGroup.valueOf(METADATA_GROUP, peer(member)), RetryPolicies.noRetry())) {
            return one.getGroupManagementApi(RaftPeerId.valueOf(member.name())).info(METADATA_GROUP).isSuccess();
        } catch (IOException | RuntimeException e) {
            return false;
        }
    }

    /**
     * Joins the cluster that {@code seed} belongs to (rabbitmqctl {@code join_cluster}, without the stop and reset
     * RabbitMQ before 4.1 needed): this node leaves its own group, forgetting its metadata, and the cluster's leader
     * adds it as a new member, which receives the cluster's snapshot and log. A node that the cluster still lists
     * (its disk was wiped, say) is removed first and added again: the leader would otherwise go on believing it
     * holds what it held before.
     *
     * @throws IOException when the seed cannot be reached or the leader refuses the change
     */
    public void join(NodeAddress seed) throws IOException {
        if (seed.name().equals(name())) {
            throw new IllegalArgumentException("a node cannot join itself");
        }
        RaftGroup theirs;
        try (RaftClient one = newClient(RaftGroup.valueOf(METADATA_GROUP, peer(seed)), RetryPolicies.noRetry())) {
            GroupInfoReply info = one.getGroupManagementApi(RaftPeerId.valueOf(seed.name())).info(METADATA_GROUP);
            check(info, "reach " + seed.name());
            theirs = info.getGroup();
        } catch (RuntimeException e) {
            // gRPC's own failures (a refused TLS handshake: this node lacks the secret) are unchecked
            throw new IOException("could not reach " + seed.name() + " at " + seed.socketAddress() + ": " + e, e);
        }
        List<RaftPeer> others = new ArrayList<>(theirs.getPeers());
        others.removeIf(p -> p.getId().equals(selfId));
        if (others.size() < theirs.getPeers().size()) {
            try (RaftClient theirClient = newClient(RaftGroup.valueOf(METADATA_GROUP, others),
                    adminRetries(settings))) {
                check(theirClient.admin().setConfiguration(others), "remove the old " + name() + " first");
            }
        }
        List<RaftPeer> peers = new ArrayList<>(others);
        peers.add(peer(settings.self()));
        try (RaftClient local = newClient(RaftGroup.valueOf(METADATA_GROUP, peer(settings.self())),
                RetryPolicies.noRetry())) {
            check(local.getGroupManagementApi(selfId).remove(METADATA_GROUP, true, false), "leave the old group");
            applier.reset();
            check(local.getGroupManagementApi(selfId).add(RaftGroup.valueOf(METADATA_GROUP, peers), true),
                "start the joined group here");
        }
        try (RaftClient theirClient = newClient(RaftGroup.valueOf(METADATA_GROUP, others), adminRetries(settings))) {
            check(theirClient.admin().setConfiguration(peers), "add " + name() + " to the cluster");
        }
        replace(client.get());
        LOG.log(System.Logger.Level.INFO, "node {0} joined the cluster of {1}", name(), seed.name());
    }

    /**
     * Removes {@code nodeName} from the cluster (rabbitmqctl {@code forget_cluster_node}); run on another member.
     *
     * @throws IllegalArgumentException for this node itself or a node that is not a member
     * @throws IOException when no majority commits the change
     */
    public void forget(String nodeName) throws IOException {
        if (nodeName.equals(name())) {
            throw new IllegalArgumentException("a node cannot forget itself; run this on another member");
        }
        List<NodeAddress> members = members();
        if (members.stream().noneMatch(m -> m.name().equals(nodeName))) {
            throw new IllegalArgumentException("node " + nodeName + " is not a member of this cluster");
        }
        List<RaftPeer> remaining = members.stream().filter(m -> !m.name().equals(nodeName)).map(ClusterNode::peer)
            .toList();
        try (RaftClient admin = newClient(RaftGroup.valueOf(METADATA_GROUP, remaining), adminRetries(settings))) {
            check(admin.admin().setConfiguration(remaining), "remove " + nodeName);
        }
        LOG.log(System.Logger.Level.INFO, "node {0} was removed from the cluster", nodeName);
    }

    private static void check(RaftClientReply reply, String what) throws IOException {
        if (!reply.isSuccess()) {
            throw new IOException("could not " + what + ": " + reply.getException(), reply.getException());
        }
    }

    @Override
    public void close() throws IOException {
        background.shutdownNow();
        closeQuietly(reader);
        timer.shutdownNow();
        try {
            client.get().close();
        } finally {
            try {
                if (queueServer != null) {
                    queueServer.close();
                }
            } finally {
                server.close();
                if (queueGroups != null) {
                    queueGroups.close();
                }
            }
        }
    }
}
