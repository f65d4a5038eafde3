package io.skiffmq.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.MessageProperties;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A Jepsen-style check of a quorum queue under kill -9 and real network partitions ({@link NetnsCluster}): two
 * publishers send messages with confirms to a quorum queue replicated on all three nodes, each through one node and on
 * to the next node whenever its connection fails or its confirms stop coming, while a nemesis takes turns between two
 * faults, beginning with a kill. A kill: kill -9 of the queue's current leader's node (whichever it is, node 0
 * included), held until the other two have elected another leader, then the node started again on its data while they
 * confirm more, and the three agreeing on a leader. A partition: the queue's current leader cut off from the other two,
 * held until the majority has elected another leader and confirmed more, healed, and the three agreeing on the queue's
 * leader; the second partition cuts a follower off instead, and every third one heals after 0.5 to 2.5 s, about when
 * the majority's election ends. Once done, the queue is consumed and checked: every confirmed message consumed (none
 * lost), each confirmed one once (duplicates only among the unconfirmed), nothing consumed that was not published.
 * Nacked and unanswered publishes are counted.
 *
 * <p>{@code -Dskiffmq.jepsen.publishes=N} sets how many messages are published at least (3,000 in the suite, which
 * keeps the class about a minute on a quiet machine): the faults, and the publishers, go on until that many were sent,
 * for at least {@code -Dskiffmq.jepsen.kills=N} kills (1) and {@code -Dskiffmq.jepsen.partitions=N} partitions
 * (2). The run, 100,000 publishes (docs/quorum-queues.md):
 * <pre>
 * mvn -B -o -pl broker-server -am test -Dtest=ClusterQuorumPartitionJepsenTest \
 *   -Dsurefire.failIfNoSpecifiedTests=false -Dgroups=one-at-a-time -DexcludedGroups= \
 *   -Dskiffmq.jepsen.publishes=100000 -Dskiffmq.jepsen.kills=3 -Dskiffmq.jepsen.partitions=3
 * </pre>
 * Skipped where network namespaces cannot be made (not root, no {@code ip} or {@code nft}).
 */
@OneAtATime
class ClusterQuorumPartitionJepsenTest {
    private static final int APPEND_TIMEOUT_MILLIS = 3000;
    private static final Duration WAIT = Duration.ofSeconds(90);
    private static final String QUEUE = "jpq";
    private static final int PUBLISHERS = 2;
    /** Publishes in flight per publisher: each window is waited for before the next. */
    private static final int WINDOW = 50;

    @TempDir
    Path dir;

    private NetnsCluster cluster;
    private final AtomicInteger ids = new AtomicInteger();
    private final Set<String> published = ConcurrentHashMap.newKeySet();
    private final Set<String> confirmed = ConcurrentHashMap.newKeySet();
    private final Set<String> nacked = ConcurrentHashMap.newKeySet();
    private final ConcurrentLinkedQueue<String> faults = new ConcurrentLinkedQueue<>();
    private final AtomicBoolean stop = new AtomicBoolean();
    private final long start = System.nanoTime();
    /** Faults made so far: the nemesis' (the test's) thread's. */
    private int kills;
    private int partitions;

