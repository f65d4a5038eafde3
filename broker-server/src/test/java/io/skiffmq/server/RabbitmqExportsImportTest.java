package io.skiffmq.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import io.skiffmq.codec.testing.LeakDetection;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import tools.jackson.databind.json.JsonMapper;

/**
 * Definitions exported by a real RabbitMQ 3.10.8 (Debian's {@code rabbitmq-server}; how they were made is in
 * {@code src/test/resources/definitions/rabbitmq-3.10.8/README.md}): the HTTP API's export, the same node's
 * {@code rabbitmqctl export_definitions} (pairs for operator policy definitions, vhost limits and map-valued
 * global parameters; internal exchanges left out, their bindings kept; vhost metadata), and one virtual host's.
 * Beside them, both forms as RabbitMQ 4.1 writes them, written by hand ({@code rabbitmq-4.1-by-hand/README.md}):
 * quorum queues, streams, {@code x-queue-type} everywhere, per-type {@code apply-to}, default queue types and
 * deletion protection. Everything SkiffMQ has is imported, global parameters kept; what it cannot honour (a policy
 * key, the shovel and federation parameters, {@code cluster_name}) is named, one by one, in the 400 that answers
 * the import.
 */
@ExtendWith(LeakDetection.class)
class RabbitmqExportsImportTest {
    private static final String DIR = "/definitions/rabbitmq-3.10.8/";
    private static final String DIR_4 = "/definitions/rabbitmq-4.1-by-hand/";

    /** What neither RabbitMQ 4.1 export can bring over. */
    private static final List<String> NOT_HONOURED_4 = List.of(
        "parameter 'drain-legacy' of component 'shovel' in vhost '/': SkiffMQ has no 'shovel' component",
        "global parameter 'cluster_name': kept, but it does not rename this node or cluster (see /api/cluster-name)");

    /** What neither export can bring over, whichever form it has. */
    private static final List<String> NOT_HONOURED = List.of(
        "parameter 'move-dead' of component 'shovel' in vhost '/': SkiffMQ has no 'shovel' component",
        "parameter 'origin' of component 'federation-upstream' in vhost 'prod': SkiffMQ has no "
            + "'federation-upstream' component",
        "policy 'lazy' in vhost '/': [{<<\"ha-mode\">>,<<\"all\">>}] are not recognised policy settings; set "
            + "without it");

