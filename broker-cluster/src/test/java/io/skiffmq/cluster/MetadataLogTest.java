package io.skiffmq.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;
import org.junit.jupiter.api.Disabled;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;

/**
 * Three Ratis servers in this JVM on loopback: order, majority, restarts, snapshots, and the secret. Each case has
 * its own servers, ports and directory: they run side by side (junit-platform.properties says how many at once).
 */
@Execution(ExecutionMode.CONCURRENT)
class MetadataLogTest {
    private static final ClusterSecret SECRET = ClusterSecret.of("the cluster's secret");
    private static final Duration WAIT = Duration.ofSeconds(60);

    @TempDir
    Path dir;

    private static ByteBuffer bytes(String text) {
        return ByteBuffer.wrap(text.getBytes(StandardCharsets.UTF_8));
    }

    private static void awaitSame(LocalCluster cluster, int count, int... nodes) {
        await().atMost(WAIT).until(() -> {
            for (int i : nodes) {
                if (cluster.appliers[i].entries().size() < count) {
                    return false;
                }
            }
            return true;
        });
        for (int i : nodes) {
            assertThat(cluster.appliers[i].entries()).as("node " + i).hasSize(count)
                .isEqualTo(cluster.appliers[nodes[0]].entries());
        }
    }

    /** Appends, trying again while the append times out: the first election may take longer than the timeout. */
    private static void appendOnceALeaderIsElected(ClusterNode node, String entry) {
        await().atMost(WAIT).until(() -> {
            try {
                node.append(bytes(entry)).get(30, TimeUnit.SECONDS);
                return true;
            } catch (ExecutionException e) {
                return false;
            }
        });
    }

    @Test
    void entriesAppendedOnAnyNodeAreAppliedOnAllInOneOrder() throws Exception {
        try (LocalCluster cluster = new LocalCluster(dir, 3, SECRET, s -> s)) {
            cluster.startAll();
            appendOnceALeaderIsElected(cluster.nodes[0], "entry -1");
            List<CompletableFuture<Long>> appends = new ArrayList<>();
            for (int i = 0; i < 60; i++) {
                appends.add(cluster.nodes[i % 3].append(bytes("entry " + i)));
            }
            List<Long> indexes = new ArrayList<>();
            for (int i = 0; i < appends.size(); i++) {
                long index = appends.get(i).get(60, TimeUnit.SECONDS);
                indexes.add(index);
                // once the future completes, the appending node has applied the entry: reads there see it
                assertThat(cluster.appliers[i % 3].entries()).contains("entry " + i);
            }
            assertThat(indexes).doesNotHaveDuplicates();
            awaitSame(cluster, 61, 0, 1, 2);
            assertThat(cluster.appliers[0].entries()).containsExactlyInAnyOrderElementsOf(
                Stream.iterate(-1, i -> i + 1).limit(61).map(i -> "entry " + i).toList());
            // entries from one node keep the order they were appended in
            List<String> fromNode0 = cluster.appliers[1].entries().stream()
                .filter(e -> Integer.parseInt(e.substring(6)) % 3 == 0 && !e.equals("entry -1")).toList();
            assertThat(fromNode0).isSortedAccordingTo(Comparator.comparingInt(e -> Integer.parseInt(e.substring(6))));
        }
    }