    @Test
    void everyConfirmedMessageSurvivesKillsAndPartitionsOfTheQueuesLeader() throws Exception {
        String why = NetnsCluster.unavailable();
        Assumptions.assumeTrue(why == null, () -> "no network namespaces: " + why);
        int publishes = Integer.getInteger("skiffmq.jepsen.publishes", 3000);
        int minKills = Integer.getInteger("skiffmq.jepsen.kills", 1);
        int minPartitions = Integer.getInteger("skiffmq.jepsen.partitions", 2);
        try (NetnsCluster c = new NetnsCluster(dir, 3, APPEND_TIMEOUT_MILLIS)) {
            cluster = c;
            c.startAll();
            // a busy machine can time the metadata commit out (541): the declare is tried again
            await().atMost(WAIT).ignoreExceptions().until(() -> {
                try (Connection setup = connect(0)) {
                    setup.createChannel().queueDeclare(QUEUE, true, false, false,
                        Map.of("x-queue-type", "quorum", "x-quorum-initial-group-size", 3));
                }
                return true;
            });
            List<Thread> threads = new ArrayList<>();
            for (int i = 0; i < PUBLISHERS; i++) {
                int first = i;
                threads.add(new Thread(() -> publisher(first), "jepsen-quorum-publisher-" + i));
            }
            threads.forEach(Thread::start);
            try {
                nemesis(publishes, minKills, minPartitions);
            } finally {
                stop.set(true);
                for (Thread t : threads) {
                    t.join(WAIT.toMillis());
                }
                for (int i = 0; i < 3; i++) {
                    cluster.heal(i);
                    if (!cluster.nodes[i].process.isAlive()) {
                        cluster.start(i); // the nemesis failed between a kill and its start
                    }
                }
            }
            check(drain());
        }
    }

    /**
     * Publishes windows of messages with confirms through node {@code node}, moving on to the next node whenever
     * the connection fails or a window's confirms do not all come within the append timeout and more, until the
     * nemesis is done.
     */
    private void publisher(int node) {
        while (!stop.get()) {
            Connection connection = null;
            try {
                connection = cluster.factory(node).newConnection();
                Channel channel = connection.createChannel();
                ConfirmTracking<String> tracking = new ConfirmTracking<>(channel, confirmed, nacked);
                while (!stop.get()) {
                    for (int i = 0; i < WINDOW; i++) {
                        String body = "m" + ids.getAndIncrement();
                        tracking.publishing(channel.getNextPublishSeqNo(), body);
                        published.add(body);
                        channel.basicPublish("", QUEUE, MessageProperties.PERSISTENT_TEXT_PLAIN,
                            body.getBytes(StandardCharsets.UTF_8));
                    }
                    channel.waitForConfirms(APPEND_TIMEOUT_MILLIS + 2000L); // false when some were nacked
                }
            } catch (Exception e) {
                // cut off from the leader (confirms stop), or its connection lost: on through the next node
                faults.add(ms() + " publisher on n" + node + ": " + e);
                node = (node + 1) % 3;
            } finally {
                if (connection != null) {
                    connection.abort();
                }
            }
        }
    }

    /**
     * Kills the queue's leader's node and starts it again, and partitions the leader (a follower, the second time; the
     * leader for 0.5 to 2.5 s, every third time) away from the other two and heals, in turns beginning with a kill
     * (once one kind has had its minimum, the other until it has its own), until {@code publishes} were sent and at
     * least {@code minKills} kills and {@code minPartitions} partitions were made.
     */
    private void nemesis(int publishes, int minKills, int minPartitions) throws Exception {
        while (kills < minKills || partitions < minPartitions || ids.get() < publishes) {
            boolean killsDue = kills < minKills;
            // in turns, the one still short of its minimum first
            if (killsDue != partitions < minPartitions ? killsDue : kills <= partitions) {
                kill();
            } else {
                partition();
            }
        }
    }

    /**
     * kill -9 of the queue's leader's node, until the other two elect another leader; then the node starts again on
     * its data and rejoins, while the two confirm more (a start takes seconds: the suite's time).
     */
    private void kill() throws Exception {
        int leader = agreeingOnLeader();
        faults.add(ms() + " kill -9 n" + leader + " (the queue's leader)");
        long killedAt = System.nanoTime();
        cluster.nodes[leader].kill();
        kills++;
        int[] rest = IntStream.range(0, 3).filter(i -> i != leader).toArray();
        int next = await().atMost(WAIT).until(() -> agreedQueueLeader(rest), l -> l >= 0 && l != leader);
        faults.add(ms() + " n" + next + " leads, " + (System.nanoTime() - killedAt) / 1_000_000
            + " ms after the kill");
        CompletableFuture<Void> starting = CompletableFuture.runAsync(() -> {
            try {
                cluster.start(leader);
            } catch (Exception e) {
                throw new CompletionException(e);
            }
        }, task -> new Thread(task, "jepsen-start-n" + leader).start());
        hold(200, Duration.ofSeconds(1), Duration.ofSeconds(8));
        starting.join();
        faults.add(ms() + " started n" + leader);
        hold(100, Duration.ofSeconds(1), Duration.ofSeconds(4));
    }

