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

    /** On one node a quorum queue's one member is this node, as RabbitMQ's (docs/quorum-queues.md). */
    @Test
    void quorumQueueMembersOnASingleNode() throws Exception {
        assertThat(http.put("/api/queues/%2F/ctl-qq", Map.of("durable", true, "arguments",
            Map.of("x-queue-type", "quorum"))).status()).isEqualTo(201);
        assertThat(http.put("/api/queues/%2F/ctl-classic", Map.of("durable", true)).status()).isEqualTo(201);
        String self = (String) ((Map<?, ?>) http.get("/api/overview").body()).get("node");

        Result again = ctl("add_member", "ctl-qq", self);
        assertThat(again.code()).as(again.err()).isZero();
        assertThat(again.lines()).contains("Adding a replica for queue ctl-qq on node " + self + "...");
        Result last = ctl("delete_member", "ctl-qq", self);
        assertThat(last.code()).isEqualTo(69);
        assertThat(last.err()).contains("last_node");
        assertThat(ctl("delete_member", "ctl-qq", "other@127.0.0.1").code()).isZero();
        Result stranger = ctl("add_member", "ctl-qq", "other@127.0.0.1");
        assertThat(stranger.code()).isEqualTo(64);
        assertThat(stranger.err()).contains("{:not_a_cluster_member, :\"other@127.0.0.1\"}");
        Result classic = ctl("add_member", "ctl-classic", self);
        assertThat(classic.code()).isEqualTo(69);
        assertThat(classic.err()).contains("Cannot add members to a classic queue");
        Result missing = ctl("delete_member", "ctl-none", self);
        assertThat(missing.code()).isEqualTo(65);
        assertThat(missing.err()).contains("queue 'ctl-none' was not found in virtual host '/'");
        Result shrink = ctl("shrink", self);
        assertThat(shrink.code()).isZero();
        assertThat(shrink.lines()).contains("/\tctl-qq\t1\terror: the last node cannot be removed");

        // RabbitMQ's HTTP API for the same
        assertThat(http.post("/api/queues/quorum/%2F/ctl-qq/replicas/add", Map.of("node", self)).status())
            .isEqualTo(204);
        var refused = http.send("DELETE", "/api/queues/quorum/%2F/ctl-qq/replicas/delete", Map.of("node", self),
            Map.of());
        assertThat(refused.status()).isEqualTo(503);
        assertThat(refused.body()).isEqualTo(Map.of("error", "service_unavailable", "reason", "last_node"));
        assertThat(http.post("/api/queues/quorum/%2F/ctl-none/replicas/add", Map.of("node", self)).status())
            .isEqualTo(404);
        assertThat(http.post("/api/queues/quorum/replicas/on/other@127.0.0.1/grow", Map.of("vhost_pattern", ".*",
            "queue_pattern", ".*", "strategy", "all")).status()).isEqualTo(204);
        assertThat(http.send("DELETE", "/api/queues/quorum/replicas/on/" + self + "/shrink", null, Map.of())
            .status()).isEqualTo(202);
        assertThat(http.post("/api/rebalance/queues", null).status()).isEqualTo(204);
        Result rebalance = ctl("rebalance", "quorum", "--queue-pattern", "^ctl-qq$");
        assertThat(rebalance.code()).as(rebalance.err()).isZero();
        assertThat(rebalance.out()).containsPattern("│ \\Q" + self + "\\E\\s*│ 1\\s*│");
    }

    /** As the RabbitMQ AMQP 1.0 client's test helper asks: info keys separated by commas, as rabbitmqctl takes them. */
    @Test
    void listQueuesTakesColumnsSeparatedByCommas() throws Exception {
        assertThat(http.put("/api/queues/%2F/ctl-commas", Map.of("durable", true)).status()).isEqualTo(201);
        assertThat(http.post("/api/exchanges/%2F/amq.default/publish", Map.of("routing_key", "ctl-commas",
            "properties", Map.of(), "payload", "hi", "payload_encoding", "string")).status()).isEqualTo(200);
        String header = "name\tmessages\tmessages_ready\tmessages_unacknowledged";
        Result commas = ctl("list_queues", "-q", "name,messages,messages_ready,messages_unacknowledged");
        assertThat(commas.code()).as(commas.err()).isZero();
        assertThat(commas.lines().get(0)).isEqualTo(header);
        assertThat(commas.rows(header)).contains(List.of("ctl-commas", "1", "1", "0"));
        // mixed, with spaces and a repeated key, as rabbitmqctl's InfoKeys.prepare_info_keys reads them
        Result mixed = ctl("list_queues", "-q", "name, messages", "name", "consumers,");
        assertThat(mixed.lines().get(0)).isEqualTo("name\tmessages\tconsumers");
        Result unknown = ctl("list_queues", "name,colour");
        assertThat(unknown.code()).isEqualTo(64);
        assertThat(unknown.err()).contains("Info key(s) colour are not supported");
    }

    /**
     * rabbitmqctl's eval runs Erlang on the node: refused here as an expression that cannot be evaluated, but for
     * the resource alarms (SetAlarmLimitsTest).
     */
    @Test
    void evalFailsAsAnExpressionThatCannotBeEvaluated() {
        for (String expression : List.of("nodes().", "rabbit_alarm:get_alarms().")) {
            Result eval = ctl("eval", expression);
            assertThat(eval.code()).as(expression).isEqualTo(65);
            assertThat(eval.out()).isEmpty();
            assertThat(eval.err()).startsWith("Error: Evaluation failed: skiffmqctl cannot evaluate Erlang");
        }
        assertThat(ctl("eval", " ").err()).contains("Expression must not be blank");
        assertThat(ctl("eval", " ").code()).isEqualTo(64);
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

    /**
     * The columns the RabbitMQ Java client's test helper reads ({@code list_connections -q pid peer_port
     * client_properties}: a pid that close_connection takes, and the connection's name found in the properties as
     * rabbitmqctl prints a field table), then channels and consumers, and closing them all.
     */
    @Test
    void connectionsChannelsAndConsumersAsTheJavaClientsHelperReadsThem() throws Exception {
        assertThat(ctl("add_vhost", "ctl-conns").code()).isZero();
        assertThat(ctl("set_permissions", "-p", "ctl-conns", "guest", ".*", ".*", ".*").code()).isZero();
        ConnectionFactory factory = VirtualHostTest.factory(broker, "ctl-conns", "guest", "guest");
        com.rabbitmq.client.Connection named = factory.newConnection("ctl-named_1");
        com.rabbitmq.client.Connection other = factory.newConnection();
        try {
            com.rabbitmq.client.Channel channel = named.createChannel();
            channel.basicQos(7);
            String queue = channel.queueDeclare().getQueue();
            channel.basicConsume(queue, false, "ctl-tag", new com.rabbitmq.client.DefaultConsumer(channel));

            Result listed = ctl("list_connections", "-q", "pid", "peer_port", "client_properties",
                "user_provided_name");
            List<List<String>> rows = listed.rows("pid\tpeer_port\tclient_properties\tuser_provided_name");
            List<String> mine = rows.stream().filter(r -> r.get(1).equals(String.valueOf(
                ((com.rabbitmq.client.impl.AMQConnection) named).getLocalPort()))).findFirst().orElseThrow();
            assertThat(mine.get(2)).startsWith("[{\"").contains("{\"product\",\"RabbitMQ\"}")
                .contains("{\"capabilities\",[{\"").contains("\"publisher_confirms\",true}")
                .contains("{\"connection_name\",\"ctl-named_1\"}").endsWith("]");
            // the Java client's Host.extractConnectionName
            java.util.regex.Matcher name = java.util.regex.Pattern
                .compile("\"connection_name\",\"(?<name>[a-zA-Z0-9\\-_]+)?\"").matcher(mine.get(2));
            assertThat(name.find()).isTrue();
            assertThat(name.group("name")).isEqualTo("ctl-named_1");
            assertThat(mine.get(3)).isEqualTo("ctl-named_1");
            assertThat(rows).as("the unnamed one has no user_provided_name").anyMatch(r -> r.get(3).isEmpty());
            Result json = ctl("list_connections", "--formatter", "json", "pid", "client_properties");
            assertThat(json.out()).contains("\"connection_name\":\"ctl-named_1\"");

            Result channels = ctl("list_channels", "-q", "pid", "connection", "number", "prefetch_count",
                "consumer_count");
            assertThat(channels.rows("pid\tconnection\tnumber\tprefetch_count\tconsumer_count"))
                .contains(List.of(mine.get(0) + " (1)", mine.get(0), "1", "7", "1"));
            assertThat(ctl("list_channels").lines()).startsWith("Listing channels ...",
                "pid\tuser\tconsumer_count\tmessages_unacknowledged");
            Result consumers = ctl("list_consumers", "-p", "ctl-conns");
            assertThat(consumers.lines().get(0)).isEqualTo("Listing consumers in vhost ctl-conns ...");
            assertThat(consumers.rows("queue_name\tchannel_pid\tconsumer_tag\tack_required\tprefetch_count"
                + "\tactive\targuments")).containsExactly(List.of(queue, mine.get(0) + " (1)", "ctl-tag", "true", "7",
                "true", "{}"));

            Result closed = ctl("close_connection", mine.get(0), "by pid");
            assertThat(closed.code()).isZero();
            await().atMost(Duration.ofSeconds(10)).until(() -> !named.isOpen());
            assertThat(named.getCloseReason().getMessage()).contains("CONNECTION_FORCED - by pid");

            Result all = ctl("close_all_connections", "-p", "ctl-conns", "all of them");
            assertThat(all.code()).as(all.err()).isZero();
            assertThat(all.lines()).containsExactly("Closing all connections in vhost ctl-conns, reason: all of"
                + " them...", "Closed 1 connections");
            await().atMost(Duration.ofSeconds(10)).until(() -> !other.isOpen());
            assertThat(other.getCloseReason().getMessage()).contains("CONNECTION_FORCED - all of them");
        } finally {
            named.abort();
            other.abort();
        }
    }

    @Test
    void usersPermissionsAndVirtualHosts() throws Exception {
        assertThat(ctl("add_vhost", "ctl-vhost", "--description", "for ctl", "--tags", "a,b",
            "--default-queue-type", "stream").code()).isZero();
        assertThat(ctl("add_vhost", "ctl-vhost").code()).isZero(); // leaves it as it is
        assertThat(http.get("/api/vhosts/ctl-vhost").map()).containsEntry("description", "for ctl")
            .containsEntry("tags", List.of("a", "b")).containsEntry("default_queue_type", "stream");
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
    void deleteAndPurgeQueues() throws Exception {
        assertThat(ctl("add_vhost", "ctl-queues").code()).isZero();
        assertThat(ctl("set_permissions", "-p", "ctl-queues", "guest", ".*", ".*", ".*").code()).isZero();
        for (String queue : List.of("doomed", "kept", "full")) {
            assertThat(http.put("/api/queues/ctl-queues/" + queue, Map.of()).status()).isEqualTo(201);
        }
        for (int i = 0; i < 3; i++) {
            assertThat(http.post("/api/exchanges/ctl-queues/amq.default/publish", Map.of("routing_key", "full",
                "properties", Map.of(), "payload", "m" + i, "payload_encoding", "string")).status()).isEqualTo(200);
        }

        Result notEmpty = ctl("-p", "ctl-queues", "delete_queue", "full", "--if-empty");
        assertThat(notEmpty.code()).isEqualTo(64);
        assertThat(notEmpty.err()).contains("The queue is not empty");
        Result deleted = ctl("delete_queue", "-p", "ctl-queues", "full");
        assertThat(deleted.code()).as(deleted.err()).isZero();
        assertThat(deleted.lines()).containsExactly("Deleting queue 'full' on vhost 'ctl-queues' ...",
            "Queue was successfully deleted with 3 ready messages");
        Result quiet = ctl("delete_queue", "-q", "-p", "ctl-queues", "doomed", "-e", "--if-unused");
        assertThat(quiet.lines()).containsExactly("Queue was successfully deleted with 0 ready messages");
        Result missing = ctl("delete_queue", "-p", "ctl-queues", "doomed");
        assertThat(missing.code()).isEqualTo(64);
        assertThat(missing.err()).contains("No such queue was found");

        assertThat(http.post("/api/exchanges/ctl-queues/amq.default/publish", Map.of("routing_key", "kept",
            "properties", Map.of(), "payload", "m", "payload_encoding", "string")).status()).isEqualTo(200);
        Result purged = ctl("purge_queue", "--vhost", "ctl-queues", "kept");
        assertThat(purged.code()).isZero();
        assertThat(purged.lines()).containsExactly("Purging queue 'kept' in vhost 'ctl-queues' ...");
        assertThat(ctl("list_queues", "-s", "-p", "ctl-queues").lines()).containsExactly("kept\t0");
        Result purgeMissing = ctl("purge_queue", "-p", "ctl-queues", "doomed");
        assertThat(purgeMissing.code()).isEqualTo(65);
        assertThat(purgeMissing.err()).contains("Object (queue, stream, exchange, etc) was not found");
        assertThat(ctl("delete_queue").code()).as("no queue named").isEqualTo(64);
    }

    @Test
    void usersAndVirtualHostsComeAndGo() throws Exception {
        assertThat(ctl("add_user", "ctl-gone", "first").code()).isZero();
        assertThat(ctl("set_user_tags", "ctl-gone", "monitoring").code()).isZero();
        assertThat(ctl("list_users", "-q").rows("user\ttags")).contains(List.of("guest", "[administrator]"),
            List.of("ctl-gone", "[monitoring]"));
        assertThat(ctl("list_users").lines().get(0)).isEqualTo("Listing users ...");

        Result changed = ctl("change_password", "ctl-gone", "second");
        assertThat(changed.lines()).containsExactly("Changing password for user \"ctl-gone\" ...");
        assertThat(new HttpApiClient(broker.managementPort(), "ctl-gone", "second").get("/api/whoami").map())
            .as("the new password works, the tags stay").containsEntry("tags", List.of("monitoring"));
        Result fromStdin = piped(Map.of(), "third\n", "change_password", "-q", "ctl-gone", "--host", "127.0.0.1",
            "--port", String.valueOf(broker.managementPort()));
        assertThat(fromStdin.code()).as(fromStdin.err()).isZero();
        assertThat(new HttpApiClient(broker.managementPort(), "ctl-gone", "third").get("/api/whoami").status())
            .isEqualTo(200);
        Result noPassword = piped(Map.of(), "", "change_password", "-q", "ctl-gone", "--host", "127.0.0.1",
            "--port", String.valueOf(broker.managementPort()));
        assertThat(noPassword.code()).isEqualTo(70);
        assertThat(noPassword.err()).contains("Password is not provided via argument or stdin");

        Result deleted = ctl("delete_user", "ctl-gone");
        assertThat(deleted.code()).isZero();
        assertThat(deleted.lines()).containsExactly("Deleting user \"ctl-gone\" ...");
        for (String[] args : List.of(new String[] {"delete_user", "ctl-gone"},
                new String[] {"change_password", "ctl-gone", "x"}, new String[] {"set_user_tags", "ctl-gone"},
                new String[] {"list_user_permissions", "ctl-gone"})) {
            Result missing = ctl(args);
            assertThat(missing.code()).as(args[0]).isEqualTo(67);
            assertThat(missing.err()).contains("User \"ctl-gone\" does not exist");
        }

        assertThat(ctl("add_vhost", "ctl-short-lived").code()).isZero();
        assertThat(ctl("list_vhosts", "-q").rows("name")).contains(List.of("/"), List.of("ctl-short-lived"));
        assertThat(ctl("list_vhosts", "-s", "name", "tags", "default_queue_type").lines())
            .contains("ctl-short-lived\t[]\tclassic");
        Result deleted2 = ctl("delete_vhost", "ctl-short-lived");
        assertThat(deleted2.lines()).containsExactly("Deleting vhost \"ctl-short-lived\" ...");
        assertThat(ctl("list_vhosts", "-s").lines()).doesNotContain("ctl-short-lived");
        Result missingVhost = ctl("delete_vhost", "ctl-short-lived");
        assertThat(missingVhost.code()).isEqualTo(65);
        assertThat(missingVhost.err()).contains("Virtual host 'ctl-short-lived' does not exist");
    }

    @Test
    void aVirtualHostProtectedFromDeletionStaysUntilTheProtectionIsLifted() throws Exception {
        assertThat(ctl("add_vhost", "ctl-protected").code()).isZero();
        Result enabled = ctl("enable_vhost_deletion_protection", "ctl-protected");
        assertThat(enabled.code()).as(enabled.err()).isZero();
        assertThat(enabled.lines()).containsExactly("Protecting virtual host \"ctl-protected\" from removal by "
            + "updating its metadata...");
        assertThat(ctl("list_vhosts", "-s", "name", "protected_from_deletion").lines())
            .contains("ctl-protected\ttrue");

        Result refused = ctl("delete_vhost", "ctl-protected");
        assertThat(refused.code()).isEqualTo(65);
        assertThat(refused.err()).contains("Cannot delete this virtual host: it is protected from deletion. To lift "
            + "the protection, inspect and update its metadata");
        assertThat(http.get("/api/vhosts/ctl-protected").status()).isEqualTo(200);

        Result disabled = ctl("disable_vhost_deletion_protection", "ctl-protected");
        assertThat(disabled.lines()).containsExactly("Removing deletion protection from virtual host "
            + "\"ctl-protected\" by updating its metadata...");
        assertThat(ctl("delete_vhost", "ctl-protected").code()).isZero();
        Result missing = ctl("enable_vhost_deletion_protection", "ctl-protected");
        assertThat(missing.code()).isEqualTo(65);
        assertThat(missing.err()).contains("Virtual host 'ctl-protected' does not exist");
    }

    @Test
    void permissionsAndTopicPermissions() throws Exception {
        assertThat(ctl("add_vhost", "ctl-perms").code()).isZero();
        assertThat(ctl("add_user", "ctl-perm-user", "pw").code()).isZero();
        assertThat(ctl("set_permissions", "-p", "ctl-perms", "ctl-perm-user", "^a", "^b", "^c").code()).isZero();
        assertThat(ctl("list_permissions", "-p", "ctl-perms").lines()).containsExactly(
            "Listing permissions for vhost \"ctl-perms\" ...", "user\tconfigure\twrite\tread",
            "guest\t.*\t.*\t.*", "ctl-perm-user\t^a\t^b\t^c");
        assertThat(ctl("list_user_permissions", "ctl-perm-user").lines()).containsExactly(
            "Listing permissions for user \"ctl-perm-user\" ...", "vhost\tconfigure\twrite\tread",
            "ctl-perms\t^a\t^b\t^c");

        Result topic = ctl("set_topic_permissions", "-p", "ctl-perms", "ctl-perm-user", "amq.topic", "^{username}",
            ".*");
        assertThat(topic.code()).as(topic.err()).isZero();
        assertThat(topic.lines()).containsExactly("Setting topic permissions on \"amq.topic\" for user"
            + " \"ctl-perm-user\" in vhost \"ctl-perms\" ...");
        assertThat(ctl("set_topic_permissions", "-p", "ctl-perms", "ctl-perm-user", "other", "^x", "^y").code())
            .isZero();
        assertThat(ctl("list_topic_permissions", "-q", "-p", "ctl-perms").lines()).containsExactly(
            "user\texchange\twrite\tread", "ctl-perm-user\tamq.topic\t^{username}\t.*",
            "ctl-perm-user\tother\t^x\t^y");
        assertThat(ctl("list_user_topic_permissions", "ctl-perm-user").lines()).as("no header line by default")
            .containsExactly("Listing topic permissions for user \"ctl-perm-user\" ...",
                "ctl-perms\tamq.topic\t^{username}\t.*", "ctl-perms\tother\t^x\t^y");
        Result clearOne = ctl("clear_topic_permissions", "-p", "ctl-perms", "ctl-perm-user", "other");
        assertThat(clearOne.lines()).containsExactly("Clearing topic permissions on \"other\" for user"
            + " \"ctl-perm-user\" in vhost \"ctl-perms\" ...");
        assertThat(ctl("list_topic_permissions", "-s", "-p", "ctl-perms").lines())
            .containsExactly("ctl-perm-user\tamq.topic\t^{username}\t.*");
        Result clearAll = ctl("clear_topic_permissions", "-p", "ctl-perms", "ctl-perm-user");
        assertThat(clearAll.lines()).containsExactly("Clearing topic permissions for user \"ctl-perm-user\" in"
            + " vhost \"ctl-perms\" ...");
        assertThat(ctl("list_topic_permissions", "-s", "-p", "ctl-perms").lines()).isEmpty();
        assertThat(ctl("clear_topic_permissions", "-p", "ctl-perms", "ctl-perm-user").code())
            .as("nothing to clear is no error").isZero();

        Result cleared = ctl("clear_permissions", "-p", "ctl-perms", "ctl-perm-user");
        assertThat(cleared.lines()).containsExactly("Clearing permissions for user \"ctl-perm-user\" in vhost"
            + " \"ctl-perms\" ...");
        assertThat(http.get("/api/permissions/ctl-perms/ctl-perm-user").status()).isEqualTo(404);
        assertThat(ctl("clear_permissions", "-p", "ctl-perms", "ctl-perm-user").code()).isZero();

        Result noUser = ctl("set_topic_permissions", "nobody", "amq.topic", ".*", ".*");
        assertThat(noUser.code()).isEqualTo(67);
        assertThat(noUser.err()).contains("User nobody does not exist");
        Result noVhost = ctl("set_permissions", "-p", "nowhere", "ctl-perm-user", ".*", ".*", ".*");
        assertThat(noVhost.code()).isEqualTo(69);
        assertThat(noVhost.err()).contains("Virtual host nowhere does not exist");
        Result listNoVhost = ctl("list_permissions", "-p", "nowhere");
        assertThat(listNoVhost.code()).isEqualTo(65);
        assertThat(listNoVhost.err()).contains("Virtual host 'nowhere' does not exist");
        assertThat(ctl("list_users", "extra").code()).as("list_users takes no argument").isEqualTo(64);
    }

    @Test
    void policiesAndOperatorPolicies() throws Exception {
        assertThat(ctl("add_vhost", "ctl-policies").code()).isZero();
        Result set = ctl("set_policy", "-p", "ctl-policies", "--priority", "3", "--apply-to", "queues", "limits",
            "^q", "{\"max-length\":6}");
        assertThat(set.code()).as(set.err()).isZero();
        assertThat(set.lines()).containsExactly("Setting policy \"limits\" for pattern \"^q\" to"
            + " \"{\"max-length\":6}\" with priority \"3\" for vhost \"ctl-policies\" ...");
        assertThat(ctl("set_policy", "-p", "ctl-policies", "ttl", ".*", "{\"message-ttl\":100}").code()).isZero();
        assertThat(ctl("list_policies", "-p", "ctl-policies").lines()).containsExactly(
            "Listing policies for vhost \"ctl-policies\" ...", "vhost\tname\tpattern\tapply-to\tdefinition\tpriority",
            "ctl-policies\tttl\t.*\tall\t{\"message-ttl\":100}\t0",
            "ctl-policies\tlimits\t^q\tqueues\t{\"max-length\":6}\t3");
        Result json = ctl("list_policies", "-p", "ctl-policies", "--formatter", "json");
        assertThat(JSON.readValue(json.out(), List.class)).contains(Map.of("vhost", "ctl-policies", "name", "ttl",
            "pattern", ".*", "apply-to", "all", "definition", "{\"message-ttl\":100}", "priority", 0));

        Result bad = ctl("set_policy", "-p", "ctl-policies", "bad", "^q", "{\"foo\":1}");
        assertThat(bad.code()).isEqualTo(69);
        assertThat(bad.err()).contains("Validation failed", "[{<<\"foo\">>,1}] are not recognised policy settings");
        assertThat(ctl("set_policy", "-p", "ctl-policies", "--priority", "x", "p", "^q", "{\"max-length\":1}")
            .code()).isEqualTo(64);
        Result noVhost = ctl("set_policy", "-p", "nowhere", "p", "^q", "{\"max-length\":1}");
        assertThat(noVhost.code()).isEqualTo(65);
        assertThat(noVhost.err()).contains("Virtual host 'nowhere' does not exist");

        Result op = ctl("set_operator_policy", "-p", "ctl-policies", "cap", ".*", "{\"max-length\":2}");
        assertThat(op.lines()).containsExactly("Setting operator policy override \"cap\" for pattern \".*\" to"
            + " \"{\"max-length\":2}\" with priority \"0\" for vhost \"ctl-policies\" ...");
        assertThat(ctl("set_operator_policy", "-p", "ctl-policies", "dlx", ".*",
            "{\"dead-letter-exchange\":\"x\"}").code()).as("not an operator policy's key").isEqualTo(69);
        assertThat(ctl("list_operator_policies", "-q", "-p", "ctl-policies").lines()).containsExactly(
            "vhost\tname\tpattern\tapply-to\tdefinition\tpriority",
            "ctl-policies\tcap\t.*\tall\t{\"max-length\":2}\t0");
        assertThat(http.put("/api/queues/ctl-policies/q1", Map.of()).status()).isEqualTo(201);
        assertThat(http.get("/api/queues/ctl-policies/q1").map()).containsEntry("policy", "limits")
            .containsEntry("operator_policy", "cap")
            .containsEntry("effective_policy_definition", Map.of("max-length", 2));

        assertThat(ctl("clear_operator_policy", "-p", "ctl-policies", "cap").lines())
            .containsExactly("Clearing operator policy \"cap\" on vhost \"ctl-policies\" ...");
        assertThat(ctl("clear_policy", "-p", "ctl-policies", "limits").lines())
            .containsExactly("Clearing policy \"limits\" on vhost \"ctl-policies\" ...");
        Result missing = ctl("clear_policy", "-p", "ctl-policies", "limits");
        assertThat(missing.code()).isEqualTo(69);
        assertThat(missing.err()).contains("Parameter does not exist");
        assertThat(ctl("list_policies", "-s", "-p", "ctl-policies").lines())
            .containsExactly("ctl-policies\tttl\t.*\tall\t{\"message-ttl\":100}\t0");
        assertThat(http.get("/api/queues/ctl-policies/q1").map()).containsEntry("policy", "ttl")
            .containsEntry("operator_policy", null)
            .containsEntry("effective_policy_definition", Map.of("message-ttl", 100));
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
    void anUnknownCommandIsAUsageErrorWithOrWithoutHelp() {
        for (String[] args : List.of(new String[] {"frobnicate"}, new String[] {"frobnicate", "--help"},
                new String[] {"--port", "1", "frobnicate", "--help"})) {
            Result unknown = run(args);
            assertThat(unknown.code()).as(String.join(" ", args)).isEqualTo(64);
            assertThat(unknown.out()).isEmpty();
            assertThat(unknown.err()).startsWith("\nCommand 'frobnicate' not found. \n").contains("Usage: skiffmqctl");
        }
        Result near = run("delete_queu", "--help");
        assertThat(near.code()).isEqualTo(64);
        assertThat(near.err()).isEqualTo("\nCommand 'delete_queu' not found. \nDid you mean 'delete_queue'? \n\n");
        // as the RabbitMQ Java client's test helper asks whether a command exists
        for (String command : List.of("delete_queue", "set_topic_permissions", "close_all_connections")) {
            assertThat(run(command, "--help").code()).as(command).isZero();
        }
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
