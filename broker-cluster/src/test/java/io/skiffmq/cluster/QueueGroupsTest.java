package io.skiffmq.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.Files;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.ratis.grpc.server.GrpcServicesImpl;
import org.apache.ratis.proto.RaftProtos.AppendEntriesRequestProto;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.util.CodeInjectionForTesting;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A queue group on three Ratis servers in this JVM, beside the metadata group: its first member, the preferred one,
 * leads; one order on every member, a leader entry as the epoch, commands of an older epoch or from a member that
 * does not lead refused, a new leader after the old one stops, and the leadership back to the preferred member once
 * it returns; snapshots that cut the log, a member restarted from its snapshot and the log after it, and a
 * member behind the cut log sent the leader's snapshot.
 */
class QueueGroupsTest {
    private static final ClusterSecret SECRET = ClusterSecret.of("the cluster's secret");
    private static final Duration WAIT = Duration.ofSeconds(60);

    @TempDir
    Path dir;

    /** What one node's queue groups applied, as text. */
    private static final class Recording implements QueueGroupApplier {
        final List<String> commands = new CopyOnWriteArrayList<>();
        final List<long[]> liveEpochs = new CopyOnWriteArrayList<>();
        volatile long epoch = -1;
        volatile String leader;
        /** Every leader reported, in order (null: not known). */
        final List<String> leaders = new CopyOnWriteArrayList<>();
        /** How many commands the last restore brought; -1 for none. */
        volatile int restored = -1;
        /** When set, a restore waits for it to open. */
        volatile CountDownLatch restoreGate;

        @Override
        public void apply(String group, long index, ByteBuffer command) {
            commands.add(StandardCharsets.UTF_8.decode(command).toString());
        }

        @Override
        public void leader(String group, String node, long newEpoch, boolean live) {
            epoch = newEpoch;
            leader = node;
            leaders.add(node);
            if (live) {
                liveEpochs.add(new long[] {newEpoch});
            }
        }

        @Override
        public void notLeader(String group) {
        }

        @Override
        public Snapshot snapshot(String group) {
            List<String> taken = List.copyOf(commands);
            return out -> {
                out.writeInt(taken.size());
                for (String command : taken) {
                    out.writeUTF(command);
                }
            };
        }

        @Override
        public void restore(String group, java.io.DataInput in) throws IOException {
            CountDownLatch gate = restoreGate;
            if (gate != null) {
                try {
                    gate.await();
                } catch (InterruptedException e) {
                    throw new java.io.InterruptedIOException();
                }
            }
            List<String> read = new ArrayList<>();
            for (int n = in.readInt(); n > 0; n--) {
                read.add(in.readUTF());
            }
            commands.clear();
            commands.addAll(read);
            restored = read.size();
        }
    }

