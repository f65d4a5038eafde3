package io.skiffmq.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.ConnectionFactory;
import io.skiffmq.server.config.BrokerConfig;
import io.skiffmq.server.ctl.SkiffmqCtl;
import java.io.ByteArrayInputStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.json.JsonMapper;

/**
 * {@code skiffmqctl} against a running broker's HTTP API, run in-process ({@link SkiffmqCtl#run}) with the port
 * given: each command's output parsed, its effect checked through the API, and the exit codes of rabbitmqctl for
 * usage errors, unreachable nodes, refused requests and a wait that runs out.
 */
class SkiffmqCtlTest {
    private static final JsonMapper JSON = JsonMapper.builder().build();
    private static RunningBroker broker;
    private static HttpApiClient http;

    @TempDir
    Path dir;

    /** What a run printed, and its exit code. */
    record Result(int code, String out, String err) {
        List<String> lines() {
            return out.isEmpty() ? List.of() : List.of(out.split("\n"));
        }

        /** The tab-separated rows after the header line (and the banner, when there is one). */
        List<List<String>> rows(String header) {
            List<String> lines = lines();
            int at = lines.indexOf(header);
            assertThat(at).as("header line " + header + " in\n" + out).isGreaterThanOrEqualTo(0);
            List<List<String>> rows = new ArrayList<>();
            for (String line : lines.subList(at + 1, lines.size())) {
                rows.add(Arrays.asList(line.split("\t", -1)));
            }
            return rows;
        }
    }

    @BeforeAll
    static void start() throws Exception {
        broker = RunningBroker.start();
        http = HttpApiClient.guest(broker);
    }

    @AfterAll
    static void stop() {
        broker.close();
    }

    static Result ctl(int port, String... args) {
        List<String> all = new ArrayList<>(Arrays.asList(args));
        all.addAll(List.of("--host", "127.0.0.1", "--port", String.valueOf(port)));
        return run(all.toArray(String[]::new));
    }

    static Result ctl(String... args) {
        return ctl(broker.managementPort(), args);
    }

    static Result run(String... args) {
        return runWith(Map.of(), args);
    }

    /** @param environment what the command sees as its environment ({@code SKIFFMQ_*} settings) */
    static Result runWith(Map<String, String> environment, String... args) {
        return piped(environment, "", args);
    }

    /** @param stdin what the command reads from standard input */
    static Result piped(Map<String, String> environment, String stdin, String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int code = SkiffmqCtl.run(args, new ByteArrayInputStream(stdin.getBytes(StandardCharsets.UTF_8)),
            new PrintWriter(out), new PrintWriter(err), environment);
        return new Result(code, out.toString(), err.toString());
    }

    @Test
    void theNodeIsFoundThroughTheBrokersOwnSettings() throws Exception {
        String port = String.valueOf(broker.managementPort());
        Result fromEnvironment = runWith(Map.of("SKIFFMQ_MANAGEMENT_PORT", port, "SKIFFMQ_BIND", "127.0.0.1"),
            "list_exchanges", "-s", "name");
        assertThat(fromEnvironment.code()).as(fromEnvironment.err()).isZero();
        assertThat(fromEnvironment.lines()).contains("amq.direct");

        Path conf = Files.writeString(dir.resolve("skiffmq.conf"), "# the node's file\nmanagement-port = " + port
            + "\nbind = 127.0.0.1\n");
        Result fromFile = runWith(Map.of("SKIFFMQ_CONFIG_FILE", conf.toString()), "await_startup");
        assertThat(fromFile.code()).as(fromFile.err()).isZero();

        Result none = runWith(Map.of("SKIFFMQ_MANAGEMENT_PORT", "none"), "status");
        assertThat(none.code()).isEqualTo(78);
        assertThat(none.err()).contains("management-port is none");
        Result invalid = runWith(Map.of("SKIFFMQ_MANAGEMENT_PORT", "soon"), "status");
        assertThat(invalid.code()).isEqualTo(78);
        assertThat(invalid.err()).contains("SKIFFMQ_MANAGEMENT_PORT");
    }

    @Test
    void listQueuesWithColumnsFormattersAndQuietModes() throws Exception {
        assertThat(http.put("/api/queues/%2F/ctl-q", Map.of("durable", true)).status()).isEqualTo(201);
        assertThat(http.post("/api/exchanges/%2F/amq.default/publish", Map.of("routing_key", "ctl-q",
            "properties", Map.of(), "payload", "hello", "payload_encoding", "string")).status()).isEqualTo(200);

        Result defaults = ctl("list_queues");
        assertThat(defaults.code()).isZero();
        assertThat(defaults.lines().get(0)).isEqualTo("Listing queues for vhost / ...");
        assertThat(defaults.rows("name\tmessages")).contains(List.of("ctl-q", "1"));

        Result columns = ctl("list_queues", "-q", "name", "messages", "consumers", "durable");
        assertThat(columns.lines().get(0)).isEqualTo("name\tmessages\tconsumers\tdurable");
        assertThat(columns.rows("name\tmessages\tconsumers\tdurable")).contains(List.of("ctl-q", "1", "0", "true"));

        Result silent = ctl("-s", "list_queues", "name");
        assertThat(silent.lines()).contains("ctl-q").doesNotContain("name");

        Result json = ctl("list_queues", "--formatter", "json", "name", "messages_ready");
        assertThat(json.code()).isZero();
        List<Object> items = JSON.readValue(json.out(), List.class);
        assertThat(items).contains((Object) Map.of("name", "ctl-q", "messages_ready", 1));

        Result unknown = ctl("list_queues", "name", "colour");
        assertThat(unknown.code()).isEqualTo(64);
        assertThat(unknown.err()).contains("Info key(s) colour are not supported");

        Result noVhost = ctl("list_queues", "-p", "nowhere");
        assertThat(noVhost.code()).isEqualTo(70);
        assertThat(noVhost.err()).contains("HTTP 404");
    }

