package io.skiffmq.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;
import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Three brokers in three child JVMs form a cluster on loopback and keep the cluster's name (the definitions are
 * {@link ClusterDefinitionsTest}'s) through kill -9, restarts and a lost majority; the leak detector runs at paranoid
 * in each, beside Ratis' own shaded Netty.
 */
@OneAtATime
class ClusterChildBrokersTest {
    private static final Duration WAIT = Duration.ofSeconds(90);
    private static final int APPEND_TIMEOUT_MILLIS = 3000;
    /**
     * The lost majority's case: its one refused change waits out the append timeout, and every other change there is
     * tried again until it is committed, so a short timeout costs it nothing but that wait.
     */
    private static final int REFUSING_APPEND_TIMEOUT_MILLIS = 1000;

    @TempDir
    Path dir;

    private ChildCluster cluster;
    private ChildBroker[] nodes;

    @BeforeEach
    void ports(org.junit.jupiter.api.TestInfo test) throws IOException {
        cluster = new ChildCluster(dir, "n", 4, 3, appendTimeoutMillis(test));
        nodes = cluster.nodes;
    }

    @AfterEach
    void stopAll() throws Exception {
        cluster.close();
    }

    private static int appendTimeoutMillis(org.junit.jupiter.api.TestInfo test) {
        return test.getTestMethod().map(java.lang.reflect.Method::getName)
            .filter("threeNodesShareTheClusterNameThroughKillsAndALostMajority"::equals).isPresent()
            ? REFUSING_APPEND_TIMEOUT_MILLIS : APPEND_TIMEOUT_MILLIS;
    }

    private String name(int i) {
        return cluster.name(i);
    }

    /** Node {@code i} of the three that form the cluster, or (3) a fourth that starts alone. */
    private ChildBroker start(int i) throws Exception {
        return cluster.start(i);
    }

    private HttpApiClient api(int i) throws Exception {
        return cluster.api(i);
    }

    private void awaitName(int i, String name) {
        await().atMost(WAIT).until(() -> name.equals(api(i).get("/api/cluster-name").map().get("name")));
    }

    /** Names the cluster through node {@code i}, trying again while there is no leader (503). */
    private void setName(int i, String name) {
        await().atMost(WAIT).until(() -> api(i).put("/api/cluster-name", Map.of("name", name)).status() == 204);
    }

    @Test
    void threeNodesShareTheClusterNameThroughKillsAndALostMajority() throws Exception {
        startThree();
        setName(0, "skiffs");
        awaitName(1, "skiffs");
        awaitName(2, "skiffs");
        await().atMost(WAIT).until(() -> ((List<?>) api(1).get("/api/cluster-status").map().get("running_nodes"))
            .size() == 3);
        Map<String, Object> status = api(1).get("/api/cluster-status").map();
        assertThat(status.get("disk_nodes")).isEqualTo(List.of(name(0), name(1), name(2)));
        assertThat(status.get("cluster_name")).isEqualTo("skiffs");
        await().atMost(WAIT).untilAsserted(() -> assertThat(api(0).get("/api/nodes").list())
            .extracting(n -> n.get("name"), n -> n.get("running"))
            .containsExactly(tuple(name(0), true), tuple(name(1), true), tuple(name(2), true)));
        assertThat(api(0).get("/api/nodes/" + name(0)).map()).containsKey("mem_used");
        com.rabbitmq.client.ConnectionFactory factory = new com.rabbitmq.client.ConnectionFactory();
        factory.setPort(nodes[2].port);
        try (com.rabbitmq.client.Connection connection = factory.newConnection()) {
            // RabbitMQ's cluster_name server property is the cluster's, not the node's
            assertThat(connection.getServerProperties().get("cluster_name")).hasToString("skiffs");
        }

        // kill -9 one node: the two others still form a majority; the killed one catches up when it returns
        nodes[2].kill();
        setName(1, "two of three");
        awaitName(0, "two of three");
        await().atMost(WAIT).until(() -> !((List<?>) api(0).get("/api/cluster-status").map().get("running_nodes"))
            .contains(name(2)));
        assertThat(api(0).get("/api/nodes/" + name(2)).map()).containsEntry("running", false);
        start(2);
        awaitName(2, "two of three");

        // without a majority a change fails within the timeout, with 503; it works again once one is back
        nodes[1].kill();
        nodes[2].kill();
        long began = System.nanoTime();
        HttpApiClient.Answer refused = api(0).put("/api/cluster-name", Map.of("name", "alone"));
        long tookMillis = (System.nanoTime() - began) / 1_000_000;
        assertThat(refused.status()).isEqualTo(503);
        assertThat(tookMillis).isBetween((long) REFUSING_APPEND_TIMEOUT_MILLIS - 100,
            REFUSING_APPEND_TIMEOUT_MILLIS + 3000L);
        assertThat(api(0).get("/api/cluster-name").map().get("name")).isEqualTo("two of three");
        start(1);
        setName(0, "majority again");
        awaitName(1, "majority again");
    }

    private void startThree() throws Exception {
        cluster.startMembers();
    }

    private SkiffmqCtlTest.Result ctl(int i, String... command) throws Exception {
        List<String> args = new ArrayList<>(List.of("--host", "127.0.0.1", "--port",
            String.valueOf(nodes[i].managementPort())));
        args.addAll(List.of(command));
        return SkiffmqCtlTest.run(args.toArray(String[]::new));
    }

