package io.skiffmq.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.GetResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.awaitility.core.ConditionFactory;
import org.junit.jupiter.api.io.TempDir;

/**
 * rabbitmq-queues' membership commands on a three-node cluster (child JVMs; docs/quorum-queues.md, "Changing
 * members"), with the RabbitMQ Java client and skiffmqctl: a quorum queue of two members holding confirmed messages
 * (one of them returned once) gets a third member, then loses its leader's; a consumer subscribed in between follows
 * it to its new leader, gets every message with its count, and once all are acked none comes back; then shrink, grow
 * and the refusals, with rabbitmq-queues' words and exit codes; rebalance; a move the new members cannot commit,
 * abandoned. One cluster for the class.
 */
@OneAtATime
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ClusterQuorumMembershipTest {
    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final String QUEUE = "qq-members";
    /** The messages of the first case, and those published after its move. */
    private static final int MESSAGES = 30;
    private static final int LATER = 10;

    @TempDir
    static Path dir;

    private static ChildCluster cluster;

    @BeforeAll
    static void startCluster() throws Exception {
        cluster = new ChildCluster(dir, "m", 3, 3, 5_000);
        cluster.startMembers();
    }

    @AfterAll
    static void stopCluster() throws Exception {
        cluster.close();
    }

    /** A wait on a condition checked at once, then often: the cluster's steps take from milliseconds to seconds. */
    private static ConditionFactory soon() {
        return await().atMost(WAIT).pollDelay(Duration.ZERO).pollInterval(Duration.ofMillis(50));
    }

    private static Connection connect(int i) {
        return cluster.connect(i, WAIT);
    }

    private static SkiffmqCtlTest.Result ctl(int node, String... args) throws Exception {
        return SkiffmqCtlTest.ctl(cluster.nodes[node].managementPort(), args);
    }

    /**
     * Waits until each of {@code nodes} shows the queue with these members (in any order: the preferred leader is
     * shown first) and the same leader among them; returns the leader.
     */
    @SuppressWarnings("unchecked")
    private static int membersEverywhere(String queue, List<String> members, List<Integer> nodes) {
        String[] leader = new String[1];
        soon().ignoreExceptions().until(() -> {
            Set<Object> leaders = new java.util.HashSet<>();
            for (int node : nodes) {
                Map<String, Object> shape = (Map<String, Object>) cluster.api(node).get("/api/queues/%2F/" + queue)
                    .body();
                if (!(shape.get("members") instanceof List<?> shown) || !Set.copyOf(shown).equals(Set.copyOf(members))
                        || shown.size() != members.size()) {
                    return false;
                }
                leaders.add(shape.get("leader"));
            }
            leader[0] = (String) leaders.iterator().next();
            return leaders.size() == 1 && members.contains(leader[0]);
        });
        return QuorumQueueShapes.index(cluster, leader[0]);
    }

    private static int membersEverywhere(String queue, List<String> members) {
        return membersEverywhere(queue, members, List.of(0, 1, 2));
    }

    /**
     * Declares a quorum queue of two members on node {@code on}, again until it answers: a declare into a group that
     * already has a leader elsewhere may be answered before that leader serves the new queue (404 then).
     */
    private static void declareOfTwo(int on, String queue) {
        soon().ignoreExceptions().until(() -> {
            try (Connection c = connect(on)) {
                c.createChannel().queueDeclare(queue, true, false, false, Map.of("x-queue-type", "quorum",
                    "x-quorum-initial-group-size", 2));
                return true;
            }
        });
    }

    private static void publish(int node, int from, int to) throws Exception {
        try (Connection c = connect(node)) {
            Channel channel = c.createChannel();
            channel.confirmSelect();
            for (int i = from; i < to; i++) {
                channel.basicPublish("", QUEUE, null, ("m-" + i).getBytes(StandardCharsets.UTF_8));
            }
            channel.waitForConfirmsOrDie(WAIT.toMillis());
        }
    }

    /**
     * Gets messages m-0 to m-(count - 1) in order on {@code channel}: the first once the queue serves it, each next at
     * once. The one channel is the check: a get answered with an error closes it, and every later one fails.
     */
    private static void assertGotInOrder(Channel channel, String queue, int count) throws Exception {
        GetResponse first = soon().ignoreExceptions().until(() -> channel.basicGet(queue, true), r -> r != null);
        assertThat(id(first.getBody())).isZero();
        for (int i = 1; i < count; i++) {
            GetResponse got = channel.basicGet(queue, true);
            assertThat(got).as("m-" + i).isNotNull();
            assertThat(id(got.getBody())).isEqualTo(i);
        }
    }

    private static int id(byte[] body) {
        return Integer.parseInt(new String(body, StandardCharsets.UTF_8).substring(2));
    }

    @Test
    @Order(1)
    void addedThenTheLeadersMemberDeletedEveryConfirmedMessageIsKeptWithItsCountAndTheConsumerFollows()
            throws Exception {
        declareOfTwo(0, QUEUE);
        membersEverywhere(QUEUE, List.of(cluster.name(0), cluster.name(1)));
        publish(2, 0, MESSAGES); // through the node outside the group
        try (Connection c = connect(1)) {
            Channel channel = c.createChannel();
            GetResponse first = soon().until(() -> channel.basicGet(QUEUE, false), r -> r != null);
            assertThat(id(first.getBody())).isZero();
            channel.basicNack(first.getEnvelope().getDeliveryTag(), false, true);
        }

        SkiffmqCtlTest.Result added = ctl(1, "add_member", QUEUE, cluster.name(2));
        assertThat(added.code()).as(added.err()).isZero();
        assertThat(added.out() + added.err()).contains("Adding a replica for queue " + QUEUE + " on node "
            + cluster.name(2) + "...");
        int leader = membersEverywhere(QUEUE, List.of(cluster.name(0), cluster.name(1), cluster.name(2)));

        // a consumer on a node that stays a member, holding what it gets until the leader's member is gone
        int consumerNode = (leader + 1) % 3;
        Map<Integer, Long> deliveryCounts = new ConcurrentHashMap<>();
        Set<Integer> seen = ConcurrentHashMap.newKeySet();
        AtomicInteger deliveries = new AtomicInteger();
        AtomicInteger cancels = new AtomicInteger();
        AtomicLong lastTag = new AtomicLong();
        Set<String> tags = ConcurrentHashMap.newKeySet();
        try (Connection c = connect(consumerNode)) {
            Channel channel = c.createChannel();
            channel.basicQos(500);
            channel.basicConsume(QUEUE, false, (tag, delivery) -> {
                tags.add(tag);
                int id = id(delivery.getBody());
                Object count = delivery.getProperties().getHeaders() == null ? null
                    : delivery.getProperties().getHeaders().get("x-delivery-count");
                deliveryCounts.merge(id, count instanceof Number n ? n.longValue() : 0L, Math::max);
                seen.add(id);
                deliveries.incrementAndGet();
                lastTag.set(delivery.getEnvelope().getDeliveryTag());
            }, tag -> cancels.incrementAndGet());
            soon().until(() -> seen.size() == MESSAGES);

            SkiffmqCtlTest.Result deleted = ctl(consumerNode, "delete_member", QUEUE, cluster.name(leader));
            assertThat(deleted.code()).as(deleted.err()).isZero();
            List<String> left = new ArrayList<>(List.of(cluster.name(0), cluster.name(1), cluster.name(2)));
            left.remove(cluster.name(leader));
            int newLeader = membersEverywhere(QUEUE, left);
            assertThat(newLeader).isNotEqualTo(leader);

            // the new leader delivers again what the consumer had not acked: every message, with its count
            soon().until(() -> deliveries.get() >= 2 * MESSAGES);
            assertThat(deliveryCounts.get(0)).as("m-0's x-delivery-count").isEqualTo(1L);
            channel.basicAck(lastTag.get(), true);
            publish(leader, MESSAGES, MESSAGES + LATER); // through the node that left the group
            soon().until(() -> seen.size() == MESSAGES + LATER);
            channel.basicAck(lastTag.get(), true);
            assertThat(seen).containsAll(java.util.stream.IntStream.range(0, MESSAGES + LATER).boxed().toList());
            assertThat(cancels.get()).as("the consumer is never cancelled").isZero();
            assertThat(tags).hasSize(1);
            assertThat(channel.isOpen()).isTrue();
        }
        // acked at the new leader: nothing comes back
        try (Connection c = connect(leader)) {
            Channel channel = c.createChannel();
            soon().until(() -> channel.queueDeclarePassive(QUEUE).getMessageCount() == 0);
            assertThat(channel.basicGet(QUEUE, true)).isNull();
        }
    }

    @Test
    @Order(2)
    void shrinkGrowAndTheRefusals() throws Exception {
        @SuppressWarnings("unchecked")
        List<String> members = (List<String>) QuorumQueueShapes.withLeader(cluster, 0, QUEUE, WAIT).get("members");
        assertThat(members).hasSize(2);
        String goneName = members.get(0);
        String last = members.get(1);
        publish(0, 0, 3);

        // shrink to one member, whose messages stay; then the last member cannot go
        SkiffmqCtlTest.Result shrunk = ctl(0, "shrink", goneName);
        assertThat(shrunk.code()).as(shrunk.err()).isZero();
        assertThat(shrunk.out()).contains("vhost\tname\tsize\tresult").contains("/\t" + QUEUE + "\t1\tok");
        membersEverywhere(QUEUE, List.of(last));
        SkiffmqCtlTest.Result lastOne = ctl(0, "delete_member", QUEUE, last);
        assertThat(lastOne.code()).isEqualTo(69);
        assertThat(lastOne.err()).contains("last_node");
        SkiffmqCtlTest.Result shrinkLast = ctl(0, "shrink", last);
        assertThat(shrinkLast.out()).contains("/\t" + QUEUE + "\t1\terror: the last node cannot be removed");

        // grown again on the two others
        SkiffmqCtlTest.Result grown = ctl(1, "grow", goneName, "all");
        assertThat(grown.code()).as(grown.err()).isZero();
        assertThat(grown.out()).contains("/\t" + QUEUE + "\t2\tok");
        membersEverywhere(QUEUE, members);
        try (Connection c = connect(2)) {
            assertGotInOrder(c.createChannel(), QUEUE, 3);
        }

        // idempotent, as RabbitMQ's
        assertThat(ctl(2, "add_member", QUEUE, last).code()).isZero();
        assertThat(ctl(2, "delete_member", QUEUE, cluster.name(outsideOf(last, goneName))).code()).isZero();
        // the refusals
        SkiffmqCtlTest.Result stranger = ctl(0, "add_member", QUEUE, "stranger@127.0.0.1");
        assertThat(stranger.code()).isEqualTo(64);
        assertThat(stranger.err()).contains("{:not_a_cluster_member, :\"stranger@127.0.0.1\"}");
        SkiffmqCtlTest.Result missing = ctl(0, "add_member", "no-such-queue", last);
        assertThat(missing.code()).isEqualTo(65);
        assertThat(missing.err()).contains("queue 'no-such-queue' was not found in virtual host '/'");
        try (Connection c = connect(0)) {
            Channel channel = c.createChannel();
            channel.queueDeclare("classic-q", true, false, false, null);
            channel.queueDeclare("stream-q", true, false, false, Map.of("x-queue-type", "stream"));
        }
        SkiffmqCtlTest.Result classic = ctl(1, "add_member", "classic-q", last);
        assertThat(classic.code()).isEqualTo(69);
        assertThat(classic.err()).contains("Cannot add members to a classic queue");
        SkiffmqCtlTest.Result classicDelete = ctl(1, "delete_member", "classic-q", last);
        assertThat(classicDelete.err()).contains("Cannot delete members from a classic queue");
        SkiffmqCtlTest.Result stream = ctl(1, "delete_member", "stream-q", last);
        assertThat(stream.code()).isEqualTo(69);
        assertThat(stream.err()).contains("not_quorum_queue");
        SkiffmqCtlTest.Result strategy = ctl(1, "grow", last, "some");
        assertThat(strategy.code()).isEqualTo(64);
        assertThat(strategy.err()).contains("strategy 'some' is not recognised.");
    }

    @Test
    @Order(3)
    @SuppressWarnings("unchecked")
    void rebalanceLeavesEachNodeLeadingItsShare() throws Exception {
        // three queues of two members each, one group per pair of nodes: each node can lead one; declared side by
        // side, as their groups' first elections take a while
        List<java.util.concurrent.CompletableFuture<Void>> declared = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            int on = i;
            declared.add(java.util.concurrent.CompletableFuture.runAsync(() -> declareOfTwo(on, "qq-r" + on),
                task -> new Thread(task, "declare-qq-r" + on).start()));
        }
        declared.forEach(java.util.concurrent.CompletableFuture::join);
        for (int node = 0; node < 3; node++) {
            int seenFrom = node;
            soon().ignoreExceptions().until(() -> {
                for (int i = 0; i < 3; i++) {
                    if (((Map<String, Object>) cluster.api(seenFrom).get("/api/queues/%2F/qq-r" + i).body())
                            .get("leader") == null) {
                        return false;
                    }
                }
                return true;
            });
        }
        SkiffmqCtlTest.Result rebalanced = ctl(2, "rebalance", "quorum", "--queue-pattern", "^qq-r");
        assertThat(rebalanced.code()).as(rebalanced.err()).isZero();
        assertThat(rebalanced.out()).contains("Re-balancing leaders of quorum queues...").contains("Node name")
            .contains("Number of quorum queues");
        assertThat(rebalanced.out().lines().filter(l -> l.matches("│ m\\d@127\\.0\\.0\\.1\\s+│ 1\\s+│")).count())
            .as(rebalanced.out()).isEqualTo(3);
        // every node sees three leaders, one on each node
        for (int node = 0; node < 3; node++) {
            int seenFrom = node;
            soon().ignoreExceptions().until(() -> {
                Set<Object> leaders = new java.util.HashSet<>();
                for (int i = 0; i < 3; i++) {
                    leaders.add(((Map<String, Object>) cluster.api(seenFrom).get("/api/queues/%2F/qq-r" + i).body())
                        .get("leader"));
                }
                return leaders.equals(Set.of(cluster.name(0), cluster.name(1), cluster.name(2)));
            });
        }
        SkiffmqCtlTest.Result unknown = ctl(2, "rebalance", "classic");
        assertThat(unknown.code()).isEqualTo(64);
        assertThat(unknown.err()).contains("type classic is not supported. Try one of all, quorum, stream.");
    }

    /**
     * A move the new member set cannot commit (one of its two nodes killed): abandoned after the append timeout, the
     * queue thawed where it was and served there with every message. Last: it leaves a node killed.
     */
    @Test
    @Order(4)
    void aMoveTheNewMembersCannotCommitIsAbandonedAndTheQueueServedWhereItWas() throws Exception {
        String queue = "qq-abandon";
        soon().ignoreExceptions().until(() -> {
            try (Connection c = connect(0)) {
                c.createChannel().queueDeclare(queue, true, false, false, Map.of("x-queue-type", "quorum"));
                return true;
            }
        });
        List<String> all = List.of(cluster.name(0), cluster.name(1), cluster.name(2));
        int leader = membersEverywhere(queue, all);
        // the member deleted and the one killed are not the leader: it carries the move on without an election
        int deleted = (leader + 1) % 3;
        int killed = (leader + 2) % 3;
        try (Connection c = connect(deleted)) {
            Channel channel = c.createChannel();
            channel.confirmSelect();
            for (int i = 0; i < 10; i++) {
                channel.basicPublish("", queue, null, ("m-" + i).getBytes(StandardCharsets.UTF_8));
            }
            channel.waitForConfirmsOrDie(WAIT.toMillis());
        }
        cluster.nodes[killed].kill();
        // the new members would be the leader and the killed node: no majority of that group adopts the queue
        SkiffmqCtlTest.Result refused = ctl(deleted, "delete_member", queue, cluster.name(deleted));
        assertThat(refused.code()).as(refused.err()).isEqualTo(75);
        assertThat(refused.err()).contains("operation delete_member on node").contains("timed out");
        // answered once the queue is served again: a get through the node that asked finds it
        try (Connection c = connect(deleted)) {
            assertGotInOrder(c.createChannel(), queue, 10);
        }
        membersEverywhere(queue, all, List.of(leader, deleted));
    }

    /** The index of the node that is neither {@code a} nor {@code b}. */
    private static int outsideOf(String a, String b) {
        for (int i = 0; i < 3; i++) {
            if (!cluster.name(i).equals(a) && !cluster.name(i).equals(b)) {
                return i;
            }
        }
        throw new AssertionError();
    }
}
