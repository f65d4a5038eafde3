package io.skiffmq.server;

import static io.skiffmq.server.HttpApiClient.seg;
import static org.assertj.core.api.Assertions.assertThat;

import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Definitions across kill -9, in a child JVM whose change logs compact every few kilobytes: queues declared, bound,
 * unbound and deleted over 0-9-1, an exchange with its bindings deleted, users, permissions, topic permissions and a
 * virtual host changed over the HTTP API; then a client declaring and binding queues as fast as it can while the
 * broker is killed. After the restart everything that was confirmed is there, and nothing that was deleted.
 */
class DefinitionsKillTest {
    private static final List<String> SETTINGS = List.of("--definitions-compaction-ratio=2",
        "--definitions-compaction-min-bytes=4096");

    @TempDir
    Path dataDir;

    @Test
    void everyConfirmedDefinitionChangeSurvivesKill9() throws Exception {
        Set<String> confirmed = ConcurrentHashMap.newKeySet();
        try (ChildBroker broker = ChildBroker.start(dataDir, "definitions-kill", List.of("-Xmx256m"), SETTINGS)) {
            try (Connection connection = factory(broker).newConnection()) {
                Channel channel = connection.createChannel();
                for (int i = 0; i < 300; i++) {
                    channel.queueDeclare("q" + i, true, false, false, null);
                    channel.queueBind("q" + i, "amq.direct", "q" + i);
                }
                for (int i = 0; i < 300; i += 3) {
                    channel.queueDelete("q" + i);
                }
                for (int i = 1; i < 300; i += 3) {
                    channel.queueUnbind("q" + i, "amq.direct", "q" + i);
                }
                channel.exchangeDeclare("gone", "topic", true);
                channel.exchangeDeclare("kept", "topic", true, false, Map.of("alternate-exchange", "amq.fanout"));
                channel.queueBind("q2", "gone", "a.#");
                channel.queueBind("q2", "kept", "b.*", Map.of("k", 1L));
                channel.exchangeBind("kept", "amq.topic", "c.#");
                channel.exchangeDelete("gone");
            }
            HttpApiClient http = new HttpApiClient(broker.managementPort(), "guest", "guest");
            assertThat(http.put("/api/vhosts/other", Map.of()).status()).isEqualTo(201);
            assertThat(http.post("/api/definitions", Map.of("parameters", List.of(Map.of("vhost", "other",
                "component", "vhost-limits", "name", "limits", "value", Map.of("max-queues", 50))))).status())
                .isLessThan(300);
            assertThat(http.put("/api/users/carol", Map.of("password", "secret", "tags", "monitoring")).status())
                .isEqualTo(201);
            assertThat(http.put("/api/users/dave", Map.of("password", "secret", "tags", "")).status()).isEqualTo(201);
            assertThat(http.put("/api/permissions/other/carol", Map.of("configure", "^carol-", "write", ".*",
                "read", ".*")).status()).isEqualTo(201);
            assertThat(http.put("/api/permissions/" + seg("/") + "/dave", Map.of("configure", ".*", "write", ".*",
                "read", ".*")).status()).isEqualTo(201);
            assertThat(http.put("/api/topic-permissions/other/carol", Map.of("exchange", "amq.topic",
                "write", "^carol\\.", "read", ".*")).status()).isEqualTo(201);
            assertThat(http.delete("/api/users/dave").status()).isEqualTo(204);

            // declares confirmed one after another until the kill
            CountDownLatch some = new CountDownLatch(200);
            Thread declarer = new Thread(() -> {
                try (Connection connection = factory(broker).newConnection()) {
                    Channel channel = connection.createChannel();
                    for (int i = 0; ; i++) {
                        channel.queueDeclare("late" + i, true, false, false, null);
                        channel.queueBind("late" + i, "amq.direct", "late" + i);
                        confirmed.add("late" + i);
                        some.countDown();
                    }
                } catch (Exception expected) {
                    // the broker was killed
                }
            });
            declarer.start();
            assertThat(some.await(60, TimeUnit.SECONDS)).isTrue();
            broker.kill();
            declarer.join(30_000);
        }
        try (ChildBroker broker = ChildBroker.start(dataDir, "definitions-kill-restarted", List.of("-Xmx256m"),
                SETTINGS)) {
            HttpApiClient http = new HttpApiClient(broker.managementPort(), "guest", "guest");
            Set<String> queues = http.get("/api/queues/" + seg("/") + "?columns=name").list().stream()
                .map(q -> (String) q.get("name")).collect(Collectors.toSet());
            for (int i = 0; i < 300; i++) {
                assertThat(queues.contains("q" + i)).as("q%d", i).isEqualTo(i % 3 != 0);
            }
            assertThat(queues).containsAll(confirmed);
            Set<String> directKeys = http.get("/api/exchanges/" + seg("/") + "/amq.direct/bindings/source").list()
                .stream().map(b -> (String) b.get("routing_key")).collect(Collectors.toSet());
            for (int i = 0; i < 300; i++) {
                assertThat(directKeys.contains("q" + i)).as("binding of q%d", i).isEqualTo(i % 3 == 2);
            }
            assertThat(directKeys).containsAll(confirmed);
            assertThat(http.get("/api/exchanges/" + seg("/") + "/gone").status()).isEqualTo(404);
            assertThat(http.get("/api/exchanges/" + seg("/") + "/kept").map().get("arguments"))
                .isEqualTo(Map.of("alternate-exchange", "amq.fanout"));
            List<Map<String, Object>> q2 = http.get("/api/queues/" + seg("/") + "/q2/bindings").list();
            assertThat(q2).extracting(b -> b.get("source") + " " + b.get("routing_key") + " " + b.get("arguments"))
                .contains("kept b.* {k=1}").noneMatch(b -> b.startsWith("gone"));
            assertThat(http.get("/api/exchanges/" + seg("/") + "/kept/bindings/destination").list())
                .extracting(b -> b.get("source") + " " + b.get("routing_key")).containsExactly("amq.topic c.#");

            @SuppressWarnings("unchecked")
            List<Map<String, Object>> parameters = (List<Map<String, Object>>) http.get("/api/definitions").map()
                .get("parameters");
            assertThat(parameters).filteredOn(p -> "other".equals(p.get("vhost"))).extracting(p -> p.get("value"))
                .containsExactly(Map.of("max-queues", 50));
            assertThat(http.get("/api/users/carol").map().get("tags")).isEqualTo(List.of("monitoring"));
            assertThat(http.get("/api/users/dave").status()).isEqualTo(404);
            assertThat(http.get("/api/permissions/other/carol").map().get("configure")).isEqualTo("^carol-");
            assertThat(http.get("/api/topic-permissions/other/carol").list()).extracting(p -> p.get("write"))
                .containsExactly("^carol\\.");
            assertThat(http.get("/api/permissions/" + seg("/") + "/dave").status()).isEqualTo(404);
        }
    }

    private static ConnectionFactory factory(ChildBroker broker) {
        ConnectionFactory factory = new ConnectionFactory();
        factory.setPort(broker.port);
        return factory;
    }
}