    @Test
    void listExchangesAndBindings() throws Exception {
        assertThat(http.put("/api/queues/%2F/ctl-b", Map.of()).status()).isEqualTo(201);
        assertThat(http.post("/api/bindings/%2F/e/amq.topic/q/ctl-b", Map.of("routing_key", "a.#")).status())
            .isEqualTo(201);

        Result exchanges = ctl("list_exchanges");
        assertThat(exchanges.rows("name\ttype")).contains(List.of("amq.topic", "topic"), List.of("amq.direct",
            "direct"));

        Result bindings = ctl("list_bindings", "-q");
        List<List<String>> rows = bindings.rows("source_name\tsource_kind\tdestination_name\tdestination_kind"
            + "\trouting_key\targuments");
        assertThat(rows).contains(List.of("amq.topic", "exchange", "ctl-b", "queue", "a.#", "{}"),
            List.of("", "exchange", "ctl-b", "queue", "ctl-b", "{}"));
    }

    @Test
    void listAndCloseConnections() throws Exception {
        ConnectionFactory factory = new ConnectionFactory();
        factory.setPort(broker.port());
        com.rabbitmq.client.Connection connection = factory.newConnection();
        try {
            // the class's only AMQP connection
            Result list = ctl("list_connections", "-q", "name", "user", "peer_host", "state", "protocol");
            List<List<String>> rows = list.rows("name\tuser\tpeer_host\tstate\tprotocol");
            assertThat(rows).hasSize(1);
            List<String> mine = rows.get(0);
            assertThat(mine.subList(1, 5)).containsExactly("guest", "127.0.0.1", "running", "AMQP 0-9-1");
            assertThat(mine.get(0)).startsWith("127.0.0.1:").endsWith(" -> 127.0.0.1:" + broker.port());
            assertThat(ctl("list_connections").rows("user\tpeer_host\tpeer_port\tstate").get(0))
                .containsExactly("guest", "127.0.0.1", mine.get(0).substring(10, mine.get(0).indexOf(' ')), "running");

            Result close = ctl("close_connection", mine.get(0), "go away");
            assertThat(close.code()).isZero();
            assertThat(close.out()).contains("Closing connection " + mine.get(0) + ", reason: go away");
            await().atMost(Duration.ofSeconds(10)).until(() -> !connection.isOpen());
            AMQP.Connection.Close reason = (AMQP.Connection.Close) connection.getCloseReason().getReason();
            assertThat(reason.getReplyCode()).isEqualTo(320);
            assertThat(reason.getReplyText()).isEqualTo("CONNECTION_FORCED - go away");
        } finally {
            connection.abort();
        }
        Result missing = ctl("close_connection", "1.2.3.4:5 -> 6.7.8.9:10", "why");
        assertThat(missing.code()).isEqualTo(70);
        assertThat(missing.err()).contains("HTTP 404");
    }

    @Test
    void usersPermissionsAndVirtualHosts() throws Exception {
        assertThat(ctl("add_vhost", "ctl-vhost").code()).isZero();
        assertThat(ctl("add_user", "ctl-user", "s3cret").code()).isZero();
        Result again = ctl("add_user", "ctl-user", "other");
        assertThat(again.code()).isEqualTo(70);
        assertThat(again.err()).contains("User \"ctl-user\" already exists");

        Result tags = ctl("set_user_tags", "ctl-user", "monitoring", "management");
        assertThat(tags.out()).contains("Setting tags for user \"ctl-user\" to [monitoring, management] ...");
        Result permissions = ctl("set_permissions", "-p", "ctl-vhost", "ctl-user", "^ctl-.*", ".*", "");
        assertThat(permissions.code()).isZero();
        assertThat(permissions.out()).contains("Setting permissions for user \"ctl-user\" in vhost \"ctl-vhost\"");

        HttpApiClient user = new HttpApiClient(broker.managementPort(), "ctl-user", "s3cret");
        assertThat(user.get("/api/whoami").map().get("tags")).isEqualTo(List.of("monitoring", "management"));
        assertThat(http.get("/api/permissions/ctl-vhost/ctl-user").map()).containsEntry("configure", "^ctl-.*")
            .containsEntry("write", ".*").containsEntry("read", "");
        // the user's password survived set_user_tags; the new user sees its virtual host
        assertThat(ctl(broker.managementPort(), "list_queues", "-p", "ctl-vhost", "-u", "ctl-user", "--password",
            "s3cret").code()).isZero();

        Result wrongPassword = ctl("list_queues", "--username", "ctl-user", "--password", "wrong");
        assertThat(wrongPassword.code()).isEqualTo(70);
        assertThat(wrongPassword.err()).contains("HTTP 401").contains("Not_Authorized");
    }