    @SuppressWarnings("unchecked")
    private static Map<String, Object> export(String name) throws Exception {
        return export(DIR, name);
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> export(String dir, String name) throws Exception {
        try (InputStream in = RabbitmqExportsImportTest.class.getResourceAsStream(dir + name)) {
            assertThat(in).as(name).isNotNull();
            return JsonMapper.builder().build().readValue(in, Map.class);
        }
    }

    /** The reason's items, one per line after the first. */
    private static List<String> items(HttpApiClient.Answer answer) {
        assertThat(answer.status()).as("%s", answer.body()).isEqualTo(400);
        String reason = answer.map().get("reason").toString();
        assertThat(reason).startsWith("Imported, except for ");
        return reason.lines().skip(1).map(line -> line.substring(2)).toList();
    }

    private static Connection login(RunningBroker broker, String user, String password, String vhost)
            throws Exception {
        ConnectionFactory factory = new ConnectionFactory();
        factory.setPort(broker.port());
        factory.setUsername(user);
        factory.setPassword(password);
        factory.setVirtualHost(vhost);
        return factory.newConnection();
    }

    @Test
    void rabbitmqctlExportImportsAllButWhatItNames() throws Exception {
        try (RunningBroker broker = RunningBroker.start()) {
            HttpApiClient api = HttpApiClient.guest(broker);
            Map<String, Object> document = export("rabbitmqctl-export_definitions.json");
            List<String> notHonoured = items(api.post("/api/definitions", document));
            assertThat(notHonoured).containsExactlyInAnyOrderElementsOf(NOT_HONOURED);
            checkImported(broker, api);
            // the internal exchange rabbitmqctl left out is not made up; its bindings are skipped, as RabbitMQ does
            assertThat(api.get("/api/exchanges/%2F/hidden").status()).isEqualTo(404);
            assertThat(api.get("/api/exchanges/%2F/events/bindings/source").list())
                .extracting(b -> b.get("destination")).containsExactlyInAnyOrder("orders.eu", "clicks");

            // importing it again changes nothing and names the same items
            assertThat(items(api.post("/api/definitions", document))).containsExactlyInAnyOrderElementsOf(
                notHonoured);
            checkImported(broker, api);
        }
    }

    @Test
    void httpApiExportImportsAllButWhatItNames() throws Exception {
        try (RunningBroker broker = RunningBroker.start()) {
            HttpApiClient api = HttpApiClient.guest(broker);
            List<String> notHonoured = items(api.post("/api/definitions", export("api-definitions.json")));
            assertThat(notHonoured).containsExactlyInAnyOrderElementsOf(NOT_HONOURED);
            assertThat(api.get("/api/global-parameters/internal_cluster_id").map())
                .containsEntry("value", "rabbitmq-cluster-id-Br03mc7-K6AhXry1ioe16A");
            checkImported(broker, api);
            // the HTTP API's export has the internal exchange and its bindings
            assertThat(api.get("/api/exchanges/%2F/hidden").map()).containsEntry("internal", true);
            assertThat(api.get("/api/exchanges/%2F/hidden/bindings/source").list())
                .extracting(b -> b.get("destination")).containsExactly("dead");
            assertThat(api.get("/api/exchanges/%2F/events/bindings/source").list())
                .extracting(b -> b.get("destination")).containsExactlyInAnyOrder("orders.eu", "clicks", "hidden");
        }
    }

    @Test
    void oneVirtualHostsExportImportsIntoAnother() throws Exception {
        try (RunningBroker broker = RunningBroker.start()) {
            HttpApiClient api = HttpApiClient.guest(broker);
            assertThat(api.put("/api/vhosts/staging", Map.of()).status()).isEqualTo(201);
            List<String> notHonoured = items(api.post("/api/definitions/staging",
                export("api-definitions-prod.json")));
            assertThat(notHonoured).containsExactlyInAnyOrder(
                "parameter 'origin' of component 'federation-upstream' in vhost 'staging': SkiffMQ has no "
                    + "'federation-upstream' component");
            assertThat(api.get("/api/queues/staging/jobs").map()).containsEntry("type", "quorum");
            assertThat(api.get("/api/queues/staging/jobs.classic").map()).containsEntry("type", "classic");
            assertThat(api.get("/api/policies/staging/qq").map()).containsEntry("priority", 2);
            assertThat(api.get("/api/operator-policies/staging/qq-limits").map())
                .containsEntry("definition", Map.of("delivery-limit", 20, "max-in-memory-length", 1000));
            assertThat(api.get("/api/definitions/staging").map().get("parameters")).asList()
                .contains(Map.of("value", Map.of("max-connections", 100, "max-queues", 500), "vhost", "staging",
                    "component", "vhost-limits", "name", "limits"));
        }
    }

    @Test
    void rabbitmq41HttpApiExportImportsAllButWhatItNames() throws Exception {
        try (RunningBroker broker = RunningBroker.start()) {
            HttpApiClient api = HttpApiClient.guest(broker);
            Map<String, Object> document = export(DIR_4, "api-definitions.json");
            assertThat(items(api.post("/api/definitions", document))).containsExactlyInAnyOrderElementsOf(
                NOT_HONOURED_4);
            checkImported4(broker, api);
            assertThat(api.get("/api/exchanges/%2F/hidden").map()).containsEntry("internal", true);
            assertThat(api.get("/api/exchanges/%2F/events/bindings/source").list())
                .extracting(b -> b.get("destination")).containsExactlyInAnyOrder("tmp.jobs", "hidden");
            assertThat(api.get("/api/global-parameters/internal_cluster_id").status()).isEqualTo(200);

            assertThat(items(api.post("/api/definitions", document))).as("again: nothing changes")
                .containsExactlyInAnyOrderElementsOf(NOT_HONOURED_4);
            checkImported4(broker, api);
        }
    }

    @Test
    void rabbitmq41RabbitmqctlExportImportsAllButWhatItNames() throws Exception {
        try (RunningBroker broker = RunningBroker.start()) {
            HttpApiClient api = HttpApiClient.guest(broker);
            Map<String, Object> document = export(DIR_4, "rabbitmqctl-export_definitions.json");
            assertThat(items(api.post("/api/definitions", document))).containsExactlyInAnyOrderElementsOf(
                NOT_HONOURED_4);
            checkImported4(broker, api);
            // the internal exchange is left out; the binding to it is skipped, the one from it too
            assertThat(api.get("/api/exchanges/%2F/hidden").status()).isEqualTo(404);
            assertThat(api.get("/api/exchanges/%2F/events/bindings/source").list())
                .extracting(b -> b.get("destination")).containsExactly("tmp.jobs");
        }
    }

    /** What both RabbitMQ 4.1 exports hold, as this broker has it after the import. */
    private static void checkImported4(RunningBroker broker, HttpApiClient api) throws Exception {
        try (Connection svc = login(broker, "svc", "svc-pw", "telemetry");
             Connection ana = login(broker, "ana", "ana-pw", "orders");
             Connection ops = login(broker, "ops", "ops-pw", "/")) {
            assertThat(svc.isOpen() && ana.isOpen() && ops.isOpen()).isTrue();
        }
        assertThat(api.get("/api/users/svc").map()).containsEntry("hashing_algorithm",
            "rabbit_password_hashing_sha512");
        assertThat(api.get("/api/users/ana").map()).containsEntry("limits", Map.of("max-connections", 10));
        assertThat(api.get("/api/permissions/orders/svc").map()).containsEntry("configure", "")
            .containsEntry("write", "^orders$");
        assertThat(api.get("/api/topic-permissions/telemetry/svc").list()).singleElement()
            .satisfies(p -> assertThat(p).containsEntry("exchange", "amq.topic").containsEntry("write", "^svc\\."));
        assertThat(api.get("/api/global-parameters/cluster_name").map()).containsEntry("value", "rabbit@broker-1");

        assertThat(api.get("/api/vhosts/orders").map()).containsEntry("description", "Order processing")
            .containsEntry("tags", List.of("eu", "prod")).containsEntry("default_queue_type", "quorum")
            .containsEntry("protected_from_deletion", true);
        assertThat(api.delete("/api/vhosts/orders").status()).as("protected from deletion").isEqualTo(412);
        assertThat(api.get("/api/vhosts/telemetry").map()).containsEntry("default_queue_type", "stream")
            .containsEntry("protected_from_deletion", false);
        assertThat(api.get("/api/vhost-limits/orders").list()).singleElement().satisfies(l ->
            assertThat(l.get("value")).isEqualTo(Map.of("max-connections", 500, "max-queues", 200)));

        assertThat(api.get("/api/operator-policies/orders/qq-cap").map()).containsEntry("apply-to", "quorum_queues")
            .containsEntry("definition", Map.of("delivery-limit", 50, "max-length", 100000));
        assertThat(api.get("/api/policies/orders/quorum-dlx").map()).containsEntry("priority", 5)
            .containsEntry("apply-to", "quorum_queues");
        assertThat(api.get("/api/queues/orders/order.created").map()).containsEntry("type", "quorum")
            .containsEntry("policy", "quorum-dlx").containsEntry("operator_policy", "qq-cap");
        assertThat(api.get("/api/queues/orders/orders.dlq").map()).containsEntry("type", "quorum");
        assertThat(api.get("/api/queues/orders/orders.audit").map()).containsEntry("type", "classic")
            .containsEntry("arguments", Map.of("x-queue-type", "classic", "x-max-priority", 5))
            .containsEntry("policy", null).containsEntry("operator_policy", null);
        assertThat(api.get("/api/queues/telemetry/metrics").map()).containsEntry("type", "stream")
            .containsEntry("policy", "retention");
        assertThat(api.get("/api/queues/%2F/tmp.jobs").map()).containsEntry("type", "classic")
            .containsEntry("policy", "scratch").containsEntry("operator_policy", "ttl-cap");
        assertThat(api.get("/api/queues/%2F/picked").map()).containsEntry("durable", false)
            .containsEntry("auto_delete", true);
        assertThat(api.get("/api/exchanges/%2F/pick").map()).containsEntry("type", "x-local-random");
        assertThat(api.get("/api/exchanges/%2F/events").map()).containsEntry("policy", "ae");
        assertThat(api.get("/api/exchanges/orders/orders.dlx/bindings/source").list())
            .extracting(b -> b.get("destination")).containsExactly("orders.dlq");
        assertThat(api.get("/api/exchanges/telemetry/amq.topic/bindings/source").list())
            .extracting(b -> b.get("destination")).containsExactly("metrics");
    }

    /** What both exports hold, as this broker has it after the import. */
    private static void checkImported(RunningBroker broker, HttpApiClient api) throws Exception {
        // users with each of RabbitMQ's hashing algorithms log in with their passwords
        try (Connection bob = login(broker, "bob", "bob-pw", "/");
             Connection carol = login(broker, "carol", "carol-pw", "plain");
             Connection alice = login(broker, "alice", "alice-pw", "prod")) {
            assertThat(bob.isOpen() && carol.isOpen() && alice.isOpen()).isTrue();
        }
        assertThat(api.get("/api/users/bob").map()).containsEntry("hashing_algorithm",
            "rabbit_password_hashing_sha512");
        assertThat(api.get("/api/users/carol").map()).containsEntry("hashing_algorithm",
            "rabbit_password_hashing_md5");
        assertThat(api.get("/api/users/ops").map().get("tags")).isEqualTo(List.of("administrator", "monitoring"));
        assertThat(api.get("/api/users/alice").map()).containsEntry("limits", Map.of("max-channels", 50));
        // a map-valued global parameter, as pairs in rabbitmqctl's export, is a map again
        assertThat(api.get("/api/global-parameters/cluster_tags").map())
            .containsEntry("value", Map.of("env", "test", "region", "eu-west"));
        assertThat(api.get("/api/global-parameters/migration_note").map())
            .containsEntry("value", "moved from rabbitmq");

        assertThat(api.get("/api/permissions/prod/pm").map()).containsEntry("configure", "")
            .containsEntry("read", "^pm\\.");
        assertThat(api.get("/api/topic-permissions/prod/alice").list()).singleElement()
            .satisfies(p -> assertThat(p).containsEntry("exchange", "amq.topic").containsEntry("write", "^alice\\."));

        assertThat(api.get("/api/policies/%2F/lazy").map().get("definition"))
            .isEqualTo(Map.of("expires", 3600000, "queue-mode", "lazy"));
        assertThat(api.get("/api/policies/%2F/dlx").map()).containsEntry("priority", 1);
        assertThat(api.get("/api/policies/%2F/ae").map()).containsEntry("apply-to", "exchanges");
        assertThat(api.get("/api/policies/streams/retention").map().get("definition"))
            .isEqualTo(Map.of("max-age", "7D", "max-length-bytes", 1000000000, "stream-max-segment-size-bytes",
                50000000));
        assertThat(api.get("/api/operator-policies/%2F/limits").map().get("definition"))
            .isEqualTo(Map.of("max-length", 100000, "message-ttl", 86400000));

        assertThat(api.get("/api/queues/%2F/orders.eu").map()).containsEntry("policy", "dlx")
            .containsEntry("operator_policy", "limits")
            .containsEntry("arguments", Map.of("x-max-priority", 10));
        assertThat(api.get("/api/queues/%2F/clicks").map()).containsEntry("type", "stream");
        assertThat(api.get("/api/queues/streams/ticks").map()).containsEntry("type", "stream")
            .containsEntry("policy", "retention");
        assertThat(api.get("/api/queues/%2F/transient").map()).containsEntry("durable", false)
            .containsEntry("auto_delete", true);
        assertThat(api.get("/api/exchanges/%2F/hdr").map()).containsEntry("arguments",
            Map.of("alternate-exchange", "unrouted"));
        assertThat(api.get("/api/exchanges/%2F/dlx/bindings/source").list())
            .extracting(b -> b.get("destination")).containsExactly("dead");
        for (String quorum : List.of("%2F/audit", "prod/jobs", "prod/dead")) {
            assertThat(api.get("/api/queues/" + quorum).map()).as(quorum).containsEntry("type", "quorum");
        }
        assertThat(api.get("/api/exchanges/prod/work/bindings/source").list())
            .extracting(b -> b.get("destination")).contains("jobs");
    }

    @Test
    void rabbitmqctlExportBringsVhostMetadataAndLimits() throws Exception {
        try (RunningBroker broker = RunningBroker.start()) {
            HttpApiClient api = HttpApiClient.guest(broker);
            api.post("/api/definitions", export("rabbitmqctl-export_definitions.json"));
            assertThat(api.get("/api/vhosts/prod").map()).containsEntry("description", "production")
                .containsEntry("tags", List.of("prod", "eu")).containsEntry("default_queue_type", "quorum");
            assertThat(api.get("/api/vhosts/streams").map()).containsEntry("description", "stream apps")
                .containsEntry("default_queue_type", "stream");
            assertThat(api.get("/api/vhosts/%2F").map()).containsEntry("description", "Default virtual host")
                .containsEntry("default_queue_type", "classic");
            Map<String, Object> exported = api.get("/api/definitions").map();
            assertThat(exported.get("parameters")).asList().contains(Map.of("value", Map.of("max-connections",
                100, "max-queues", 500), "vhost", "prod", "component", "vhost-limits", "name", "limits"));
            assertThat(exported.get("vhosts")).asList().contains(Map.of("name", "prod", "description",
                "production", "tags", List.of("prod", "eu"), "default_queue_type", "quorum",
                "protected_from_deletion", false, "metadata",
                Map.of("description", "production", "tags", List.of("prod", "eu"), "default_queue_type", "quorum")));
        }
    }

    @Test
    void rabbitmq4VhostsImportWithTheirMetadata() throws Exception {
        // as RabbitMQ 4.1's GET /api/definitions writes virtual hosts (rabbit_definitions:vhost_definition/1 and
        // the HTTP API's own fields), with tracing, which SkiffMQ lacks
        Map<String, Object> document = Map.of("vhosts", List.of(
            Map.of("name", "orders", "description", "Orders", "tags", List.of("eu"), "default_queue_type", "stream",
                "metadata", Map.of("description", "Orders", "tags", List.of("eu"), "default_queue_type", "stream")),
            Map.of("name", "kept", "tracing", true, "metadata", Map.of("description", "", "tags", List.of(),
                "default_queue_type", "classic", "protected_from_deletion", true))));
        try (RunningBroker broker = RunningBroker.start()) {
            HttpApiClient api = HttpApiClient.guest(broker);
            assertThat(items(api.post("/api/definitions", document))).containsExactly(
                "virtual host 'kept': tracing is not implemented by SkiffMQ");
            assertThat(api.get("/api/vhosts/orders").map()).containsEntry("description", "Orders")
                .containsEntry("tags", List.of("eu")).containsEntry("default_queue_type", "stream");
            assertThat(api.get("/api/vhosts/kept").map()).containsEntry("default_queue_type", "classic")
                .containsEntry("protected_from_deletion", true);
            assertThat(api.delete("/api/vhosts/kept").status()).isEqualTo(412);
        }
    }

    @Test
    void defaultQueueTypeAndGlobalParametersSurviveARestart() throws Exception {
        Path dir = Files.createTempDirectory("skiffmq-dqt");
        try {
            try (RunningBroker broker = RunningBroker.start("data-dir=" + dir)) {
                HttpApiClient api = HttpApiClient.guest(broker);
                assertThat(api.put("/api/vhosts/logs", Map.of("description", "logs", "tags", "a,b",
                    "default_queue_type", "stream")).status()).isEqualTo(201);
                // rabbitmqadmin and RabbitMQ 3.11 send defaultqueuetype
                assertThat(api.put("/api/vhosts/qq", Map.of("defaultqueuetype", "quorum")).status())
                    .isEqualTo(201);
                assertThat(api.put("/api/vhosts/bad", Map.of("default_queue_type", "lazy")).status())
                    .isEqualTo(400);
                assertThat(api.get("/api/vhosts/bad").status()).isEqualTo(404);
                // global parameters are kept as RabbitMQ keeps them
                assertThat(api.put("/api/global-parameters/owner", Map.of("value", Map.of("team", "a"))).status())
                    .isEqualTo(201);
                assertThat(api.put("/api/global-parameters/owner", Map.of("value", Map.of("team", "b"))).status())
                    .isEqualTo(204);
                assertThat(api.put("/api/global-parameters/gone", Map.of("value", 1)).status()).isEqualTo(201);
                assertThat(api.delete("/api/global-parameters/gone").status()).isEqualTo(204);
                assertThat(api.delete("/api/global-parameters/gone").status()).isEqualTo(404);
            }
            try (RunningBroker broker = RunningBroker.start("data-dir=" + dir)) {
                HttpApiClient api = HttpApiClient.guest(broker);
                assertThat(api.get("/api/vhosts/logs").map()).containsEntry("default_queue_type", "stream")
                    .containsEntry("tags", List.of("a", "b")).containsEntry("description", "logs");
                assertThat(api.get("/api/global-parameters").list())
                    .containsExactly(Map.of("name", "owner", "value", Map.of("team", "b")));
                assertThat(api.get("/api/definitions").map().get("global_parameters"))
                    .isEqualTo(List.of(Map.of("name", "owner", "value", Map.of("team", "b"))));
                try (Connection connection = login(broker, "guest", "guest", "logs")) {
                    Channel channel = connection.createChannel();
                    channel.queueDeclare("events", true, false, false, null);
                    // a stream cannot be exclusive or auto-delete: RabbitMQ falls back to classic for those
                    channel.queueDeclare("scratch", true, false, true, null);
                    String exclusive = channel.queueDeclare().getQueue();
                    channel.queueDeclare("explicit", true, false, false, Map.of("x-queue-type", "classic"));
                    assertThat(api.get("/api/queues/logs/events").map()).containsEntry("type", "stream")
                        .containsEntry("arguments", Map.of("x-queue-type", "stream"));
                    assertThat(api.get("/api/queues/logs/scratch").map()).containsEntry("type", "classic");
                    assertThat(api.get("/api/queues/logs/" + exclusive).map()).containsEntry("type", "classic");
                    assertThat(api.get("/api/queues/logs/explicit").map()).containsEntry("type", "classic");
                    // a redeclaration without x-queue-type is the same declaration
                    channel.queueDeclare("events", true, false, false, null);
                    // a server-named queue the default would make a stream is refused, as RabbitMQ refuses it
                    Channel other = connection.createChannel();
                    assertThatThrownBy(() -> other.queueDeclare("", true, false, false, null))
                        .hasStackTraceContaining("PRECONDITION_FAILED - Cannot declare a server-named queue for "
                            + "type rabbit_stream_queue");
                }
                assertThat(api.put("/api/queues/logs/by-http", Map.of("durable", true)).status()).isEqualTo(201);
                assertThat(api.get("/api/queues/logs/by-http").map()).containsEntry("type", "stream");
                assertThat(api.put("/api/queues/qq/jobs", Map.of("durable", true)).status()).isEqualTo(201);
                assertThat(api.get("/api/queues/qq/jobs").map()).containsEntry("type", "quorum");

                // the default can be changed and cleared; existing queues stay as they are
                assertThat(api.put("/api/vhosts/logs", Map.of("default_queue_type", "undefined")).status())
                    .isEqualTo(204);
                assertThat(api.get("/api/vhosts/logs").map()).containsEntry("default_queue_type", "classic")
                    .containsEntry("description", "");
                assertThat(api.put("/api/queues/logs/plain", Map.of("durable", true)).status()).isEqualTo(201);
                assertThat(api.get("/api/queues/logs/plain").map()).containsEntry("type", "classic")
                    .containsEntry("arguments", Map.of());
                // classic, as RabbitMQ 4 exports it for every virtual host, writes nothing either
                assertThat(api.put("/api/vhosts/logs", Map.of("default_queue_type", "classic")).status())
                    .isEqualTo(204);
                assertThat(api.put("/api/queues/logs/plain2", Map.of("durable", true)).status()).isEqualTo(201);
                assertThat(api.get("/api/queues/logs/plain2").map()).containsEntry("arguments", Map.of());
                assertThat(api.get("/api/queues/logs/events").map()).containsEntry("type", "stream");
            }
        } finally {
            RunningBroker.delete(dir);
        }
    }
}
