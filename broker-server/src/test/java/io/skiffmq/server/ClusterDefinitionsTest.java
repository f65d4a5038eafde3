package io.skiffmq.server;

import static io.skiffmq.server.HttpApiClient.seg;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Three brokers in three child JVMs share the broker's definitions through the metadata log: a virtual host, a user
 * and its permissions made on one node let the user in on another, survive a kill -9 of a node that was down when
 * some were made, and a node without a majority refuses a change within the append timeout (503). A single
 * node's definitions are migrated into the cluster when it first starts with clustering.
 */
@OneAtATime
class ClusterDefinitionsTest {
    private static final Duration WAIT = Duration.ofSeconds(90);
    private static final int APPEND_TIMEOUT_MILLIS = 3000;

    @TempDir
    Path dir;

    private ChildCluster cluster;
    private ChildBroker[] nodes;

    @BeforeEach
    void ports() throws IOException {
        cluster = new ChildCluster(dir, "d", 3, 3, APPEND_TIMEOUT_MILLIS);
        nodes = cluster.nodes;
    }

    @AfterEach
    void stopAll() throws Exception {
        cluster.close();
    }

    private void start(int i) throws Exception {
        cluster.start(i);
    }

    private HttpApiClient api(int i) throws Exception {
        return cluster.api(i);
    }

    /** Makes a change through node {@code i}, trying again while the cluster has no leader or no guest yet. */
    private void change(int i, String path, Map<String, Object> body) {
        await().atMost(WAIT).until(() -> api(i).put(path, body).status() / 100 == 2);
    }

    /** True when {@code user} opens a 0-9-1 connection to {@code vhost} on node {@code i}. */
    private boolean logsIn(int i, String user, String password, String vhost) {
        ConnectionFactory factory = new ConnectionFactory();
        factory.setPort(nodes[i].port);
        factory.setUsername(user);
        factory.setPassword(password);
        factory.setVirtualHost(vhost);
        try (Connection connection = factory.newConnection()) {
            return connection.isOpen();
        } catch (Exception e) {
            return false;
        }
    }

    @Test
    void definitionsMadeOnOneNodeHoldOnEveryNodeThroughKillsAndARefusingMinority() throws Exception {
        cluster.startMembers();
        change(0, "/api/vhosts/v1", Map.of());
        change(0, "/api/users/alice", Map.of("password", "secret", "tags", ""));
        change(0, "/api/permissions/v1/alice", Map.of("configure", ".*", "write", ".*", "read", ".*"));
        await().atMost(WAIT).until(() -> logsIn(2, "alice", "secret", "v1"));
        assertThat(logsIn(1, "alice", "secret", "v1")).isTrue();
        assertThat(logsIn(1, "alice", "wrong", "v1")).isFalse();
        assertThat(api(1).get("/api/vhosts/v1").status()).isEqualTo(200);
        assertThat(api(2).get("/api/permissions/v1/alice").map()).containsEntry("configure", ".*");
        // the first-start definitions were applied once, whichever node's came first
        assertThat(api(2).get("/api/users").list()).extracting(u -> u.get("name"))
            .containsExactlyInAnyOrder("guest", "alice");

        // a node killed with kill -9 misses changes and has them all when it is back
        nodes[2].kill();
        change(1, "/api/users/bob", Map.of("password", "pw", "tags", "management"));
        change(1, "/api/permissions/" + seg("/") + "/bob", Map.of("configure", "", "write", ".*", "read", ".*"));
        assertThat(api(1).delete("/api/permissions/v1/alice").status()).isEqualTo(204);
        start(2);
        await().atMost(WAIT).until(() -> logsIn(2, "bob", "pw", "/"));
        assertThat(logsIn(2, "alice", "secret", "v1")).as("alice's permissions in v1 were cleared").isFalse();
        assertThat(api(2).get("/api/vhosts/v1").status()).isEqualTo(200);

        // without a majority a change fails within the append timeout, changes nothing, and logins still work
        nodes[1].kill();
        nodes[2].kill();
        long began = System.nanoTime();
        HttpApiClient.Answer refused = api(0).put("/api/users/carol", Map.of("password", "c", "tags", ""));
        long tookMillis = (System.nanoTime() - began) / 1_000_000;
        assertThat(refused.status()).isEqualTo(503);
        assertThat(refused.map()).containsEntry("error", "timeout");
        assertThat(tookMillis).isBetween((long) APPEND_TIMEOUT_MILLIS - 100, APPEND_TIMEOUT_MILLIS + 3000L);
        assertThat(api(0).get("/api/users/carol").status()).isEqualTo(404);
        assertThat(logsIn(0, "bob", "pw", "/")).isTrue();

        // changes waiting out the append timeout hold a management thread each, and leave others for reads
        List<java.net.Socket> waiting = new java.util.ArrayList<>();
        try {
            for (int i = 0; i < 4; i++) {
                waiting.add(rawPut(nodes[0].managementPort(), "/api/users/dave" + i, "{\"password\":\"d\",\"tags\":\"\"}"));
            }
            assertThat(api(0).get("/api/overview").status()).isEqualTo(200);
            assertThat(api(0).get("/api/health/checks/is-in-service").status()).isEqualTo(200);
            for (java.net.Socket put : waiting) {
                assertThat(put.getInputStream().available()).as("a change still waiting").isZero();
            }
        } finally {
            for (java.net.Socket put : waiting) {
                put.close();
            }
        }
    }