    /** One partition, as the class comment says, held, and healed. */
    private void partition() throws Exception {
        int leader = agreeingOnLeader();
        int cut = partitions == 1 ? (leader + 1) % 3 : leader;
        // every third partition is healed about when the majority's election ends, before or after
        boolean brief = partitions % 3 == 2;
        faults.add(ms() + " isolate n" + cut + (cut != leader ? " (a follower)"
            : brief ? " (the queue's leader, briefly)" : " (the queue's leader)"));
        cluster.isolate(cut);
        partitions++;
        if (brief) {
            // the election ends one to two election timeouts after the cut: healed between half and two and a half
            int election = ChildCluster.ELECTION_TIMEOUT_MILLIS;
            hold(Integer.MAX_VALUE, Duration.ZERO,
                Duration.ofMillis(election / 2 + ThreadLocalRandom.current().nextInt(2 * election)));
        } else if (cut == leader) {
            // the majority elects another leader, which the cut-off one must not take for itself
            long cutAt = System.nanoTime();
            int[] rest = IntStream.range(0, 3).filter(i -> i != cut).toArray();
            int next = await().atMost(WAIT).until(() -> agreedQueueLeader(rest), l -> l >= 0 && l != cut);
            faults.add(ms() + " n" + next + " leads, " + (System.nanoTime() - cutAt) / 1_000_000
                + " ms after the cut");
        }
        if (!brief) {
            // long enough for the cut-off side's publishes to time out, and for the majority to confirm more
            hold(200, Duration.ofSeconds(APPEND_TIMEOUT_MILLIS / 1000 + 1), Duration.ofSeconds(8));
        }
        cluster.heal(cut);
        faults.add(ms() + " healed n" + cut);
        hold(100, Duration.ofSeconds(1), Duration.ofSeconds(4));
    }

    /**
     * Waits until the three agree on the queue's leader, and returns it; logs each node's view, as it was when they
     * last disagreed, when that took more than a second.
     */
    private int agreeingOnLeader() {
        long began = System.nanoTime();
        String[] disagreed = {null};
        int leader = await().atMost(WAIT).until(() -> {
            int[] views = queueLeadersSeenBy(0, 1, 2);
            boolean agreed = views[0] >= 0 && views[0] == views[1] && views[1] == views[2];
            if (!agreed) {
                disagreed[0] = Arrays.toString(views);
            }
            return agreed ? views[0] : -1;
        }, l -> l >= 0);
        long took = (System.nanoTime() - began) / 1_000_000;
        if (took > 1000) {
            faults.add(ms() + " the three agree on n" + leader + " after " + took + " ms (before, leaders seen by n0,"
                + " n1, n2: " + disagreed[0] + ")");
        }
        return leader;
    }

    /** Waits at least {@code least}, then until {@code more} more messages were confirmed or {@code most}. */
    private void hold(int more, Duration least, Duration most) {
        long target = (long) confirmed.size() + more;
        long began = System.nanoTime();
        await().atMost(most.plusSeconds(1)).pollDelay(Duration.ZERO).until(() -> {
            long held = System.nanoTime() - began;
            return held >= most.toNanos() || held >= least.toNanos() && confirmed.size() >= target;
        });
    }

    /** The queue's leader as each of {@code among} sees it, or -1 when they differ or know none. */
    private int agreedQueueLeader(int... among) {
        int[] views = queueLeadersSeenBy(among);
        return IntStream.of(views).allMatch(v -> v == views[0]) ? views[0] : -1;
    }

