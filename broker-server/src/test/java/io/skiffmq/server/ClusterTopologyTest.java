package io.skiffmq.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.BuiltinExchangeType;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.GetResponse;
import com.rabbitmq.client.MessageProperties;
import com.rabbitmq.client.ShutdownSignalException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.io.TempDir;

/**
 * Three brokers in child JVMs share durable exchanges, the bindings between them and policies through the metadata
 * log, driven by the RabbitMQ Java client: declared on one node, they are seen on the others (HTTP API, passive
 * declares) and route there, and a policy set on one node holds a queue on another; they survive a node's kill -9; a node without a majority refuses a declare with
 * RabbitMQ's 541 and changes nothing. A delete on a node that has not applied the declare yet deletes it (a read
 * barrier). One cluster for the class (three-node starts are slow); the test that kills nodes runs last.
 */
@OneAtATime
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ClusterTopologyTest {
    private static final Duration WAIT = Duration.ofSeconds(90);
    private static final int APPEND_TIMEOUT_MILLIS = 3000;

    @TempDir
    static Path dir;

    private static ChildCluster cluster;

    @BeforeAll
    static void startCluster() throws Exception {
        cluster = new ChildCluster(dir, "t", 3, 3, APPEND_TIMEOUT_MILLIS);
        cluster.startMembers();
    }

    @AfterAll
    static void stopCluster() throws Exception {
        cluster.close();
    }

    /** A connection to node {@code i} as guest, once the node has the cluster's users. */
    private static Connection connect(int i) {
        return cluster.connect(i, WAIT);
    }

    private static int status(int node, String path) throws Exception {
        return cluster.api(node).get(path).status();
    }

    /**
     * A declare or bind acknowledged by the leader, then undone at once through a follower: the follower learns of
     * the commit with the leader's next message (a heartbeat, up to half an election timeout later), so without a
     * read barrier it answers delete-ok having deleted nothing, and the declare then lands there for good.
     */
    @Test
    @Order(1)
    void aDeleteThroughANodeThatHasNotAppliedTheDeclareYetDeletesIt() throws Exception {
        int leader = -1;
        for (int i = 0; i < 3 && leader < 0; i++) {
            int n = i;
            String name = await().atMost(WAIT).until(() -> (String) cluster.api(n).get("/api/cluster-status").map()
                .get("leader"), l -> l != null);
            for (int j = 0; j < 3; j++) {
                leader = cluster.name(j).equals(name) ? j : leader;
            }
        }
        int follower = (leader + 1) % 3;
        int rounds = 9;
        try (Connection a = connect(leader); Connection b = connect(follower);
                com.rabbitmq.client.amqp.Environment environment = new com.rabbitmq.client.amqp.impl
                    .AmqpEnvironmentBuilder().connectionSettings().host("127.0.0.1").port(cluster.nodes[follower].port)
                    .username("guest").password("guest").environmentBuilder().build();
                com.rabbitmq.client.amqp.Connection amqp10 = environment.connectionBuilder().build()) {
            // the follower's deletes go through 0-9-1, the HTTP API and AMQP 1.0's /management in turn
            com.rabbitmq.client.amqp.Management management = amqp10.management();
            Channel onLeader = a.createChannel();
            Channel onFollower = b.createChannel();
            onLeader.queueDeclare("barrier-bound", true, false, false, Map.of());
            onLeader.exchangeDeclare("barrier-source", BuiltinExchangeType.DIRECT, true);
            await().atMost(WAIT).until(() -> status(follower, "/api/queues/%2F/barrier-bound") == 200
                && status(follower, "/api/exchanges/%2F/barrier-source") == 200);
            for (int i = 0; i < rounds; i++) {
                onLeader.queueDeclare("barrier-q" + i, true, false, false, Map.of());
                if (i % 3 == 2) {
                    management.queueDelete("barrier-q" + i);
                } else if (i % 3 == 0) {
                    onFollower.queueDelete("barrier-q" + i);
                } else {
                    assertThat(cluster.api(follower).delete("/api/queues/%2F/barrier-q" + i).status()).isEqualTo(204);
                }
                onLeader.exchangeDeclare("barrier-x" + i, BuiltinExchangeType.FANOUT, true);
                if (i % 3 == 2) {
                    management.exchangeDelete("barrier-x" + i);
                } else if (i % 3 == 0) {
                    onFollower.exchangeDelete("barrier-x" + i);
                } else {
                    assertThat(cluster.api(follower).delete("/api/exchanges/%2F/barrier-x" + i).status())
                        .isEqualTo(204);
                }
                onLeader.queueBind("barrier-bound", "barrier-source", "barrier-k" + i);
                if (i % 3 == 2) {
                    management.unbind().sourceExchange("barrier-source").destinationQueue("barrier-bound")
                        .key("barrier-k" + i).unbind();
                } else if (i % 3 == 0) {
                    onFollower.queueUnbind("barrier-bound", "barrier-source", "barrier-k" + i);
                } else {
                    assertThat(cluster.api(follower).delete(
                        "/api/bindings/%2F/e/barrier-source/q/barrier-bound/barrier-k" + i).status()).isEqualTo(204);
                }
            }
            // committed after every change above: once the follower has applied it, it has applied them all
            onFollower.queueDeclare("barrier-marker", true, false, false, Map.of());
        }
        assertThat(cluster.api(follower).get("/api/queues/%2F").list()).extracting(q -> (String) q.get("name"))
            .filteredOn(name -> name.startsWith("barrier-q")).isEmpty();
        assertThat(cluster.api(follower).get("/api/exchanges/%2F").list()).extracting(x -> (String) x.get("name"))
            .filteredOn(name -> name.startsWith("barrier-x")).isEmpty();
        assertThat(cluster.api(follower).get("/api/bindings/%2F/e/barrier-source/q/barrier-bound").list()).isEmpty();

        // a super stream made through the leader, deleted at once through the follower's stream port
        com.rabbitmq.stream.impl.Client streams = new com.rabbitmq.stream.impl.Client(
            new com.rabbitmq.stream.impl.Client.ClientParameters().host("127.0.0.1")
                .port(cluster.nodes[follower].streamPort()));
        try {
            for (int i = 0; i < 3; i++) {
                String path = "/api/stream/super-streams/%2F/barrier-s" + i;
                assertThat(cluster.api(leader).put(path, Map.of("partitions", 1)).status()).isEqualTo(204);
                assertThat(StreamClients.deleteSuperStream(streams, "barrier-s" + i)).as("deleted through the follower")
                    .isEqualTo(com.rabbitmq.stream.Constants.RESPONSE_CODE_OK);
            }
        } finally {
            streams.close();
        }
        for (int node = 0; node < 3; node++) {
            int n = node;
            await().atMost(WAIT).until(() -> status(n, "/api/exchanges/%2F/barrier-s0") == 404
                && status(n, "/api/exchanges/%2F/barrier-s1") == 404 && status(n, "/api/exchanges/%2F/barrier-s2") == 404);
        }

        // a binding from a built-in exchange to a shared queue is the cluster's too: it routes on every node
        try (Connection a = connect(leader); Connection b = connect(follower)) {
            a.createChannel().queueBind("barrier-bound", "amq.direct", "barrier-amq");
            await().atMost(Duration.ofSeconds(30)).until(() -> !cluster.api(follower)
                .get("/api/bindings/%2F/e/amq.direct/q/barrier-bound").list().isEmpty());
            Channel onFollower = b.createChannel();
            onFollower.confirmSelect();
            onFollower.basicPublish("amq.direct", "barrier-amq", true, null,
                "built-in".getBytes(StandardCharsets.UTF_8));
            onFollower.waitForConfirmsOrDie(WAIT.toMillis());
            await().atMost(WAIT).until(() -> onFollower.messageCount("barrier-bound") == 1);
            onFollower.queueUnbind("barrier-bound", "amq.direct", "barrier-amq");
            int home = leader;
            await().atMost(WAIT).until(() -> cluster.api(home).get("/api/bindings/%2F/e/amq.direct/q/barrier-bound")
                .list().isEmpty());
        }
    }

    /**
     * A super stream declared on one node (its exchange, partitions homed there and bindings, all on the log) is one
     * on the others: the stream protocol lists its partitions and routes there, and deleting it on another node
     * deletes its partitions on their home.
     */
    @Test
    @Order(2)
    void aSuperStreamDeclaredOnOneNodeIsOneOnEveryNodeAndDeletedFromAnotherGoesEverywhere() throws Exception {
        String path = "/api/stream/super-streams/%2F/invoices";
        assertThat(cluster.api(0).put(path, Map.of("partitions", 3)).status()).isEqualTo(204);
        List<String> partitions = List.of("invoices-0", "invoices-1", "invoices-2");
        com.rabbitmq.stream.impl.Client client = new com.rabbitmq.stream.impl.Client(
            new com.rabbitmq.stream.impl.Client.ClientParameters().host("127.0.0.1")
                .port(cluster.nodes[1].streamPort()));
        try {
            await().atMost(WAIT).until(() -> client.partitions("invoices"), partitions::equals);
            assertThat(client.route("1", "invoices")).containsExactly("invoices-1");
        } finally {
            client.close();
        }
        // the same name again, through another node: refused, as on one node
        await().atMost(WAIT).until(() -> status(2, "/api/exchanges/%2F/invoices") == 200);
        assertThat(cluster.api(2).put(path, Map.of("partitions", 3)).status()).isEqualTo(400);

        assertThat(cluster.api(2).delete(path).status()).isEqualTo(204);
        for (int node = 0; node < 3; node++) {
            int n = node;
            await().atMost(WAIT).until(() -> status(n, "/api/exchanges/%2F/invoices") == 404
                && partitions.stream().allMatch(q -> {
                    try {
                        return status(n, "/api/queues/%2F/" + q) == 404;
                    } catch (Exception e) {
                        throw new IllegalStateException(e);
                    }
                }));
        }
    }

    /** Each node's {@code /api/nodes} lists every member with that member's own readings, asked of it directly. */
    @Test
    @Order(3)
    void everyNodeListsEveryMemberWithItsOwnReadings() throws Exception {
        Map<String, Object> own = new java.util.HashMap<>();
        for (int node = 0; node < 3; node++) {
            int n = node;
            own.put(cluster.name(n), cluster.api(n).get("/api/nodes/" + cluster.name(n)).map().get("os_pid"));
        }
        assertThat(new java.util.HashSet<>(own.values())).hasSize(3);
        for (int node = 0; node < 3; node++) {
            List<Map<String, Object>> nodes = cluster.api(node).get("/api/nodes").list();
            assertThat(nodes).extracting(n -> n.get("name"))
                .containsExactly(cluster.name(0), cluster.name(1), cluster.name(2));
            for (Map<String, Object> n : nodes) {
                assertThat(n).containsEntry("running", true).containsEntry("os_pid", own.get(n.get("name")));
                for (String reading : List.of("mem_used", "disk_free", "uptime", "fd_used", "sockets_used",
                        "proc_used")) {
                    assertThat(n.get(reading)).as(reading + " of " + n.get("name") + " on node " + node)
                        .isInstanceOfSatisfying(Number.class, v -> assertThat(v.longValue()).isNotNegative());
                }
            }
        }
    }

    @Test
    @Order(10)
    void exchangesAndTheirBindingsDeclaredOnOneNodeHoldOnEveryNodeAndAMinorityRefusesADeclare() throws Exception {
        try (Connection a = connect(0)) {
            Channel channel = a.createChannel();
            channel.exchangeDeclare("orders", BuiltinExchangeType.TOPIC, true);
            channel.exchangeDeclare("audit", BuiltinExchangeType.FANOUT, true);
            channel.exchangeBind("audit", "orders", "order.#");
            channel.queueDeclare("shipping", true, false, false, Map.of("x-max-length", 100));
            channel.queueBind("shipping", "orders", "order.paid");
            channel.basicPublish("orders", "order.paid", null, "paid".getBytes(StandardCharsets.UTF_8));
            await().atMost(WAIT).until(() -> channel.messageCount("shipping") == 1);
        }
        for (int node : new int[] {1, 2}) {
            await().atMost(WAIT).until(() -> status(node, "/api/bindings/%2F/e/orders/e/audit") == 200
                && !cluster.api(node).get("/api/bindings/%2F/e/orders/e/audit").list().isEmpty());
            assertThat(cluster.api(node).get("/api/exchanges/%2F/orders").map())
                .containsEntry("type", "topic").containsEntry("durable", true);
            await().atMost(WAIT).until(() -> status(node, "/api/bindings/%2F/e/orders/q/shipping") == 200
                && !cluster.api(node).get("/api/bindings/%2F/e/orders/q/shipping").list().isEmpty());
            assertThat(cluster.api(node).get("/api/queues/%2F/shipping").map())
                .containsEntry("node", cluster.name(0)).containsEntry("durable", true);
        }

        // on another node: a passive declare finds them, and a message published there takes the binding
        try (Connection c = connect(2)) {
            Channel channel = c.createChannel();
            channel.exchangeDeclarePassive("orders");
            channel.exchangeDeclarePassive("audit");
            // a queue homed on node 0 is reached from here (its messages stay there: ClusterRemoteQueueTest)
            assertThat(channel.queueDeclarePassive("shipping").getQueue()).isEqualTo("shipping");
            channel.queueDeclare("shipping", true, false, false, Map.of("x-max-length", 100));
            Channel getter = c.createChannel();
            GetResponse paid = await().atMost(WAIT).until(() -> getter.basicGet("shipping", false), r -> r != null);
            assertThat(new String(paid.getBody(), StandardCharsets.UTF_8)).isEqualTo("paid");
            getter.basicReject(paid.getEnvelope().getDeliveryTag(), true);
            // an equivalent declaration is fine, a different one is refused as on one node
            channel.exchangeDeclare("orders", BuiltinExchangeType.TOPIC, true);
            channel.queueDeclare("audit-log", true, false, false, Map.of());
            channel.queueBind("audit-log", "audit", "");
            channel.basicPublish("orders", "order.created", null, "one".getBytes(StandardCharsets.UTF_8));
            await().atMost(WAIT).until(() -> channel.messageCount("audit-log") == 1);
            assertThat(cluster.api(0).get("/api/queues/%2F/audit-log").map()).containsEntry("node", cluster.name(2));
            // deleted and declared again under its name, with a persistent message: the log, replayed after a
            // restart, must not take the earlier queue's deletion for this one's
            channel.queueDelete("audit-log");
            channel.queueDeclare("audit-log", true, false, false, Map.of());
            channel.queueBind("audit-log", "audit", "");
            channel.confirmSelect();
            channel.basicPublish("orders", "order.kept", MessageProperties.PERSISTENT_TEXT_PLAIN,
                "kept".getBytes(StandardCharsets.UTF_8));
            channel.waitForConfirmsOrDie(WAIT.toMillis());
            assertThatThrownBy(() -> channel.exchangeDeclare("orders", BuiltinExchangeType.DIRECT, true))
                .isInstanceOf(IOException.class).cause().hasMessageContaining("PRECONDITION_FAILED");
        }

        // a policy set on one node is in force on every node, for the queues homed there too
        try (Connection c = connect(2)) {
            c.createChannel().queueDeclare("capped", true, false, false, Map.of());
        }
        assertThat(cluster.api(1).put("/api/policies/%2F/cap", Map.of("pattern", "^capped$", "definition",
            Map.of("max-length", 2), "apply-to", "queues")).status()).isEqualTo(201);
        for (int node = 0; node < 3; node++) {
            int n = node; // the others apply the committed change just after the node that made it
            await().atMost(WAIT).until(() -> status(n, "/api/policies/%2F/cap") == 200);
        }
        assertThat(cluster.api(0).get("/api/policies/%2F/cap").map()).containsEntry("pattern", "^capped$");
        assertThat(cluster.api(2).get("/api/queues/%2F/capped").map()).containsEntry("policy", "cap");
        try (Connection c = connect(2)) {
            Channel channel = c.createChannel();
            for (int i = 0; i < 5; i++) {
                channel.basicPublish("", "capped", null, ("m" + i).getBytes(StandardCharsets.UTF_8));
            }
            await().atMost(WAIT).until(() -> channel.messageCount("capped") == 2);
        }
        assertThat(cluster.api(0).put("/api/policies/%2F/gone", Map.of("pattern", "^nothing$", "definition",
            Map.of("max-length", 1))).status()).isEqualTo(201);
        assertThat(cluster.api(2).delete("/api/policies/%2F/gone").status()).isEqualTo(204);
        for (int node = 0; node < 3; node++) {
            int n = node;
            await().atMost(WAIT).until(() -> status(n, "/api/policies/%2F/gone") == 404);
        }

        // a kill -9: the node gets the shared exchanges back from the log, and its own queue's binding to one
        cluster.nodes[2].kill();
        cluster.start(2);
        try (Connection c = connect(2)) {
            Channel channel = c.createChannel();
            // once node 2 has a change made after its restart, it has replayed the log over what it recovered
            try (Connection a = connect(0)) {
                a.createChannel().exchangeDeclare("after-restart", BuiltinExchangeType.FANOUT, true);
            }
            await().atMost(WAIT).until(() -> status(2, "/api/exchanges/%2F/after-restart") == 200);
            // the policies came back from the log too
            assertThat(cluster.api(2).get("/api/queues/%2F/capped").map()).containsEntry("policy", "cap");
            assertThat(status(2, "/api/policies/%2F/gone")).isEqualTo(404);
            GetResponse kept = channel.basicGet("audit-log", true);
            assertThat(kept).isNotNull();
            assertThat(new String(kept.getBody(), StandardCharsets.UTF_8)).isEqualTo("kept");
            await().atMost(WAIT).until(() -> {
                channel.basicPublish("orders", "order.paid", null, "two".getBytes(StandardCharsets.UTF_8));
                GetResponse got = channel.basicGet("audit-log", true);
                return got != null && new String(got.getBody(), StandardCharsets.UTF_8).equals("two");
            });
            // deleted on one node, gone on every node
            channel.exchangeDelete("audit");
        }
        await().atMost(WAIT).until(() -> status(0, "/api/exchanges/%2F/audit") == 404
            && status(1, "/api/exchanges/%2F/audit") == 404);
        assertThat(cluster.api(1).get("/api/bindings/%2F").list()).extracting(b -> b.get("destination"))
            .doesNotContain("audit");

        // a queue deleted from a node that is not its home: gone from its home node, with its bindings
        try (Connection b = connect(1)) {
            assertThat(b.createChannel().queueDelete("shipping").getMessageCount()).isZero();
        }
        await().atMost(WAIT).until(() -> status(0, "/api/queues/%2F/shipping") == 404
            && status(2, "/api/queues/%2F/shipping") == 404);
        assertThat(cluster.api(0).get("/api/bindings/%2F").list()).extracting(b -> b.get("destination"))
            .doesNotContain("shipping");

        // without a majority: RabbitMQ's 541 once the append times out, and nothing declared anywhere; the three
        // refusals wait out their timeouts side by side
        cluster.nodes[1].kill();
        cluster.nodes[2].kill();
        SideBySide.run(ClusterTopologyTest::anExchangeDeclareTimesOut, ClusterTopologyTest::aQueueDeclareTimesOut,
            () -> assertThat(cluster.api(0).put("/api/policies/%2F/lonely", Map.of("pattern", "^lonely", "definition",
                Map.of("max-length", 1))).status()).isEqualTo(503));
        assertThat(status(0, "/api/exchanges/%2F/lonely")).isEqualTo(404);
        assertThat(status(0, "/api/queues/%2F/lonely-q")).isEqualTo(404);
        assertThat(status(0, "/api/policies/%2F/lonely")).isEqualTo(404);
        // the members that are down: listed, not running, without readings
        assertThat(cluster.api(0).get("/api/nodes").list()).filteredOn(n -> !n.get("name").equals(cluster.name(0)))
            .allSatisfy(n -> assertThat(n).containsEntry("running", false).doesNotContainKey("mem_used"));
        try (Connection a = connect(0)) {
            // what was declared goes on working
            a.createChannel().exchangeDeclarePassive("orders");
        }
    }

    /** On node 0 without a majority: 541 once the append times out, not before. */
    private static void anExchangeDeclareTimesOut() throws Exception {
        Connection lonely = connect(0);
        try {
            Channel channel = lonely.createChannel();
            long began = System.nanoTime();
            assertThatThrownBy(() -> channel.exchangeDeclare("lonely", BuiltinExchangeType.DIRECT, true))
                .isInstanceOf(IOException.class).cause().isInstanceOfSatisfying(ShutdownSignalException.class, e -> {
                    assertThat(e.isHardError()).isTrue();
                    AMQP.Connection.Close close = (AMQP.Connection.Close) e.getReason();
                    assertThat(close.getReplyCode()).isEqualTo(541);
                    assertThat(close.getReplyText()).isEqualTo("INTERNAL_ERROR - failed to declare exchange 'lonely'"
                        + " in vhost '/' because the operation timed out");
                });
            assertThat((System.nanoTime() - began) / 1_000_000).isGreaterThanOrEqualTo(APPEND_TIMEOUT_MILLIS - 100);
        } finally {
            lonely.abort();
        }
    }

    /** On node 0 without a majority: RabbitMQ's 541 for a queue once the append times out. */
    private static void aQueueDeclareTimesOut() throws Exception {
        Connection again = connect(0);
        try {
            assertThatThrownBy(() -> again.createChannel().queueDeclare("lonely-q", true, false, false, Map.of()))
                .isInstanceOf(IOException.class).cause()
                .hasMessageContaining("reply-code=541, reply-text=INTERNAL_ERROR - Could not declare queue 'lonely-q'"
                    + " in vhost '/' on node '" + cluster.name(0) + "' because the metadata store operation timed out");
        } finally {
            again.abort();
        }
    }
}