    @Test
    void withoutAMajorityAnAppendFailsWithinItsTimeoutAndWorksOnceOneIsBack() throws Exception {
        try (LocalCluster cluster = new LocalCluster(dir, 3, SECRET,
                s -> s.withAppendTimeout(Duration.ofSeconds(3)))) {
            cluster.startAll();
            appendOnceALeaderIsElected(cluster.nodes[0], "before");
            cluster.stop(1);
            cluster.stop(2);
            long start = System.nanoTime();
            CompletableFuture<Long> lonely = cluster.nodes[0].append(bytes("alone"));
            // a second append a second later, through the same client: the first one's timeout closes that client,
            // which must not cut the second one's own time short
            AtomicLong laterSent = new AtomicLong();
            CompletableFuture<Long> later = CompletableFuture.runAsync(() -> laterSent.set(System.nanoTime()),
                CompletableFuture.delayedExecutor(1, TimeUnit.SECONDS))
                .thenCompose(sent -> cluster.nodes[0].append(bytes("alone too")));
            assertThatThrownBy(() -> lonely.get(30, TimeUnit.SECONDS)).isInstanceOf(ExecutionException.class)
                .hasCauseInstanceOf(NoMajorityException.class);
            long tookMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            assertThat(tookMillis).as("failed within the timeout, not long after it").isBetween(2_900L, 4_500L);
            assertThatThrownBy(() -> later.get(30, TimeUnit.SECONDS)).isInstanceOf(ExecutionException.class)
                .hasCauseInstanceOf(NoMajorityException.class);
            long laterTookMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - laterSent.get());
            assertThat(laterTookMillis).as("the later one failed after its own timeout too")
                .isBetween(2_900L, 4_500L);

            cluster.start(1);
            // the majority is back: appends work again, and both running nodes agree
            appendOnceALeaderIsElected(cluster.nodes[0], "after");
            await().atMost(WAIT).until(() -> cluster.appliers[1].entries().contains("after"));
            assertThat(cluster.appliers[1].entries()).isEqualTo(cluster.appliers[0].entries());
        }
    }

    @Test
    void aFollowerWhoseLinkToTheLeaderClosedElectsBeforeTheElectionTimeout() throws Exception {
        Duration election = Duration.ofSeconds(5);
        try (LocalCluster cluster = new LocalCluster(dir, 3, SECRET, s -> new ClusterSettings(s.self(), s.seeds(),
                s.bindHost(), s.dataDir(), s.secret(), s.appendTimeout(), election, s.snapshotEvery(),
                s.segmentBytes(), s.queueSnapshotBytes()))) {
            cluster.startAll();
            appendOnceALeaderIsElected(cluster.nodes[0], "before");
            await().atMost(WAIT).until(() -> Stream.of(cluster.nodes).allMatch(n -> n.metadataLeader() != null
                && n.metadataLeader().equals(cluster.nodes[0].metadataLeader())));
            String old = cluster.nodes[0].metadataLeader();
            int leader = Integer.parseInt(old.substring(1, 2));
            cluster.stop(leader);
            long stopped = System.nanoTime();
            for (ClusterNode survivor : cluster.nodes) {
                if (survivor != null) {
                    survivor.nodeLinkLost(old);
                }
            }
            // without the early election no follower stands before 5 s without a heartbeat
            await().atMost(Duration.ofMillis(4_000)).pollInterval(Duration.ofMillis(20)).until(() -> Stream
                .of(cluster.nodes).filter(n -> n != null).allMatch(n -> n.metadataLeader() != null
                    && !n.metadataLeader().equals(old)));
            assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - stopped)).isLessThan(election.toMillis());
            int survivor = leader == 0 ? 1 : 0;
            cluster.nodes[survivor].append(bytes("after")).get(30, TimeUnit.SECONDS);
        }
    }

    @Test
    void aStoppedNodeCatchesUpWhenItComesBack() throws Exception {
        try (LocalCluster cluster = new LocalCluster(dir, 3, SECRET, s -> s)) {
            cluster.startAll();
            for (int i = 0; i < 10; i++) {
                cluster.nodes[0].append(bytes("one " + i)).get(60, TimeUnit.SECONDS);
            }
            cluster.stop(2);
            for (int i = 0; i < 10; i++) {
                cluster.nodes[1].append(bytes("two " + i)).get(60, TimeUnit.SECONDS);
            }
            cluster.start(2);
            awaitSame(cluster, 20, 0, 1, 2);
        }
    }

    @Test
    void aNodeThatFellBehindTheTruncatedLogGetsASnapshot() throws Exception {
        // a snapshot every 20 entries, and segments small enough that the log before it is removed
        try (LocalCluster cluster = new LocalCluster(dir, 3, SECRET, s -> s.withSnapshots(20, 1024))) {
            cluster.startAll();
            appendOnceALeaderIsElected(cluster.nodes[0], "first");
            awaitSame(cluster, 1, 0, 1, 2);
            cluster.stop(2);
            for (int i = 0; i < 100; i++) {
                cluster.nodes[i % 2].append(bytes("entry " + i)).get(60, TimeUnit.SECONDS);
            }
            cluster.start(2);
            awaitSame(cluster, 101, 0, 1, 2);
            assertThat(cluster.appliers[2].snapshotsInstalled.get()).as("caught up from a snapshot").isPositive();
            cluster.nodes[2].append(bytes("from the node that was behind")).get(60, TimeUnit.SECONDS);
            awaitSame(cluster, 102, 0, 1, 2);
        }
    }

    @Test
    void aWipedNodeJoinsAgainAndIsRebuiltFromASnapshot() throws Exception {
        try (LocalCluster cluster = new LocalCluster(dir, 3, SECRET, s -> s.withSnapshots(20, 1024))) {
            cluster.startAll();
            appendOnceALeaderIsElected(cluster.nodes[0], "first");
            for (int i = 0; i < 60; i++) {
                cluster.nodes[i % 2].append(bytes("entry " + i)).get(60, TimeUnit.SECONDS);
            }
            awaitSame(cluster, 61, 0, 1, 2);
            cluster.stop(2);
            deleteTree(cluster.dir(2));
            cluster.start(2);
            // as a reset RabbitMQ node, it joins again
            cluster.nodes[2].join(cluster.addresses.get(0));
            awaitSame(cluster, 61, 0, 1, 2);
            assertThat(cluster.appliers[2].snapshotsInstalled.get()).as("rebuilt from a snapshot").isPositive();
            cluster.nodes[2].append(bytes("from the wiped node")).get(60, TimeUnit.SECONDS);
            awaitSame(cluster, 62, 0, 1, 2);
        }
    }

    @Test
    void aNodeOfItsOwnJoinsWithoutAStopAndIsForgotten() throws Exception {
        try (LocalCluster cluster = new LocalCluster(dir, 4, SECRET, s -> s)) {
            cluster.startFirst(3);
            ClusterNode loner = cluster.startAlone(3);
            appendOnceALeaderIsElected(loner, "its own");
            appendOnceALeaderIsElected(cluster.nodes[0], "the cluster's");
            loner.join(cluster.addresses.get(1));
            // what it had is gone; it has the cluster's entries and takes part
            await().atMost(WAIT).until(() -> cluster.appliers[3].entries().equals(List.of("the cluster's")));
            loner.append(bytes("joined")).get(60, TimeUnit.SECONDS);
            awaitSame(cluster, 2, 0, 1, 2, 3);
            String lonerName = cluster.addresses.get(3).name();
            assertThat(cluster.nodes[0].status().members()).contains(lonerName);
            assertThat(cluster.nodes[2].status().running()).contains(lonerName);

            cluster.stop(3);
            cluster.nodes[0].forget(lonerName);
            await().atMost(WAIT).until(() -> !cluster.nodes[1].status().members().contains(lonerName));
            cluster.nodes[1].append(bytes("without it")).get(60, TimeUnit.SECONDS);
            awaitSame(cluster, 3, 0, 1, 2);
            assertThatThrownBy(() -> cluster.nodes[0].forget(lonerName)).isInstanceOf(IllegalArgumentException.class);
        }
    }

    @Test
    void aNodeWithoutTheSecretGetsNothingAndChangesNothing() throws Exception {
        try (LocalCluster cluster = new LocalCluster(dir, 3, SECRET, s -> s.withAppendTimeout(Duration.ofSeconds(3)))) {
            cluster.start(0);
            cluster.start(1);
            ClusterNode intruder = cluster.start(2, ClusterSecret.of("a guess"));
            for (int i = 0; i < 5; i++) {
                cluster.nodes[i % 2].append(bytes("entry " + i)).get(60, TimeUnit.SECONDS);
            }
            awaitSame(cluster, 5, 0, 1);
            assertThatThrownBy(() -> intruder.append(bytes("forged")).get(30, TimeUnit.SECONDS))
                .hasCauseInstanceOf(NoMajorityException.class);
            assertThat(cluster.appliers[2].entries()).isEmpty();
            assertThat(intruder.appliedIndex()).isZero();
            assertThat(cluster.nodes[0].status().running()).containsExactly("n0@127.0.0.1", "n1@127.0.0.1");
            assertThat(intruder.status().running()).containsExactly("n2@127.0.0.1");
            assertThatThrownBy(() -> intruder.join(cluster.addresses.get(0))).isInstanceOf(java.io.IOException.class);
            assertThat(cluster.nodes[0].status().members()).containsExactly("n0@127.0.0.1", "n1@127.0.0.1",
                "n2@127.0.0.1");
            // its attempts did not disturb the others
            cluster.nodes[1].append(bytes("still fine")).get(60, TimeUnit.SECONDS);
            awaitSame(cluster, 6, 0, 1);
            assertThat(cluster.appliers[0].entries()).doesNotContain("forged");
        }
    }

    @Test
    void theClusterNameIsSetOnEveryNodeAndStatusListsTheMembers() throws Exception {
        try (LocalCluster cluster = new LocalCluster(dir, 3, SECRET, s -> s)) {
            cluster.startAll();
            assertThat(cluster.nodes[1].status().clusterName()).isEqualTo("n0@127.0.0.1");
            cluster.nodes[1].setClusterName("skiffs").get(60, TimeUnit.SECONDS);
            await().atMost(WAIT).until(() -> Stream.of(cluster.nodes)
                .allMatch(n -> n.status().clusterName().equals("skiffs")));
            ClusterStatus status = cluster.nodes[2].status();
            assertThat(status.members()).containsExactly("n0@127.0.0.1", "n1@127.0.0.1", "n2@127.0.0.1");
            assertThat(status.running()).isEqualTo(status.members());
            assertThat(status.leader()).isIn(status.members());
            cluster.stop(0);
            await().atMost(WAIT).until(() -> !cluster.nodes[2].status().running().contains("n0@127.0.0.1"));
            // the name is not an applier entry
            assertThat(cluster.appliers[1].entries()).isEmpty();
        }
    }

    static void deleteTree(Path root) throws java.io.IOException {
        try (Stream<Path> paths = java.nio.file.Files.walk(root)) {
            for (Path p : paths.sorted(Comparator.reverseOrder()).toList()) {
                java.nio.file.Files.delete(p);
            }
        }
    }
}