    /**
     * The queue's leader as each of {@code among} sees it ({@code GET /api/queues}), -1 where none is known. Asked
     * side by side: a node's answer waits up to 2 s for a member cut off.
     */
    private int[] queueLeadersSeenBy(int... among) {
        List<CompletableFuture<Integer>> answers = new ArrayList<>();
        for (int i : among) {
            answers.add(CompletableFuture.supplyAsync(() -> cluster.queueLeaderSeenBy(i, QUEUE),
                task -> new Thread(task, "queue-leader-of-n" + i).start()));
        }
        return answers.stream().mapToInt(CompletableFuture::join).toArray();
    }

    /**
     * Consumes the queue through the node that leads it, once the three agree on one, until every confirmed
     * message came and none is ready, again whenever the consumer is cancelled or its channel closed; how many
     * times each message came.
     */
    private Map<String, Integer> drain() throws Exception {
        Map<String, Integer> held = new ConcurrentHashMap<>();
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (System.nanoTime() < deadline) {
            int leader = agreeingOnLeader();
            try (Connection connection = cluster.factory(leader).newConnection()) {
                Channel channel = connection.createChannel();
                Channel counting = connection.createChannel();
                AtomicBoolean cancelled = new AtomicBoolean();
                channel.basicQos(1000);
                channel.basicConsume(QUEUE, false, (tag, delivery) -> {
                    held.merge(new String(delivery.getBody(), StandardCharsets.UTF_8), 1, Integer::sum);
                    channel.basicAck(delivery.getEnvelope().getDeliveryTag(), false);
                }, tag -> cancelled.set(true));
                await().atMost(Duration.ofNanos(Math.max(1, deadline - System.nanoTime())))
                    .until(() -> cancelled.get() || !channel.isOpen()
                        || held.keySet().containsAll(confirmed) && counting.messageCount(QUEUE) == 0);
                if (!cancelled.get() && channel.isOpen()) {
                    return held;
                }
            } catch (Exception e) {
                faults.add(ms() + " consumer: " + e); // a leader changing: consumed again
            }
        }
        return held;
    }

    private void check(Map<String, Integer> held) {
        Set<String> lost = new TreeSet<>(confirmed);
        lost.removeAll(held.keySet());
        List<String> twice = held.entrySet().stream().filter(e -> e.getValue() > 1).map(Map.Entry::getKey).toList();
        List<String> confirmedTwice = twice.stream().filter(confirmed::contains).toList();
        Set<String> unknown = new TreeSet<>(held.keySet());
        unknown.removeAll(published);
        Set<String> unconfirmed = new HashSet<>(published);
        unconfirmed.removeAll(confirmed);
        unconfirmed.removeAll(nacked);
        Set<String> unconfirmedConsumed = new HashSet<>(held.keySet());
        unconfirmedConsumed.removeAll(confirmed);
        long nackedConsumed = unconfirmedConsumed.stream().filter(nacked::contains).count();
        String summary = "published " + published.size() + ", confirmed " + confirmed.size() + ", nacked "
            + nacked.size() + ", unanswered " + unconfirmed.size() + ", consumed " + held.size() + " ("
            + unconfirmedConsumed.size() + " unconfirmed, " + nackedConsumed + " of them nacked), lost " + lost.size()
            + ", duplicates " + twice.size() + " (" + confirmedTwice.size() + " confirmed), kills " + kills
            + ", partitions " + partitions;
        System.out.println("jepsen quorum kills and partitions: " + summary + "; faults: " + faults);
        assertThat(confirmed).as(summary).isNotEmpty();
        assertThat(lost).as("confirmed messages lost; " + summary + "; faults: " + faults).isEmpty();
        assertThat(confirmedTwice).as("confirmed messages consumed more than once; " + summary).isEmpty();
        assertThat(unknown).as("consumed, never published; " + summary).isEmpty();
    }

    private Connection connect(int i) {
        return await().atMost(WAIT).ignoreExceptions().until(() -> cluster.factory(i).newConnection(),
            Connection::isOpen);
    }

    private long ms() {
        return (System.nanoTime() - start) / 1_000_000;
    }
}
