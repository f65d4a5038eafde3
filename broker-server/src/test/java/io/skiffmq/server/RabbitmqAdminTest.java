package io.skiffmq.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.skiffmq.codec.testing.LeakDetection;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import tools.jackson.databind.ObjectMapper;
import tools.jackson.databind.json.JsonMapper;

/**
 * RabbitMQ's own {@code rabbitmqadmin} (the Python script of the management plugin) against our HTTP API: list,
 * declare and delete (parameters too), publish, get, export and import, with the bodies it sends (booleans and
 * numbers as strings, a {@code vhost} field, {@code queue_type}). The script is not ours to ship: it is taken from the system property
 * {@code skiffmq.rabbitmqadmin}, else from Debian's {@code rabbitmq-server} package; the test is skipped, saying
 * why, when it or python3 is absent.
 */
@ExtendWith(LeakDetection.class)
class RabbitmqAdminTest {
    private static final ObjectMapper JSON = JsonMapper.builder().build();
    private static Path script;
    private static RunningBroker broker;
    private static HttpApiClient api;

    @BeforeAll
    static void setUp() throws Exception {
        script = findScript();
        Assumptions.assumeTrue(script != null, "rabbitmqadmin not found: install Debian's rabbitmq-server or set "
            + "-Dskiffmq.rabbitmqadmin=/path/to/rabbitmqadmin");
        Assumptions.assumeTrue(python3(), "python3 is not installed: rabbitmqadmin needs it");
        broker = RunningBroker.start();
        api = HttpApiClient.guest(broker);
    }

    @AfterAll
    static void tearDown() {
        if (broker != null) {
            broker.close();
        }
    }

    private static Path findScript() throws IOException {
        String given = System.getProperty("skiffmq.rabbitmqadmin");
        if (given != null && !given.isEmpty()) {
            return Files.isRegularFile(Path.of(given)) ? Path.of(given) : null;
        }
        Path lib = Path.of("/usr/lib/rabbitmq/lib");
        if (!Files.isDirectory(lib)) {
            return null;
        }
        try (Stream<Path> servers = Files.list(lib)) {
            for (Path server : servers.sorted().toList()) {
                Path plugins = server.resolve("plugins");
                if (!Files.isDirectory(plugins)) {
                    continue;
                }
                try (Stream<Path> management = Files.list(plugins)) {
                    for (Path plugin : management.filter(p -> p.getFileName().toString()
                            .startsWith("rabbitmq_management-")).toList()) {
                        Path candidate = plugin.resolve("priv/www/cli/rabbitmqadmin");
                        if (Files.isRegularFile(candidate)) {
                            return candidate;
                        }
                    }
                }
            }
        }
        return null;
    }

    private static boolean python3() {
        try {
            Process p = new ProcessBuilder("python3", "--version").redirectErrorStream(true).start();
            p.getInputStream().readAllBytes();
            return p.waitFor(30, TimeUnit.SECONDS) && p.exitValue() == 0;
        } catch (IOException | InterruptedException e) {
            return false;
        }
    }

    /** What one run printed (stdout and stderr together) and its exit status. */
    private record Run(int status, String output) {
    }

    private static Run admin(String... args) throws Exception {
        List<String> command = new ArrayList<>(List.of("python3", script.toString(), "-H", "127.0.0.1", "-P",
            String.valueOf(broker.managementPort()), "-u", "guest", "-p", "guest"));
        command.addAll(List.of(args));
        Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(process.waitFor(60, TimeUnit.SECONDS)).as("rabbitmqadmin %s finished", command).isTrue();
        return new Run(process.exitValue(), output);
    }

    /** Runs a command that must succeed; its output. */
    private static String ok(String... args) throws Exception {
        Run run = admin(args);
        assertThat(run.status()).as("rabbitmqadmin %s:%n%s", List.of(args), run.output()).isZero();
        return run.output();
    }

    @SuppressWarnings("unchecked")
    private static List<Map<String, Object>> list(String... args) throws Exception {
        List<String> all = new ArrayList<>(List.of("-f", "raw_json", "list"));
        all.addAll(List.of(args));
        return JSON.readValue(ok(all.toArray(String[]::new)), List.class);
    }