    @Test
    void definitionsExportedFromOneBrokerImportIntoAnother() throws Exception {
        assertThat(ctl("add_vhost", "exported").code()).isZero();
        assertThat(ctl("set_permissions", "-p", "exported", "guest", ".*", ".*", ".*").code()).isZero();
        assertThat(http.put("/api/queues/exported/kept", Map.of("durable", true)).status()).isEqualTo(201);
        Path file = dir.resolve("definitions.json");
        Result export = ctl("export_definitions", file.toString());
        assertThat(export.code()).isZero();
        assertThat(export.out()).contains("Exporting definitions in JSON to a file at \"" + file + "\"");
        Map<?, ?> definitions = JSON.readValue(Files.readString(file), Map.class);
        assertThat(definitions.get("vhosts").toString()).contains("exported");

        Result stdout = ctl("export_definitions", "-");
        assertThat(JSON.readValue(stdout.out(), Map.class).get("queues").toString()).contains("kept");

        try (RunningBroker other = RunningBroker.start()) {
            Result imported = ctl(other.managementPort(), "import_definitions", file.toString());
            assertThat(imported.code()).as(imported.err()).isZero();
            assertThat(ctl(other.managementPort(), "list_queues", "-s", "-p", "exported", "name").lines())
                .containsExactly("kept");
        }

        // from standard input: a document of RabbitMQ's shape, as an operator would pipe it
        String piped = "{\"vhosts\":[{\"name\":\"piped\"}],\"queues\":[{\"name\":\"from-stdin\","
            + "\"vhost\":\"piped\",\"durable\":true,\"auto_delete\":false,\"arguments\":{}}],"
            + "\"permissions\":[{\"user\":\"guest\",\"vhost\":\"piped\",\"configure\":\".*\","
            + "\"write\":\".*\",\"read\":\".*\"}]}";
        Result stdin = piped(Map.of(), piped, "import_definitions", "-", "--host", "127.0.0.1", "--port",
            String.valueOf(broker.managementPort()));
        assertThat(stdin.code()).as(stdin.err()).isZero();
        assertThat(ctl("list_queues", "-s", "-p", "piped", "name").lines()).containsExactly("from-stdin");

        Path garbage = Files.writeString(dir.resolve("garbage.json"), "{not json");
        Result bad = ctl("import_definitions", garbage.toString());
        assertThat(bad.code()).isEqualTo(65);
        assertThat(bad.err()).contains("is not JSON");
    }

    @Test
    void statusAndAwaitStartupOnARunningNode() {
        Result status = ctl("status");
        assertThat(status.code()).isZero();
        assertThat(status.lines()).contains("State: running", "RabbitMQ version: " + BrokerConfig.RABBITMQ_VERSION, "Product name: SkiffMQ")
            .anyMatch(line -> line.startsWith("Interface: 127.0.0.1, port: " + broker.port() + ", protocol: amqp"));
        assertThat(status.lines().get(0)).startsWith("Status of node ");

        Result json = ctl("status", "--formatter", "json");
        assertThat(JSON.readValue(json.out(), Map.class)).containsEntry("running", true);

        assertThat(ctl("await_startup", "--timeout", "5").code()).isZero();
    }

    @Test
    void aNodeThatIsNotThere() throws Exception {
        int closed;
        try (ServerSocket socket = new ServerSocket(0)) {
            closed = socket.getLocalPort();
        }
        long started = System.nanoTime();
        Result timedOut = ctl(closed, "await_startup", "--timeout", "1");
        assertThat(timedOut.code()).isEqualTo(75);
        assertThat(timedOut.err()).contains("did not start within 1 seconds").contains("unable to connect");
        assertThat(Duration.ofNanos(System.nanoTime() - started)).isGreaterThanOrEqualTo(Duration.ofSeconds(1));

        Result unavailable = ctl(closed, "list_queues");
        assertThat(unavailable.code()).isEqualTo(69);
        assertThat(unavailable.err())
            .contains("unable to connect to the HTTP API at http://127.0.0.1:" + closed + ": connection refused");
    }

    @Test
    void usageErrors() {
        assertThat(run().code()).isEqualTo(64);
        Result unknown = run("list_everything");
        assertThat(unknown.code()).isEqualTo(64);
        assertThat(unknown.err()).contains("list_everything");
        assertThat(ctl("set_permissions", "someone", ".*").code()).isEqualTo(64);
        Result help = run("list_queues", "--help");
        assertThat(help.code()).isZero();
        assertThat(help.out()).contains("-p, --vhost").contains("--formatter");
    }
}
