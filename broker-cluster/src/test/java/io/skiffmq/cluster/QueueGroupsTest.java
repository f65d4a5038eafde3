package io.skiffmq.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A queue group on three Ratis servers in this JVM, beside the metadata group: one order on every member, a leader
 * entry as the epoch, commands of an older epoch or from a member that does not lead refused, and a new leader
 * after the old one stops.
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

        @Override
        public void apply(String group, long index, ByteBuffer command) {
            commands.add(StandardCharsets.UTF_8.decode(command).toString());
        }

        @Override
        public void leader(String group, String node, long newEpoch, boolean live) {
            epoch = newEpoch;
            if (live) {
                liveEpochs.add(new long[] {newEpoch});
            }
        }

        @Override
        public void notLeader(String group) {
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
            int leader = await().atMost(WAIT).until(() -> {
                for (int i = 0; i < 3; i++) {
                    if (!recordings[i].liveEpochs.isEmpty()) {
                        return i;
                    }
                }
                return -1;
            }, i -> i >= 0);
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
        }
    }
}