    @Test
    void declaresListsAndDeletesVhostsUsersPermissionsAndLimits() throws Exception {
        assertThat(ok("declare", "vhost", "name=admin-v")).contains("vhost declared");
        ok("declare", "user", "name=admin-u", "password=secret", "tags=management,monitoring");
        ok("declare", "permission", "vhost=admin-v", "user=admin-u", "configure=^q", "write=.*", "read=.*");
        assertThat(list("vhosts")).extracting(v -> v.get("name")).contains("admin-v");
        assertThat(list("users")).filteredOn(u -> "admin-u".equals(u.get("name")))
            .singleElement().satisfies(u -> assertThat(u.get("tags")).isEqualTo(List.of("management", "monitoring")));
        assertThat(list("permissions")).filteredOn(p -> "admin-u".equals(p.get("user")))
            .singleElement().satisfies(p -> assertThat(p).containsEntry("vhost", "admin-v")
                .containsEntry("configure", "^q"));
        assertThat(new HttpApiClient(broker.managementPort(), "admin-u", "secret").get("/api/whoami").status())
            .isEqualTo(200);

        ok("declare", "vhost_limit", "vhost=admin-v", "name=max-queues", "value=7");
        ok("declare", "vhost_limit", "vhost=admin-v", "name=max-connections", "value=3");
        assertThat(list("vhost_limits")).filteredOn(l -> "admin-v".equals(l.get("vhost"))).singleElement()
            .satisfies(l -> assertThat(l.get("value")).isEqualTo(Map.of("max-queues", 7, "max-connections", 3)));
        ok("delete", "vhost_limit", "vhost=admin-v", "name=max-queues");
        assertThat(api.get("/api/vhost-limits/admin-v").list()).singleElement()
            .satisfies(l -> assertThat(l.get("value")).isEqualTo(Map.of("max-connections", 3)));
        Run refused = admin("declare", "vhost_limit", "vhost=admin-v", "name=max-bananas", "value=1");
        assertThat(refused.status()).isNotZero();
        assertThat(refused.output()).contains("Unrecognised terms [{<<\"max-bananas\">>,1}] in limits");

        ok("delete", "permission", "vhost=admin-v", "user=admin-u");
        ok("delete", "user", "name=admin-u");
        ok("delete", "vhost", "name=admin-v");
        assertThat(api.get("/api/vhosts/admin-v").status()).isEqualTo(404);
        assertThat(api.get("/api/users/admin-u").status()).isEqualTo(404);
    }

    @Test
    void declaresQueuesExchangesAndBindingsThenPublishesAndGets() throws Exception {
        // rabbitmqadmin sends "durable":"true", "auto_delete":"false", "internal":"false" and "vhost":"/"
        ok("declare", "exchange", "name=admin-ex", "type=topic", "durable=false");
        ok("declare", "queue", "name=admin-q", "durable=false", "arguments={\"x-max-length\":10}");
        // queue_type=stream: rabbitmqadmin adds x-queue-type to the arguments and keeps queue_type in the body
        ok("declare", "queue", "name=admin-stream", "queue_type=stream");
        ok("declare", "binding", "source=admin-ex", "destination=admin-q", "routing_key=orders.#");
        assertThat(list("exchanges")).filteredOn(e -> "admin-ex".equals(e.get("name"))).singleElement()
            .satisfies(e -> assertThat(e).containsEntry("type", "topic").containsEntry("durable", false));
        assertThat(list("queues")).filteredOn(q -> "admin-q".equals(q.get("name"))).singleElement()
            .satisfies(q -> assertThat(q).containsEntry("durable", false)
                .containsEntry("arguments", Map.of("x-max-length", 10)));
        assertThat(api.get("/api/queues/%2F/admin-stream").map()).containsEntry("type", "stream");
        assertThat(list("bindings")).filteredOn(b -> "admin-ex".equals(b.get("source")))
            .extracting(b -> b.get("routing_key")).containsExactly("orders.#");

        assertThat(ok("publish", "exchange=admin-ex", "routing_key=orders.eu", "payload=first"))
            .contains("Message published");
        ok("publish", "routing_key=admin-q", "payload=second", "properties={\"content_type\":\"text/plain\"}");
        @SuppressWarnings("unchecked")
        List<Map<String, Object>> got = JSON.readValue(ok("-f", "raw_json", "get", "queue=admin-q", "count=2",
            "ackmode=ack_requeue_false"), List.class);
        assertThat(got).extracting(m -> m.get("payload")).containsExactly("first", "second");
        assertThat(api.get("/api/queues/%2F/admin-q").map()).containsEntry("messages", 0);

        ok("delete", "binding", "source=admin-ex", "destination_type=queue", "destination=admin-q",
            "properties_key=orders.#");
        assertThat(api.get("/api/exchanges/%2F/admin-ex/bindings/source").list()).isEmpty();
        ok("delete", "queue", "name=admin-q");
        ok("delete", "queue", "name=admin-stream");
        ok("delete", "exchange", "name=admin-ex");
        assertThat(api.get("/api/queues/%2F/admin-q").status()).isEqualTo(404);
        assertThat(api.get("/api/exchanges/%2F/admin-ex").status()).isEqualTo(404);
    }