    private static byte[] text(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void membersApplyOneOrderAndRefuseAStaleEpochOrANonLeader() throws Exception {
        Recording[] recordings = {new Recording(), new Recording(), new Recording()};
        try (LocalCluster cluster = new LocalCluster(dir, 3, SECRET, s -> s)) {
            QueueGroup[] groups = new QueueGroup[3];
            List<String> names = cluster.addresses.stream().map(NodeAddress::name).toList();
            for (int i = 0; i < 3; i++) {
                cluster.start(i, recordings[i]);
            }
            for (int i = 0; i < 3; i++) {
                groups[i] = cluster.nodes[i].queueGroup(names);
            }
            assertThat(groups[1].name()).isEqualTo(groups[0].name());
            List<String> otherOrder = QueueGroup.ordered(names, names.get(1));
            assertThat(otherOrder).as("preferring another member").containsExactly(names.get(1), names.get(0),
                names.get(2));
            assertThat(QueueGroups.name(QueueGroups.id(otherOrder))).as("another group").isNotEqualTo(groups[0].name());
            int leader = await().atMost(WAIT).until(() -> {
                for (int i = 0; i < 3; i++) {
                    if (!recordings[i].liveEpochs.isEmpty()) {
                        return i;
                    }
                }
                return -1;
            }, i -> i >= 0);
            assertThat(names.get(leader)).as("the first member, the group's preferred leader").isEqualTo(names.get(0));
            long epoch = recordings[leader].liveEpochs.get(0)[0];
            for (int n = 0; n < 20; n++) {
                groups[leader].append(epoch, text("c" + n)).get(30, TimeUnit.SECONDS);
            }
            await().atMost(WAIT).until(() -> recordings[0].commands.size() == 20
                && recordings[1].commands.size() == 20 && recordings[2].commands.size() == 20);
            assertThat(recordings[1].commands).isEqualTo(recordings[0].commands).isEqualTo(recordings[2].commands)
                .startsWith("c0", "c1", "c2").endsWith("c19");
            assertThat(groups[0].leader()).isEqualTo(names.get(leader));
            // the leader's figures, as RabbitMQ's ra_metrics: the metadata group's, then the queue group's
            List<RaftReading> readings = cluster.nodes[leader].raftReadings();
            assertThat(readings).extracting(RaftReading::group)
                .containsExactly(ClusterNode.METADATA_NAME, groups[0].name());
            RaftReading queues = readings.get(1);
            assertThat(queues.term()).isPositive();
            assertThat(queues.commitIndex()).as("the leader entry and 20 commands at least").isGreaterThanOrEqualTo(21);
            assertThat(queues.lastWrittenIndex()).isGreaterThanOrEqualTo(queues.commitIndex());
            assertThat(queues.lastAppliedIndex()).isBetween(21L, queues.commitIndex());
            assertThat(queues.commitLatencySeconds()).as("measured on the 20 appends").isPositive().isLessThan(30);

            assertThatThrownBy(() -> groups[leader].append(epoch - 1, text("stale")).get(30, TimeUnit.SECONDS))
                .isInstanceOf(ExecutionException.class).hasCauseInstanceOf(NoMajorityException.class);
            int other = (leader + 1) % 3;
            assertThatThrownBy(() -> groups[other].append(epoch, text("not the leader")).get(30, TimeUnit.SECONDS))
                .isInstanceOf(ExecutionException.class).hasCauseInstanceOf(NoMajorityException.class);

            cluster.stop(leader);
            int next = await().atMost(WAIT).until(() -> {
                for (int i = 0; i < 3; i++) {
                    if (i != leader && !recordings[i].liveEpochs.isEmpty()) {
                        return i;
                    }
                }
                return -1;
            }, i -> i >= 0);
            long nextEpoch = recordings[next].liveEpochs.get(0)[0];
            assertThat(nextEpoch).isGreaterThan(epoch);
            assertThatThrownBy(() -> groups[next].append(epoch, text("old epoch")).get(30, TimeUnit.SECONDS))
                .isInstanceOf(ExecutionException.class).hasCauseInstanceOf(NoMajorityException.class);
            groups[next].append(nextEpoch, text("after")).get(30, TimeUnit.SECONDS);
            int survivor = 3 - leader - next;
            await().atMost(WAIT).until(() -> recordings[survivor].commands.contains("after"));
            assertThat(recordings[survivor].commands).hasSize(21).doesNotContain("stale", "not the leader",
                "old epoch");

            // the preferred member back: once it has caught up, the leadership comes back to it (Ratis' priorities)
            recordings[leader] = new Recording();
            cluster.start(leader, recordings[leader]);
            cluster.nodes[leader].queueGroup(names);
            liveLeader(recordings, leader);
            await().atMost(WAIT).until(() -> names.get(0).equals(recordings[next].leader));
            assertThat(recordings[leader].commands).contains("after");
        }
    }

    /** Node {@code i}'s files of the queue group: its Raft log segments ({@code current}), or its snapshots. */
    private static List<String> files(LocalCluster cluster, int i, QueueGroup group, String subdir)
            throws IOException {
        try (var paths = Files.list(cluster.queueDir(i).resolve(group.name()).resolve(subdir))) {
            return paths.map(p -> p.getFileName().toString()).sorted().toList();
        } catch (java.nio.file.NoSuchFileException e) {
            return List.of();
        }
    }

    /** Starts the three nodes, each applying into its recording, and the queue group of the three on each. */
    private static QueueGroup[] startWithTheGroup(LocalCluster cluster, Recording[] recordings, List<String> names)
            throws IOException {
        for (int i = 0; i < 3; i++) {
            cluster.start(i, recordings[i]);
        }
        QueueGroup[] groups = new QueueGroup[3];
        for (int i = 0; i < 3; i++) {
            groups[i] = cluster.nodes[i].queueGroup(names);
        }
        return groups;
    }

    /** The group on three nodes, its leader and epoch, and the member stopped while the commands were committed. */
    private record OneBehind(QueueGroup[] groups, int leader, long epoch, int behind) {
    }

    /** Starts the group, stops the member after its leader, and commits {@code count} commands without it. */
    private static OneBehind oneBehind(LocalCluster cluster, Recording[] recordings, List<String> names, int count)
            throws Exception {
        QueueGroup[] groups = startWithTheGroup(cluster, recordings, names);
        int leader = liveLeader(recordings, 0, 1, 2);
        long epoch = recordings[leader].liveEpochs.get(0)[0];
        int behind = (leader + 1) % 3;
        cluster.stop(behind);
        for (int n = 0; n < count; n++) {
            groups[leader].append(epoch, text("command " + n)).get(30, TimeUnit.SECONDS);
        }
        return new OneBehind(groups, leader, epoch, behind);
    }

    private static int liveLeader(Recording[] recordings, int... among) {
        return await().atMost(WAIT).until(() -> {
            for (int i : among) {
                if (!recordings[i].liveEpochs.isEmpty()) {
                    return i;
                }
            }
            return -1;
        }, i -> i >= 0);
    }

    @Test
    void snapshotsCutTheLogAndRestartedMembersRebuildFromThem() throws Exception {
        Recording[] recordings = {new Recording(), new Recording(), new Recording()};
        // a snapshot every 200 bytes of log, asked for every 10 entries, segments of 1 KiB: the log is cut while
        // the test runs
        try (LocalCluster cluster = new LocalCluster(dir, 3, SECRET, s -> s.withSnapshots(10, 1024)
                .withQueueSnapshotBytes(200))) {
            List<String> names = cluster.addresses.stream().map(NodeAddress::name).toList();
            int count = 300;
            OneBehind setUp = oneBehind(cluster, recordings, names, count);
            QueueGroup[] groups = setUp.groups();
            int leader = setUp.leader();
            long epoch = setUp.epoch();
            int behind = setUp.behind();
            List<String> all = List.copyOf(recordings[leader].commands);
            assertThat(all).hasSize(count).startsWith("command 0").endsWith("command " + (count - 1));
            await().atMost(WAIT).until(() -> !files(cluster, leader, groups[leader], "sm").isEmpty()
                && files(cluster, leader, groups[leader], "current").stream().noneMatch(f -> f.startsWith("log_0-")));

            // behind the leader's cut log: it gets the leader's snapshot, then the entries after it
            recordings[behind] = new Recording();
            cluster.start(behind, recordings[behind]);
            groups[behind] = cluster.nodes[behind].queueGroup(names);
            await().atMost(WAIT).until(() -> recordings[behind].commands.size() == count);
            assertThat(recordings[behind].commands).isEqualTo(all);
            assertThat(recordings[behind].restored).as("installed from the leader's snapshot").isPositive();
            assertThat(recordings[behind].leader).isEqualTo(names.get(leader));

            // the third, restarted: its own snapshot, read while its node starts (which does not wait for it), and
            // the log after it, applied once the snapshot is read
            int third = 3 - leader - behind;
            await().atMost(WAIT).until(() -> !files(cluster, third, groups[third], "sm").isEmpty());
            cluster.stop(third);
            recordings[third] = new Recording();
            CountDownLatch gate = new CountDownLatch(1);
            recordings[third].restoreGate = gate;
            CompletableFuture<ClusterNode> started = CompletableFuture.supplyAsync(() -> {
                try {
                    return cluster.start(third, recordings[third]);
                } catch (IOException e) {
                    throw new java.io.UncheckedIOException(e);
                }
            });
            try {
                started.get(WAIT.toSeconds(), TimeUnit.SECONDS);
                groups[third] = cluster.nodes[third].queueGroup(names);
                assertThat(recordings[third].commands).as("nothing applied before the snapshot is read").isEmpty();
            } finally {
                gate.countDown();
            }
            await().atMost(WAIT).until(() -> recordings[third].commands.size() == count);
            assertThat(recordings[third].commands).isEqualTo(all);
            assertThat(recordings[third].restored).as("loaded from its own snapshot").isPositive();

            // the leader goes: one of the two rebuilt members leads, with every command, and goes on
            cluster.stop(leader);
            int next = liveLeader(recordings, behind, third);
            long nextEpoch = recordings[next].liveEpochs.get(recordings[next].liveEpochs.size() - 1)[0];
            assertThat(nextEpoch).isGreaterThan(epoch);
            groups[next].append(nextEpoch, text("after")).get(30, TimeUnit.SECONDS);
            int other = next == behind ? third : behind;
            await().atMost(WAIT).until(() -> recordings[other].commands.contains("after"));
            assertThat(recordings[next].commands).hasSize(count + 1).startsWith(all.toArray(String[]::new));
            assertThat(recordings[other].commands).isEqualTo(recordings[next].commands);
        }
    }

    /** Whether node {@code i}'s log of the group is one open segment: what came before was cut at a snapshot. */
    private static boolean cutToItsOpenSegment(LocalCluster cluster, int i, QueueGroup group) throws IOException {
        List<String> segments = files(cluster, i, group, "current").stream().filter(f -> f.startsWith("log_")).toList();
        return !files(cluster, i, group, "sm").isEmpty() && segments.size() == 1
            && segments.get(0).startsWith("log_inprogress_");
    }

    /**
     * A deposed leader started again after its successor cut the log at a snapshot: Ratis starts a segment at each
     * term, so the successor's log then starts right after the old term's last entry, where the deposed leader's log
     * ends, and the entry before it is gone. It catches up (Ratis 3.2.2's appender sent it entries with no previous
     * entry, failed, and sent nothing more while that leader led), and never takes itself for the leader on the
     * strength of its own old leader entry.
     */
    @Test
    void aDeposedLeaderStartedAfterItsTermWasCutCatchesUp() throws Exception {
        Recording[] recordings = {new Recording(), new Recording(), new Recording()};
        // a snapshot every 200 bytes of log, asked for every 10 entries, in segments of 1 MiB: the successor's
        // term stays in one open segment, and its snapshot cuts the old terms' closed segments alone
        try (LocalCluster cluster = new LocalCluster(dir, 3, SECRET, s -> s.withSnapshots(10, 1 << 20)
                .withQueueSnapshotBytes(200))) {
            List<String> names = cluster.addresses.stream().map(NodeAddress::name).toList();
            QueueGroup[] groups = startWithTheGroup(cluster, recordings, names);
            int deposed = liveLeader(recordings, 0, 1, 2);
            long epoch = recordings[deposed].liveEpochs.get(0)[0];
            for (int n = 0; n < 20; n++) {
                groups[deposed].append(epoch, text("c" + n)).get(30, TimeUnit.SECONDS);
            }
            await().atMost(WAIT).until(() -> recordings[0].commands.size() == 20
                && recordings[1].commands.size() == 20 && recordings[2].commands.size() == 20);
            cluster.stop(deposed);
            int next = liveLeader(recordings, (deposed + 1) % 3, (deposed + 2) % 3);
            long nextEpoch = recordings[next].liveEpochs.get(0)[0];
            int sent = 0;
            while (!cutToItsOpenSegment(cluster, next, groups[next])) {
                assertThat(sent).as("commands appended before the log was cut").isLessThan(2_000);
                groups[next].append(nextEpoch, text("after " + sent++)).get(30, TimeUnit.SECONDS);
            }
            List<String> all = List.copyOf(recordings[next].commands);

            recordings[deposed] = new Recording();
            cluster.start(deposed, recordings[deposed]);
            groups[deposed] = cluster.nodes[deposed].queueGroup(names);
            await().atMost(WAIT).until(() -> recordings[deposed].commands.size() == all.size());
            assertThat(recordings[deposed].commands).isEqualTo(all);
            assertThat(recordings[deposed].leaders).as("the leaders it was told of").isNotEmpty()
                .doesNotContain(names.get(deposed)).endsWith(names.get(next));
        }
    }

    /**
     * A leader's appender that fails is started again, and the member it sends to catches up. Ratis 3.2.2 leaves a
     * failed appender dead (RATIS-2499), and that member got nothing more while the leader led: found by
     * {@code benchmarks/replica-restart} at 10M messages, where a snapshot purged the entries an appender was reading
     * for a member far behind. Here the appender fails once as it sends that member entries (Ratis' own injection
     * point, {@link GrpcServicesImpl#GRPC_SEND_SERVER_REQUEST}).
     */
    @Test
    void anAppenderThatFailsIsStartedAgain() throws Exception {
        Recording[] recordings = {new Recording(), new Recording(), new Recording()};
        try (LocalCluster cluster = new LocalCluster(dir, 3, SECRET, s -> s)) {
            List<String> names = cluster.addresses.stream().map(NodeAddress::name).toList();
            OneBehind setUp = oneBehind(cluster, recordings, names, 50);
            QueueGroup[] groups = setUp.groups();
            int leader = setUp.leader();
            int behind = setUp.behind();

            AtomicBoolean failed = new AtomicBoolean();
            String to = names.get(behind);
            String group = groups[leader].name();
            CodeInjectionForTesting.put(GrpcServicesImpl.GRPC_SEND_SERVER_REQUEST, (local, remote, args) -> {
                if (args.length > 0 && args[0] instanceof AppendEntriesRequestProto request
                        && request.getEntriesCount() > 0
                        && request.getServerRequest().getReplyId().toStringUtf8().equals(to)
                        && RaftGroupId.valueOf(request.getServerRequest().getRaftGroupId().getId()).getUuid().toString()
                            .equals(group)
                        && failed.compareAndSet(false, true)) {
                    throw new IllegalStateException("the appender's one failure");
                }
                return false;
            });
            recordings[behind] = new Recording();
            cluster.start(behind, recordings[behind]);
            groups[behind] = cluster.nodes[behind].queueGroup(names);
            await().atMost(WAIT).untilTrue(failed);
            await().atMost(WAIT).until(() -> recordings[behind].commands.size() == 50);
            assertThat(recordings[behind].commands).isEqualTo(recordings[leader].commands);
        } finally {
            CodeInjectionForTesting.remove(GrpcServicesImpl.GRPC_SEND_SERVER_REQUEST);
        }
    }
}