    /**
     * A node's users come with the cluster's definitions: until a majority has committed them (its first start), the
     * HTTP API answers 503, not a 401 that reads as a wrong password, and {@code await_online_nodes} run at once
     * after starting the nodes (docs/cluster.md) waits through it instead of failing.
     */
    @Test
    void aNodeWaitingForItsClusterAnswers503AndAwaitOnlineNodesWaitsForIt() throws Exception {
        start(0);
        await().atMost(WAIT).until(() -> api(0).get("/api/whoami").status() == 503);
        assertThat(api(0).get("/api/whoami").map().get("reason")).asString().contains("no users yet");
        SkiffmqCtlTest.Result alone = ctl(0, "await_online_nodes", "2", "--timeout", "1");
        assertThat(alone.code()).as(alone.err()).isEqualTo(75);
        assertThat(alone.err()).contains("no users yet");
        start(1);
        SkiffmqCtlTest.Result two = ctl(0, "await_online_nodes", "2", "--timeout", "90");
        assertThat(two.code()).as(two.err()).isZero();
        assertThat(api(0).get("/api/whoami").status()).isEqualTo(200);
        assertThat(new HttpApiClient(nodes[0].managementPort(), "guest", "wrong").get("/api/whoami").status())
            .as("a wrong password once there are users").isEqualTo(401);
    }

    @Test
    @SuppressWarnings("unchecked")
    void aFourthNodeJoinsWithSkiffmqctlAndIsForgotten() throws Exception {
        // the fourth starts alone, beside the three: it is no member of theirs until it joins
        ChildCluster.startSideBySide(4, this::start, this::name);
        setName(0, "skiffs");
        // alone, it has guest once it elected itself and committed its first-start definitions
        await().atMost(WAIT).until(() -> api(3).get("/api/whoami").status() == 200);
        SkiffmqCtlTest.Result joined = ctl(3, "join_cluster", name(1) + ":" + cluster.clusterPort(1));
        assertThat(joined.code()).as(joined.err()).isZero();
        SkiffmqCtlTest.Result online = ctl(0, "await_online_nodes", "4", "--timeout", "60");
        assertThat(online.code()).as(online.err()).isZero();
        awaitName(3, "skiffs");
        SkiffmqCtlTest.Result status = ctl(3, "cluster_status");
        assertThat(status.code()).as(status.err()).isZero();
        assertThat(status.out()).contains("Cluster name: skiffs")
            .contains("Disk Nodes\n\n" + name(0) + "\n" + name(1) + "\n" + name(2) + "\n" + name(3) + "\n")
            .contains("Running Nodes\n\n" + name(0));
        // a quorum queue declared on the fourth node has a member there, and leads there (client-local)
        assertThat(api(3).put("/api/queues/%2F/qq-forgotten", Map.of("durable", true,
            "arguments", Map.of("x-queue-type", "quorum"))).status()).isEqualTo(201);
        await().atMost(WAIT)
            .until(() -> name(3).equals(api(0).get("/api/queues/%2F/qq-forgotten").map().get("leader")));
        assertThat(api(3).post("/api/exchanges/%2F/amq.default/publish", Map.of("routing_key", "qq-forgotten",
            "payload", "kept", "payload_encoding", "string", "properties", Map.of())).map())
            .isEqualTo(Map.of("routed", true));

        nodes[3].kill();
        SkiffmqCtlTest.Result forgot = ctl(0, "forget_cluster_node", name(3));
        assertThat(forgot.code()).as(forgot.err()).isZero();
        // and is taken out of its members, as RabbitMQ's shrink_all after forget_cluster_node: the queue goes on
        // with the other two, with what it held
        await().atMost(WAIT).untilAsserted(() -> {
            Map<String, Object> queue = api(1).get("/api/queues/%2F/qq-forgotten").map();
            assertThat((List<Object>) queue.get("members")).hasSize(2).doesNotContain(name(3));
            assertThat(queue.get("leader")).isNotIn(null, "", name(3));
        });
        String leader = (String) api(1).get("/api/queues/%2F/qq-forgotten").map().get("leader");
        int other = name(0).equals(leader) ? 1 : 0; // and taken through a node that does not lead it
        await().atMost(WAIT).untilAsserted(() -> {
            HttpApiClient.Answer got = api(other).post("/api/queues/%2F/qq-forgotten/get",
                Map.of("count", 1, "ackmode", "ack_requeue_false", "encoding", "auto"));
            assertThat(got.status()).as("%s", got.body()).isEqualTo(200);
            assertThat(got.list()).extracting(m -> m.get("payload")).containsExactly("kept");
        });
        await().atMost(WAIT).until(() -> ((List<?>) api(1).get("/api/cluster-status").map().get("disk_nodes"))
            .equals(List.of(name(0), name(1), name(2))));
        assertThat(ctl(0, "forget_cluster_node", name(3)).code()).as("no longer a member").isNotZero();
        setName(2, "three again");
        awaitName(0, "three again");
    }

    @Test
    void aSingleNodeStartsNothingOfTheCluster() throws Exception {
        try (RunningBroker broker = RunningBroker.start()) {
            assertThat(broker.broker().cluster()).isNull();
            assertThat(Thread.getAllStackTraces().keySet()).extracting(Thread::getName)
                .noneMatch(name -> name.contains("grpc") || name.contains("StateMachineUpdater"));
            HttpApiClient api = HttpApiClient.guest(broker);
            assertThat(api.get("/api/cluster-name").map().get("name")).isEqualTo(broker.broker().config().node());
            assertThat(api.put("/api/cluster-name", Map.of("name", "x")).status()).isEqualTo(400);
            assertThat(api.get("/api/cluster-status").map().get("running_nodes"))
                .isEqualTo(List.of(broker.broker().config().node()));
        }
    }
}
