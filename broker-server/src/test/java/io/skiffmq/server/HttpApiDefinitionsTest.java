package io.skiffmq.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import io.skiffmq.codec.testing.LeakDetection;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * {@code /api/definitions}: what one broker exports, another imports, and ends up with the same users (their
 * passwords working), virtual hosts, limits, permissions, topic permissions, queues, exchanges and bindings.
 */
@ExtendWith(LeakDetection.class)
class HttpApiDefinitionsTest {

    @Test
    void anExportImportedIntoAnotherBrokerRecreatesItsDefinitions() throws Exception {
        Map<String, Object> exported;
        try (RunningBroker source = RunningBroker.start()) {
            Admin admin = source.admin();
            admin.createVhost("shop");
            admin.setVhostLimits("shop", 50, 20);
            admin.putUser("clerk", "clerk-pw", List.of("management"));
            admin.setUserLimits("clerk", 5, -1);
            admin.setPermissions("clerk", "shop", "^orders", "^orders|^events", ".*");
            admin.setTopicPermissions("clerk", "shop", "events", "^shop\\.", ".*");
            // an administrator, too, declares only where its permissions allow, as in RabbitMQ
            admin.setPermissions("guest", "shop", ".*", ".*", ".*");
            HttpApiClient api = HttpApiClient.guest(source);
            assertThat(api.put("/api/exchanges/shop/events", Map.of("type", "topic", "durable", true)).status())
                .isEqualTo(201);
            assertThat(api.put("/api/queues/shop/orders", Map.of("durable", true, "arguments",
                Map.of("x-max-length", 1000, "x-queue-type", "classic"))).status()).isEqualTo(201);
            assertThat(api.post("/api/bindings/shop/e/events/q/orders", Map.of("routing_key", "shop.order.*",
                "arguments", Map.of())).status()).isEqualTo(201);

            HttpApiClient.Answer answer = api.get("/api/definitions");
            assertThat(answer.status()).isEqualTo(200);
            exported = answer.map();
            assertThat(exported.keySet()).contains("rabbit_version", "rabbitmq_version", "users", "vhosts",
                "permissions", "topic_permissions", "parameters", "global_parameters", "policies", "queues",
                "exchanges", "bindings");
            assertThat(exported.get("queues")).isEqualTo(List.of(Map.of("name", "orders", "vhost", "shop",
                "durable", true, "auto_delete", false, "arguments",
                Map.of("x-max-length", 1000, "x-queue-type", "classic"))));
            assertThat(exported.get("exchanges")).isEqualTo(List.of(Map.of("name", "events", "vhost", "shop",
                "type", "topic", "durable", true, "auto_delete", false, "internal", false, "arguments", Map.of())));
            assertThat(exported.get("bindings")).isEqualTo(List.of(Map.of("source", "events", "vhost", "shop",
                "destination", "orders", "destination_type", "queue", "routing_key", "shop.order.*",
                "arguments", Map.of())));
            assertThat(exported.get("parameters")).isEqualTo(List.of(Map.of("value",
                Map.of("max-connections", 50, "max-queues", 20), "vhost", "shop", "component", "vhost-limits",
                "name", "limits")));
            @SuppressWarnings("unchecked")
            List<Map<String, Object>> users = (List<Map<String, Object>>) exported.get("users");
            assertThat(users).anySatisfy(u -> assertThat(u).containsEntry("name", "clerk")
                .containsEntry("hashing_algorithm", "rabbit_password_hashing_sha256")
                .containsEntry("tags", List.of("management")).containsEntry("limits", Map.of("max-connections", 5))
                .containsKey("password_hash"));
        }

        try (RunningBroker target = RunningBroker.start()) {
            HttpApiClient api = HttpApiClient.guest(target);
            assertThat(api.post("/api/definitions", exported).status()).isEqualTo(204);
            Map<String, Object> reexported = api.get("/api/definitions").map();
            for (String section : List.of("vhosts", "permissions", "topic_permissions", "parameters", "queues",
                    "exchanges", "bindings")) {
                assertThat(reexported.get(section)).as(section).isEqualTo(exported.get(section));
            }
            @SuppressWarnings("unchecked")
            List<Map<String, Object>> users = (List<Map<String, Object>>) reexported.get("users");
            assertThat(users).extracting(u -> u.get("name")).contains("guest", "clerk");

            // the imported hash is the clerk's password, and its permissions and the topology work
            HttpApiClient clerk = new HttpApiClient(target.managementPort(), "clerk", "clerk-pw");
            assertThat(clerk.get("/api/whoami").map()).containsEntry("name", "clerk");
            try (Connection connection = VirtualHostTest.factory(target, "shop", "clerk", "clerk-pw")
                    .newConnection()) {
                Channel channel = connection.createChannel();
                channel.confirmSelect();
                channel.basicPublish("events", "shop.order.new", null, "order".getBytes(StandardCharsets.UTF_8));
                channel.waitForConfirmsOrDie(5_000);
                assertThat(new String(channel.basicGet("orders", true).getBody(), StandardCharsets.UTF_8))
                    .isEqualTo("order");
            }
            assertThat(api.post("/api/definitions", Map.of("policies", List.of(Map.of("name", "p")))).status())
                .isEqualTo(400);
            assertThat(api.post("/api/definitions", Map.of("queues", List.of(Map.of("name", "q", "vhost",
                "nowhere")))).status()).isEqualTo(400);
        }
    }

    @Test
    void aVirtualHostsDefinitionsGoIntoAnotherVirtualHost() throws Exception {
        try (RunningBroker broker = RunningBroker.start()) {
            HttpApiClient api = HttpApiClient.guest(broker);
            api.put("/api/queues/%2F/kept", Map.of("durable", true));
            Map<String, Object> exported = api.get("/api/definitions/%2F").map();
            assertThat(exported).doesNotContainKeys("users", "vhosts", "permissions");
            assertThat(api.put("/api/vhosts/copy", Map.of()).status()).isEqualTo(201);
            assertThat(api.post("/api/definitions/copy", exported).status()).isEqualTo(204);
            assertThat(api.get("/api/queues/copy/kept").status()).isEqualTo(200);
        }
    }
}