    /** Writes a PUT as guest and returns its socket unread: the broker has the whole request once this returns. */
    private static java.net.Socket rawPut(int port, String path, String json) throws IOException {
        java.net.Socket socket = new java.net.Socket("127.0.0.1", port);
        byte[] body = json.getBytes(java.nio.charset.StandardCharsets.UTF_8);
        String auth = java.util.Base64.getEncoder().encodeToString("guest:guest".getBytes(
            java.nio.charset.StandardCharsets.UTF_8));
        socket.getOutputStream().write(("PUT " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Basic " + auth
            + "\r\nContent-Type: application/json\r\nContent-Length: " + body.length + "\r\n\r\n")
            .getBytes(java.nio.charset.StandardCharsets.US_ASCII));
        socket.getOutputStream().write(body);
        socket.getOutputStream().flush();
        return socket;
    }

    @Test
    void aSingleNodesDefinitionsAreMigratedIntoTheClusterOnItsFirstStartWithClustering() throws Exception {
        ChildBroker single = ChildBroker.start(cluster.home(0), "cluster-d-single", List.of("-Xmx256m"),
            List.of());
        HttpApiClient http = new HttpApiClient(single.managementPort(), "guest", "guest");
        assertThat(http.put("/api/vhosts/legacy", Map.of()).status()).isEqualTo(201);
        assertThat(http.put("/api/users/old", Map.of("password", "pw", "tags", "")).status()).isEqualTo(201);
        assertThat(http.put("/api/permissions/legacy/old", Map.of("configure", ".*", "write", ".*", "read", ".*"))
            .status()).isEqualTo(201);
        single.kill();

        cluster.startMembers();
        await().atMost(WAIT).until(() -> logsIn(2, "old", "pw", "legacy"));
        assertThat(logsIn(1, "guest", "guest", "/")).isTrue();
        Path dataDir = cluster.home(0).resolve("broker");
        await().atMost(WAIT).until(() -> Files.exists(dataDir.resolve("definitions-migrated/definitions.snapshot")));
        assertThat(dataDir.resolve("definitions.snapshot")).doesNotExist();

        // the log is now the one record: the node that migrated has them after a kill -9, without the files
        nodes[0].kill();
        start(0);
        await().atMost(WAIT).until(() -> logsIn(0, "old", "pw", "legacy"));
        assertThat(api(0).get("/api/users").list()).extracting(u -> u.get("name"))
            .containsExactlyInAnyOrder("guest", "old");
    }
}
