package io.skiffmq.cluster;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.ratis.protocol.ClientId;
import org.apache.ratis.protocol.GroupManagementRequest;
import org.apache.ratis.protocol.Message;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftClientRequest;
import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.thirdparty.com.google.protobuf.ByteString;

/**
 * The queue groups this node's queue server hosts ({@link QueueGroup}, {@link ClusterNode}): one per member set,
 * its id derived from the member names, added to the server when first asked for and recovered with it at start.
 * Commands are submitted to the local server directly (the live queue is on the leader's node), with no client and
 * no network hop. Thread-safe.
 */
final class QueueGroups {
    private static final System.Logger LOG = System.getLogger(QueueGroups.class.getName());
    /** Between two tries of a new leader's entry (its first entry of the term may not be committed yet). */
    private static final long ANNOUNCE_RETRY_MILLIS = 50;
    private static final byte[] NOTICE_ENTRY = {QueueGroupMachine.NOTICE};
    /** The Ratis priority of a group's preferred leader, its first member; the others have 0. */
    static final int PREFERRED_PRIORITY = 1;

    private final QueueGroupApplier applier;
    private final RaftPeerId self;
    private final Duration appendTimeout;
    /** The bytes of log between two snapshots of a group ({@link ClusterSettings#queueSnapshotBytes}). */
    private final long snapshotBytes;
    private final ScheduledExecutorService timer;
    /** The appends' timeout counts the time this process ran: a leader stopped and resumed learns it was deposed. */
    private final RunningTime running;
    private final ClientId clientId = ClientId.randomId();
    private final AtomicLong callIds = new AtomicLong();
    private final Map<RaftGroupId, QueueGroupMachine> machines = new ConcurrentHashMap<>();
    /** Writes the groups' snapshots, one at a time, beside their apply threads. */
    private final java.util.concurrent.ExecutorService snapshotWriter = java.util.concurrent.Executors
        .newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "cluster-queue-snapshots");
            t.setDaemon(true);
            return t;
        });
    /**
     * Reads the groups' snapshots when the server starts, beside Ratis' reading of their logs: two at a time, so
     * that a node of many groups does not build all its replicas at once.
     */
    private final ThreadPoolExecutor snapshotReaders = new ThreadPoolExecutor(2, 2, 10, TimeUnit.SECONDS,
        new LinkedBlockingQueue<>(), r -> {
            Thread t = new Thread(r, "cluster-queue-group-load");
            t.setDaemon(true);
            return t;
        });
    /** Each group's appends from this node, submitted to committed. */
    private final Map<RaftGroupId, CommitLatency> latencies = new ConcurrentHashMap<>();
    private volatile RaftServer server;

    QueueGroups(QueueGroupApplier applier, RaftPeerId self, Duration appendTimeout, ScheduledExecutorService timer,
            RunningTime running, long snapshotBytes) {
        this.applier = applier;
        this.snapshotBytes = snapshotBytes;
        this.self = self;
        this.appendTimeout = appendTimeout;
        this.timer = timer;
        this.running = running;
        snapshotReaders.allowCoreThreadTimeOut(true);
    }

    void server(RaftServer raftServer) {
        this.server = raftServer;
    }

    /** After the server closed: its groups waited for their snapshots. */
    void close() {
        snapshotWriter.shutdown();
        snapshotReaders.shutdown();
    }

    String self() {
        return self.toString();
    }

    /** The state machine for a queue group of this server (the registry asks, at start and when one is added). */
    QueueGroupMachine machine(RaftGroupId id) {
        QueueGroupMachine machine = new QueueGroupMachine(applier, this, snapshotWriter, snapshotReaders,
            snapshotBytes);
        machines.put(id, machine);
        return machine;
    }

    /** The id of the group of {@code members} in their order ({@link QueueGroup#ordered}). */
    static RaftGroupId id(List<String> members) {
        return RaftGroupId.valueOf(UUID.nameUUIDFromBytes(("skiffmq queues " + String.join(",", members))
            .getBytes(StandardCharsets.UTF_8)));
    }

    static String name(RaftGroupId id) {
        return id.getUuid().toString();
    }

    /**
     * The group of these members, in their order ({@link QueueGroup#ordered}), this node among them, added to this
     * server if it is not there yet. Its first member has a higher Ratis priority than the others: it wins the
     * group's elections whenever its log is as long as theirs, and a leader hands it the leadership once it has
     * caught up (Ratis' {@code yieldLeaderToHigherPriorityPeer}).
     */
    QueueGroup group(List<NodeAddress> members) throws IOException {
        List<String> names = members.stream().map(NodeAddress::name).toList();
        if (!names.equals(QueueGroup.ordered(names, names.get(0)))) {
            throw new IllegalArgumentException("members " + names + " are not in a group's order");
        }
        if (!names.contains(self.toString())) {
            throw new IllegalArgumentException("this node is not among the members " + names);
        }
        RaftGroupId id = id(names);
        synchronized (this) {
            if (!machines.containsKey(id)) {
                List<org.apache.ratis.protocol.RaftPeer> peers = new java.util.ArrayList<>();
                for (int i = 0; i < members.size(); i++) {
                    peers.add(ClusterNode.queuePeer(members.get(i), i == 0 ? PREFERRED_PRIORITY : 0));
                }
                RaftGroup group = RaftGroup.valueOf(id, peers);
                RaftClientReply reply = server.groupManagement(GroupManagementRequest.newAdd(clientId, self,
                    callIds.incrementAndGet(), group, true));
                if (!reply.isSuccess() && !machines.containsKey(id)) {
                    throw new IOException("could not add queue group " + names + ": " + reply.getException());
                }
                LOG.log(System.Logger.Level.INFO, "queue group {0} of {1} added on this node", name(id), names);
            }
        }
        return new Handle(id, names);
    }

    /** Adds the figures of each queue group on this server to {@code out}. */
    void readings(List<RaftReading> out) {
        for (RaftGroupId id : machines.keySet()) {
            RaftReading reading = RaftReading.of(server, id, name(id), latency(id));
            if (reading != null) {
                out.add(reading);
            }
        }
    }

    private CommitLatency latency(RaftGroupId id) {
        return latencies.computeIfAbsent(id, g -> new CommitLatency());
    }

    /** This node was elected the group's leader: it appends its {@code leader} entry, tried until it is in. */
    void announce(RaftGroupId id) {
        byte[] node = self.toString().getBytes(StandardCharsets.UTF_8);
        byte[] entry = new byte[1 + node.length];
        entry[0] = QueueGroupMachine.LEADER;
        System.arraycopy(node, 0, entry, 1, node.length);
        timer.execute(() -> announceOnce(id, entry));
    }

    private void announceOnce(RaftGroupId id, byte[] entry) {
        submit(id, entry).whenComplete((reply, failure) -> {
            if (failure == null && reply.isSuccess()) {
                return;
            }
            try {
                if (server.getDivision(id).getInfo().isLeader()) {
                    timer.schedule(() -> announceOnce(id, entry), ANNOUNCE_RETRY_MILLIS, TimeUnit.MILLISECONDS);
                }
            } catch (IOException | java.util.concurrent.RejectedExecutionException e) {
                // the group or this node is going
            }
        });
    }

    /** Appends a {@link QueueGroupMachine#NOTICE}, from the leader, off its apply thread; its outcome is not needed. */
    void notice(RaftGroupId id) {
        timer.execute(() -> submit(id, NOTICE_ENTRY));
    }

    private CompletableFuture<RaftClientReply> submit(RaftGroupId id, byte[] entry) {
        RaftClientRequest request = RaftClientRequest.newBuilder().setClientId(clientId).setServerId(self)
            .setGroupId(id).setCallId(callIds.incrementAndGet()).setMessage(Message.valueOf(ByteString.copyFrom(entry)))
            .setType(RaftClientRequest.writeRequestType()).build();
        try {
            return server.submitClientRequestAsync(request);
        } catch (IOException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    /** A command failed because this member stopped leading (stepped down, or its group went from this node). */
    private static boolean lostLeadership(Throwable cause) {
        return cause instanceof org.apache.ratis.protocol.exceptions.NotLeaderException
            || cause instanceof org.apache.ratis.protocol.exceptions.LeaderSteppingDownException
            || cause instanceof org.apache.ratis.protocol.exceptions.AlreadyClosedException;
    }

    /** One group as the broker sees it. */
    private final class Handle implements QueueGroup {
        private final RaftGroupId id;
        private final List<String> members;
        private final CommitLatency latency;

        Handle(RaftGroupId id, List<String> members) {
            this.id = id;
            this.members = members;
            this.latency = latency(id);
        }

        @Override
        public String name() {
            return QueueGroups.name(id);
        }

        @Override
        public List<String> members() {
            return members;
        }

        @Override
        public String leader() {
            QueueGroupMachine machine = machines.get(id);
            return machine == null ? null : machine.leader();
        }

        @Override
        public CompletableFuture<Void> append(long epoch, byte[] command) {
            byte[] entry = new byte[1 + 8 + command.length];
            ByteBuffer.wrap(entry).put(QueueGroupMachine.COMMAND).putLong(epoch).put(command);
            long timeout = appendTimeout.toMillis();
            long began = System.nanoTime();
            return running.within(submit(id, entry), timeout).handle((reply, failure) -> {
                if (failure != null) {
                    Throwable cause = failure instanceof CompletionException && failure.getCause() != null
                        ? failure.getCause() : failure;
                    throw new CompletionException(new NoMajorityException("no majority of queue group "
                        + name() + " committed the command within " + timeout + " ms: " + cause, cause,
                        lostLeadership(cause)));
                }
                if (!reply.isSuccess()) {
                    throw new CompletionException(new NoMajorityException("queue group " + name()
                        + " did not commit the command: " + reply.getException(), reply.getException(),
                        lostLeadership(reply.getException())));
                }
                if (reply.getMessage().getContent().byteAt(0) != 1) {
                    throw new CompletionException(new NoMajorityException("queue group " + name()
                        + ": the command's epoch " + epoch + " was over", null, true));
                }
                latency.add(System.nanoTime() - began);
                return null;
            });
        }
    }
}
