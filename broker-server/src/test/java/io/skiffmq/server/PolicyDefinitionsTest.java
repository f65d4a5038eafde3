package io.skiffmq.server;

import static io.skiffmq.server.Amqp091Support.passive;
import static io.skiffmq.server.Amqp091Support.sendToQueue;
import static org.assertj.core.api.Assertions.assertThat;

import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import io.skiffmq.codec.testing.LeakDetection;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Policies and operator policies are definitions: they survive a restart (and queues restart under them), are
 * exported as RabbitMQ exports them ({@code policies}, and {@code parameters} of component
 * {@code operator_policy}) and imported, from the HTTP API's form and from {@code rabbitmqctl export_definitions}'
 * (an operator policy's definition as a list of pairs).
 */
@ExtendWith(LeakDetection.class)
class PolicyDefinitionsTest {
    private static final Map<String, Object> POLICY = Map.of("vhost", "/", "name", "limits", "pattern", "^orders",
        "apply-to", "queues", "definition", Map.of("max-length", 3, "message-ttl", 60_000), "priority", 2);
    private static final Map<String, Object> OPERATOR_POLICY = Map.of("value", Map.of("pattern", ".*",
        "definition", Map.of("max-length", 2), "priority", 0, "apply-to", "all"), "vhost", "/",
        "component", "operator_policy", "name", "cap");

    private static int ready(RunningBroker broker, String queue) throws Exception {
        ConnectionFactory factory = new ConnectionFactory();
        factory.setPort(broker.port());
        try (Connection connection = factory.newConnection()) {
            return passive(connection, queue).getMessageCount();
        }
    }

    private static void publish(RunningBroker broker, String queue, String... bodies) throws Exception {
        ConnectionFactory factory = new ConnectionFactory();
        factory.setPort(broker.port());
        try (Connection connection = factory.newConnection()) {
            sendToQueue(connection, queue, bodies);
        }
    }

    @Test
    void policiesSurviveARestartAndQueuesRestartUnderThem() throws Exception {
        Path dir = Files.createTempDirectory("skiffmq-policies");
        try {
            try (RunningBroker broker = RunningBroker.start("data-dir=" + dir)) {
                HttpApiClient api = HttpApiClient.guest(broker);
                assertThat(api.put("/api/queues/%2F/orders", Map.of("durable", true)).status()).isEqualTo(201);
                assertThat(api.put("/api/policies/%2F/limits", POLICY).status()).isEqualTo(201);
                assertThat(api.put("/api/policies/%2F/gone", Map.of("pattern", ".*", "definition",
                    Map.of("max-length", 1), "priority", 9)).status()).isEqualTo(201);
                assertThat(api.delete("/api/policies/%2F/gone").status()).isEqualTo(204);
                assertThat(api.put("/api/operator-policies/%2F/cap", Map.of("pattern", ".*", "definition",
                    Map.of("max-length", 2))).status()).isEqualTo(201);
            }
            try (RunningBroker broker = RunningBroker.start("data-dir=" + dir)) {
                HttpApiClient api = HttpApiClient.guest(broker);
                assertThat(api.get("/api/policies").list()).containsExactly(POLICY);
                assertThat(api.get("/api/operator-policies/%2F").list()).extracting(p -> p.get("name"))
                    .containsExactly("cap");
                assertThat(api.get("/api/queues/%2F/orders").map()).containsEntry("policy", "limits")
                    .containsEntry("operator_policy", "cap")
                    .containsEntry("effective_policy_definition", Map.of("max-length", 2, "message-ttl", 60_000));
                publish(broker, "orders", "1", "2", "3", "4");
                assertThat(ready(broker, "orders")).isEqualTo(2);
            }
        } finally {
            RunningBroker.delete(dir);
        }
    }

    @Test
    void exportedPoliciesImportIntoAnotherBroker() throws Exception {
        Map<String, Object> exported;
        try (RunningBroker source = RunningBroker.start()) {
            HttpApiClient api = HttpApiClient.guest(source);
            api.put("/api/policies/%2F/limits", POLICY);
            api.put("/api/operator-policies/%2F/cap", Map.of("pattern", ".*", "definition",
                Map.of("max-length", 2)));
            exported = api.get("/api/definitions").map();
            assertThat(exported.get("policies")).isEqualTo(List.of(POLICY));
            assertThat(exported.get("parameters")).isEqualTo(List.of(OPERATOR_POLICY));
            assertThat(api.get("/api/definitions/%2F").map().get("policies")).isEqualTo(List.of(POLICY));
        }
        try (RunningBroker target = RunningBroker.start()) {
            HttpApiClient api = HttpApiClient.guest(target);
            assertThat(api.post("/api/definitions", exported).status()).isEqualTo(204);
            Map<String, Object> again = api.get("/api/definitions").map();
            assertThat(again.get("policies")).isEqualTo(exported.get("policies"));
            assertThat(again.get("parameters")).isEqualTo(exported.get("parameters"));
        }
    }

    @Test
    void rabbitmqctlsFormAndRefusedPoliciesImport() throws Exception {
        try (RunningBroker broker = RunningBroker.start()) {
            HttpApiClient api = HttpApiClient.guest(broker);
            // as rabbitmqctl export_definitions writes an operator policy: its definition as pairs
            Map<String, Object> pairs = Map.of("parameters", List.of(Map.of("value", Map.of("pattern", ".*",
                "definition", List.of(List.of("max-length", 5), List.of("expires", 60_000)), "priority", 0,
                "apply-to", "queues"), "vhost", "/", "component", "operator_policy", "name", "from-ctl")),
                "queues", List.of(Map.of("name", "imported", "vhost", "/", "durable", true, "auto_delete", false,
                    "arguments", Map.of())));
            assertThat(api.post("/api/definitions", pairs).status()).isEqualTo(204);
            assertThat(api.get("/api/queues/%2F/imported").map()).containsEntry("operator_policy", "from-ctl")
                .containsEntry("effective_policy_definition", Map.of("expires", 60_000, "max-length", 5));

            HttpApiClient.Answer refused = api.post("/api/definitions", Map.of("policies", List.of(Map.of(
                "vhost", "/", "name", "bad", "pattern", ".*", "definition", Map.of("ha-mode", "all")))));
            assertThat(refused.status()).isEqualTo(400);
            assertThat(refused.map().get("reason").toString()).contains("policy 'bad' in vhost '/'",
                "[{<<\"ha-mode\">>,<<\"all\">>}] are not recognised policy settings");
        }
    }
}