    @Test
    void declaresAndDeletesPoliciesAndOperatorPolicies() throws Exception {
        ok("declare", "policy", "name=admin-p", "pattern=^admin", "definition={\"max-length\":5}", "priority=3",
            "apply-to=queues");
        ok("declare", "operator_policy", "name=admin-op", "pattern=^admin", "definition={\"message-ttl\":1000}");
        assertThat(list("policies")).filteredOn(p -> "admin-p".equals(p.get("name"))).singleElement()
            .satisfies(p -> assertThat(p).containsEntry("priority", 3).containsEntry("apply-to", "queues")
                .containsEntry("definition", Map.of("max-length", 5)));
        assertThat(list("operator_policies")).extracting(p -> p.get("name")).contains("admin-op");
        Run refused = admin("declare", "policy", "name=admin-bad", "pattern=x", "definition={\"max-length\":\"5\"}");
        assertThat(refused.status()).isNotZero();
        assertThat(refused.output()).contains("is not a valid maximum length");

        ok("delete", "policy", "name=admin-p");
        ok("delete", "operator_policy", "name=admin-op");
        assertThat(api.get("/api/policies/%2F/admin-p").status()).isEqualTo(404);
        assertThat(api.get("/api/operator-policies/%2F/admin-op").status()).isEqualTo(404);
    }

    @Test
    void declaresListsAndDeletesParameters() throws Exception {
        ok("declare", "vhost", "name=admin-par");
        ok("-V", "admin-par", "declare", "parameter", "component=vhost-limits", "name=limits",
            "value={\"max-queues\":4}");
        ok("-V", "admin-par", "declare", "parameter", "component=operator_policy", "name=admin-par-op",
            "value={\"pattern\":\"^x\",\"definition\":{\"message-ttl\":500},\"priority\":0}");
        assertThat(list("parameters")).filteredOn(p -> "admin-par".equals(p.get("vhost")))
            .extracting(p -> p.get("component") + "/" + p.get("name") + "=" + p.get("value"))
            .containsExactlyInAnyOrder("vhost-limits/limits={max-queues=4}", "operator_policy/admin-par-op="
                + "{pattern=^x, apply-to=all, definition={message-ttl=500}, priority=0}");
        assertThat(api.get("/api/operator-policies/admin-par/admin-par-op").status()).isEqualTo(200);
        assertThat(api.get("/api/vhost-limits/admin-par").list()).singleElement()
            .satisfies(l -> assertThat(l.get("value")).isEqualTo(Map.of("max-queues", 4)));

        Run shovel = admin("-V", "admin-par", "declare", "parameter", "component=shovel", "name=move",
            "value={\"src-queue\":\"a\"}");
        assertThat(shovel.status()).isNotZero();
        assertThat(shovel.output()).contains("component shovel not found");

        ok("-V", "admin-par", "delete", "parameter", "component=vhost-limits", "name=limits");
        ok("-V", "admin-par", "delete", "parameter", "component=operator_policy", "name=admin-par-op");
        assertThat(list("parameters")).noneMatch(p -> "admin-par".equals(p.get("vhost")));
        assertThat(api.get("/api/operator-policies/admin-par/admin-par-op").status()).isEqualTo(404);
        ok("delete", "vhost", "name=admin-par");
    }

    @Test
    void exportsAndImportsDefinitions() throws Exception {
        ok("declare", "vhost", "name=admin-export");
        ok("-V", "admin-export", "declare", "queue", "name=kept", "arguments={\"x-message-ttl\":5000}");
        ok("-V", "admin-export", "declare", "exchange", "name=kept-ex", "type=fanout");
        Path file = Files.createTempFile("skiffmq-rabbitmqadmin", ".json");
        try {
            ok("export", file.toString());
            assertThat(Files.readString(file)).contains("\"kept\"", "\"kept-ex\"");
            ok("-V", "admin-export", "delete", "queue", "name=kept");
            ok("-V", "admin-export", "delete", "exchange", "name=kept-ex");
            ok("import", file.toString());
            assertThat(api.get("/api/queues/admin-export/kept").map())
                .containsEntry("arguments", Map.of("x-message-ttl", 5000));
            assertThat(api.get("/api/exchanges/admin-export/kept-ex").map()).containsEntry("type", "fanout");

            ok("-V", "admin-export", "export", file.toString());
            ok("-V", "admin-export", "delete", "queue", "name=kept");
            ok("-V", "admin-export", "import", file.toString());
            assertThat(api.get("/api/queues/admin-export/kept").status()).isEqualTo(200);
        } finally {
            Files.deleteIfExists(file);
            ok("delete", "vhost", "name=admin-export");
        }
    }
}
