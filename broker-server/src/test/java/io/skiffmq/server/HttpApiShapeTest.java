package io.skiffmq.server;

import static io.skiffmq.server.HttpApiClient.seg;
import static org.assertj.core.api.Assertions.assertThat;

import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import io.skiffmq.codec.testing.LeakDetection;
import io.skiffmq.core.alarm.ResourceAlarms.Resource;
import io.skiffmq.server.config.BrokerConfig;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Each endpoint's JSON against the shape RabbitMQ's management API documents (field names and JSON types), on a
 * broker with a queue, an exchange and a binding declared over AMQP 0-9-1 and a connection open.
 */
@ExtendWith(LeakDetection.class)
class HttpApiShapeTest {
    private static RunningBroker broker;
    private static HttpApiClient api;
    private static Connection connection;

    @BeforeAll
    static void start() throws Exception {
        broker = RunningBroker.start();
        api = HttpApiClient.guest(broker);
        connection = VirtualHostTest.factory(broker, "/", "guest", "guest").newConnection("shape-test");
        Channel channel = connection.createChannel();
        channel.queueDeclare("shapes", true, false, false, Map.of("x-max-length", 10));
        channel.exchangeDeclare("shapes.x", "topic", true);
        channel.queueBind("shapes", "shapes.x", "a.#");
        channel.basicPublish("", "shapes", null, "one".getBytes());
        channel.close();
    }

    @AfterAll
    static void stop() throws Exception {
        connection.close();
        broker.close();
    }

    /** Asserts each field is present with a value of the JSON type given (String, Number, Boolean, Map, List). */
    private static void assertShape(Map<String, Object> item, Object... namesAndTypes) {
        for (int i = 0; i < namesAndTypes.length; i += 2) {
            String name = (String) namesAndTypes[i];
            assertThat(item).as(name + " in " + item).containsKey(name);
            assertThat(item.get(name)).as(name).isInstanceOf((Class<?>) namesAndTypes[i + 1]);
        }
    }

    @Test
    void overview() throws Exception {
        HttpApiClient.Answer answer = api.get("/api/overview");
        assertThat(answer.status()).isEqualTo(200);
        assertShape(answer.map(), "management_version", String.class, "rabbitmq_version", String.class,
            "product_name", String.class, "product_version", String.class, "node", String.class,
            "cluster_name", String.class, "exchange_types", List.class, "object_totals", Map.class,
            "queue_totals", Map.class, "listeners", List.class);
        @SuppressWarnings("unchecked")
        Map<String, Object> totals = (Map<String, Object>) answer.map().get("object_totals");
        assertShape(totals, "connections", Number.class, "exchanges", Number.class, "queues", Number.class,
            "consumers", Number.class);
        assertThat(((Number) totals.get("queues")).intValue()).isEqualTo(1);
        @SuppressWarnings("unchecked")
        List<Map<String, Object>> listeners = (List<Map<String, Object>>) answer.map().get("listeners");
        assertThat(listeners).anySatisfy(l -> {
            assertShape(l, "node", String.class, "protocol", String.class, "ip_address", String.class,
                "port", Number.class);
            assertThat(l.get("port")).isEqualTo(broker.port());
        });
        assertThat(answer.map()).containsEntry("rates_mode", "basic");
        @SuppressWarnings("unchecked")
        Map<String, Object> stats = (Map<String, Object>) answer.map().get("message_stats");
        assertShape(stats, "publish", Number.class, "publish_details", Map.class, "deliver_get", Number.class,
            "ack", Number.class, "ack_details", Map.class);
    }

    @Test
    void nodesAndWhoami() throws Exception {
        List<Map<String, Object>> nodes = api.get("/api/nodes").list();
        assertThat(nodes).hasSize(1);
        assertShape(nodes.get(0), "name", String.class, "type", String.class, "running", Boolean.class,
            "mem_used", Number.class, "mem_limit", Number.class, "mem_alarm", Boolean.class,
            "disk_free", Number.class, "disk_free_limit", Number.class, "disk_free_alarm", Boolean.class,
            "uptime", Number.class, "processors", Number.class, "partitions", List.class);
        String node = (String) nodes.get(0).get("name");
        assertThat(api.get("/api/nodes/" + seg(node)).map()).containsEntry("name", node);
        assertThat(api.get("/api/nodes/nobody@nowhere").status()).isEqualTo(404);

        Map<String, Object> me = api.get("/api/whoami").map();
        assertThat(me).containsEntry("name", "guest").containsEntry("tags", List.of("administrator"));
    }

    @Test
    void queues() throws Exception {
        List<Map<String, Object>> all = api.get("/api/queues").list();
        assertThat(all).extracting(q -> q.get("name")).containsExactly("shapes");
        Map<String, Object> queue = api.get("/api/queues/%2F/shapes").map();
        assertShape(queue, "name", String.class, "vhost", String.class, "durable", Boolean.class,
            "auto_delete", Boolean.class, "exclusive", Boolean.class, "arguments", Map.class, "node", String.class,
            "type", String.class, "state", String.class, "messages", Number.class, "messages_ready", Number.class,
            "messages_unacknowledged", Number.class, "consumers", Number.class);
        assertThat(queue).containsEntry("vhost", "/").containsEntry("durable", true)
            .containsEntry("arguments", Map.of("x-max-length", 10)).containsEntry("messages_ready", 1);
        assertThat(api.get("/api/queues/%2F").list()).hasSize(1);
        assertThat(api.get("/api/queues/%2F/missing").status()).isEqualTo(404);
        assertThat(api.get("/api/queues/nowhere").status()).isEqualTo(404);
    }

    @Test
    void exchangesAndBindings() throws Exception {
        List<Map<String, Object>> exchanges = api.get("/api/exchanges/%2F").list();
        assertThat(exchanges).extracting(e -> e.get("name"))
            .contains("", "amq.direct", "amq.topic", "amq.fanout", "amq.headers", "shapes.x");
        Map<String, Object> exchange = api.get("/api/exchanges/%2F/shapes.x").map();
        assertShape(exchange, "name", String.class, "vhost", String.class, "type", String.class,
            "durable", Boolean.class, "auto_delete", Boolean.class, "internal", Boolean.class,
            "arguments", Map.class);
        assertThat(exchange).containsEntry("type", "topic");
        assertThat(api.get("/api/exchanges/%2F/amq.default").map()).containsEntry("name", "");

        List<Map<String, Object>> bindings = api.get("/api/bindings/%2F").list();
        assertThat(bindings).hasSize(2); // the default exchange's to "shapes", and shapes.x's
        bindings.forEach(b -> assertShape(b, "source", String.class, "vhost", String.class,
            "destination", String.class, "destination_type", String.class, "routing_key", String.class,
            "arguments", Map.class, "properties_key", String.class));
        assertThat(api.get("/api/bindings/%2F/e/shapes.x/q/shapes").list()).singleElement()
            .satisfies(b -> assertThat(b).containsEntry("routing_key", "a.#").containsEntry("properties_key", "a.#"));
        assertThat(api.get("/api/exchanges/%2F/shapes.x/bindings/source").list()).hasSize(1);
        assertThat(api.get("/api/queues/%2F/shapes/bindings").list()).extracting(b -> b.get("source"))
            .containsExactly("", "shapes.x");
        // the lists of one object's bindings read that object's only, the default exchange's implicit ones included
        assertThat(api.get("/api/exchanges/%2F/amq.default/bindings/source").list()).singleElement()
            .satisfies(b -> assertThat(b).containsEntry("destination", "shapes").containsEntry("routing_key", "shapes"));
        assertThat(api.get("/api/exchanges/%2F/shapes.x/bindings/destination").list()).isEmpty();
        assertThat(api.get("/api/bindings/%2F/e/amq.default/q/shapes").list()).singleElement()
            .satisfies(b -> assertThat(b).containsEntry("routing_key", "shapes"));
    }

    @Test
    void connections() throws Exception {
        List<Map<String, Object>> connections = api.get("/api/connections").list();
        assertThat(connections).hasSize(1);
        Map<String, Object> c = connections.get(0);
        assertShape(c, "name", String.class, "node", String.class, "state", String.class,
            "protocol", String.class, "user", String.class, "vhost", String.class, "host", String.class,
            "port", Number.class, "peer_host", String.class, "peer_port", Number.class, "type", String.class,
            "channels", Number.class);
        assertThat(c).containsEntry("protocol", "AMQP 0-9-1").containsEntry("user", "guest").containsEntry("channels", 0)
            .containsEntry("vhost", "/").containsEntry("port", broker.port());
        assertThat((String) c.get("name")).endsWith(" -> 127.0.0.1:" + broker.port());
        assertThat(api.get("/api/connections/" + seg((String) c.get("name"))).map()).isEqualTo(c);
        assertThat(api.get("/api/vhosts/%2F/connections").list()).hasSize(1);
        assertThat(c).as("AMQP 1.0 only").doesNotContainKey("container_id");
    }

    /**
     * The client's start-ok properties as RabbitMQ renders a field table (strings, booleans, nested tables as
     * objects), and the {@code connection_name} the client gave as {@code user_provided_name}.
     */
    @Test
    @SuppressWarnings("unchecked")
    void aConnectionShowsItsClientPropertiesAndTheNameItWasGiven() throws Exception {
        Map<String, Object> c = api.get("/api/connections").list().get(0);
        assertShape(c, "client_properties", Map.class, "user_provided_name", String.class);
        assertThat(c).containsEntry("user_provided_name", "shape-test");
        Map<String, Object> properties = (Map<String, Object>) c.get("client_properties");
        assertThat(properties).containsEntry("product", "RabbitMQ").containsEntry("connection_name", "shape-test")
            .containsEntry("version", com.rabbitmq.client.impl.ClientVersion.VERSION)
            .containsEntry("platform", "Java");
        assertThat((Map<String, Object>) properties.get("capabilities")).containsEntry("publisher_confirms", true)
            .containsEntry("consumer_cancel_notify", true);
        assertThat(api.get("/api/connections/" + seg((String) c.get("name"))).map())
            .containsEntry("client_properties", properties).containsEntry("user_provided_name", "shape-test");

        try (Connection unnamed = VirtualHostTest.factory(broker, "/", "guest", "guest").newConnection()) {
            Map<String, Object> other = api.get("/api/connections").list().stream()
                .filter(m -> !"shape-test".equals(m.get("user_provided_name"))).findFirst().orElseThrow();
            assertThat(other).as("only a named connection has one").doesNotContainKey("user_provided_name");
            assertThat((Map<String, Object>) other.get("client_properties")).containsEntry("product", "RabbitMQ")
                .doesNotContainKey("connection_name");
        }
        awaitOnlyTheClassConnection();
    }

    /** AMQP 1.0: the open frame's properties, as RabbitMQ 4 converts them; no user_provided_name. */
    @Test
    @SuppressWarnings("unchecked")
    void anAmqp10ConnectionShowsItsOpenProperties() throws Exception {
        org.apache.qpid.jms.JmsConnectionFactory factory = new org.apache.qpid.jms.JmsConnectionFactory("guest",
            "guest", broker.amqpUri());
        try (jakarta.jms.Connection jms = factory.createConnection()) {
            jms.start();
            Map<String, Object> c = api.get("/api/connections").list().stream()
                .filter(m -> "AMQP 1.0".equals(m.get("protocol"))).findFirst().orElseThrow();
            Map<String, Object> properties = (Map<String, Object>) c.get("client_properties");
            assertThat(properties).containsEntry("product", "QpidJMS").containsKeys("version", "platform");
            assertThat(c).doesNotContainKey("user_provided_name");
        }
        awaitOnlyTheClassConnection();
    }

    private static void awaitOnlyTheClassConnection() {
        Amqp091Support.await().atMost(Amqp091Support.TIMEOUT)
            .until(() -> api.get("/api/connections").list().size() == 1);
    }

    /** As RabbitMQ shows it: the RabbitMQ AMQP 1.0 Go client's suite finds its connections by it. */
    @Test
    void anAmqp10ConnectionShowsItsContainerId() throws Exception {
        try (RawClient client = RawClient.openSession(broker.port())) {
            Amqp091Support.await().atMost(Amqp091Support.TIMEOUT).until(() -> api.get("/api/connections").list()
                .stream().anyMatch(c -> "AMQP 1.0".equals(c.get("protocol"))));
            Map<String, Object> c = api.get("/api/connections").list().stream()
                .filter(m -> "AMQP 1.0".equals(m.get("protocol"))).findFirst().orElseThrow();
            assertThat(c).containsEntry("container_id", "raw-client");
        }
        awaitOnlyTheClassConnection();
    }

    @Test
    void vhostsUsersPermissions() throws Exception {
        List<Map<String, Object>> vhosts = api.get("/api/vhosts").list();
        assertThat(vhosts).singleElement().satisfies(v -> assertShape(v, "name", String.class,
            "description", String.class, "tags", List.class, "tracing", Boolean.class));
        Map<String, Object> guest = api.get("/api/users/guest").map();
        assertShape(guest, "name", String.class, "password_hash", String.class,
            "hashing_algorithm", String.class, "tags", List.class, "limits", Map.class);
        assertThat(guest).containsEntry("hashing_algorithm", "rabbit_password_hashing_sha256");
        Map<String, Object> permission = api.get("/api/permissions/%2F/guest").map();
        assertThat(permission).isEqualTo(Map.of("user", "guest", "vhost", "/", "configure", ".*", "write", ".*",
            "read", ".*"));
        assertThat(api.get("/api/permissions").list()).contains(permission);
        assertThat(api.get("/api/users/guest/permissions").list()).containsExactly(permission);
        assertThat(api.get("/api/vhosts/%2F/permissions").list()).containsExactly(permission);
    }

    @Test
    void pagination() throws Exception {
        Map<String, Object> page = api.get("/api/exchanges/%2F?page=1&page_size=2&name=amq.&sort=name"
            + "&sort_reverse=true").map();
        assertThat(page.keySet()).containsExactlyInAnyOrder("filtered_count", "item_count", "items", "page",
            "page_count", "page_size", "total_count");
        assertThat(page).containsEntry("filtered_count", 5).containsEntry("item_count", 2).containsEntry("page", 1)
            .containsEntry("page_count", 3).containsEntry("page_size", 2).containsEntry("total_count", 7);
        @SuppressWarnings("unchecked")
        List<Map<String, Object>> items = (List<Map<String, Object>>) page.get("items");
        assertThat(items).extracting(e -> e.get("name")).containsExactly("amq.topic", "amq.match");

        Map<String, Object> regex = api.get("/api/exchanges/%2F?page=1&name=%5Eamq%5C.(direct%7Cfanout)%24"
            + "&use_regex=true").map();
        assertThat(regex).containsEntry("filtered_count", 2);
        assertThat(api.get("/api/exchanges/%2F?page=9&page_size=2").status()).isEqualTo(400);
        assertThat(api.get("/api/queues?page=1&page_size=501").status()).isEqualTo(400);
    }

    @Test
    void healthChecks() throws Exception {
        assertThat(api.get("/api/health/checks/alarms").body()).isEqualTo(Map.of("status", "ok"));
        assertThat(api.get("/api/health/checks/local-alarms").body()).isEqualTo(Map.of("status", "ok"));
        assertThat(api.get("/api/health/checks/virtual-hosts").body()).isEqualTo(Map.of("status", "ok"));
        assertThat(api.get("/api/health/checks/port-listener/" + broker.port()).body())
            .isEqualTo(Map.of("status", "ok", "port", broker.port()));
        HttpApiClient.Answer missing = api.get("/api/health/checks/port-listener/1");
        assertThat(missing.status()).isEqualTo(503);
        assertThat(missing.map()).containsEntry("status", "failed").containsEntry("reason", "No active listener")
            .containsEntry("missing", 1);

        ForcedAlarms alarms = broker.forceAlarms();
        alarms.raise(Resource.MEMORY);
        HttpApiClient.Answer alarmed = api.get("/api/health/checks/alarms");
        assertThat(alarmed.status()).isEqualTo(503);
        assertThat(alarmed.map()).containsEntry("status", "failed")
            .containsEntry("alarms", List.of(Map.of("node", BrokerConfig.defaults().node(), "resource", "memory")));
        assertThat(api.post("/api/exchanges/%2F/amq.default/publish", Map.of("routing_key", "shapes", "payload", "x",
            "payload_encoding", "string", "properties", Map.of())).status()).isEqualTo(503);
        alarms.clear(Resource.MEMORY);
        assertThat(api.get("/api/health/checks/local-alarms").status()).isEqualTo(200);
    }

    @Test
    void pipelinedRequestsAreAnsweredInOrder() throws Exception {
        String auth = "Authorization: Basic " + java.util.Base64.getEncoder()
            .encodeToString("guest:guest".getBytes(java.nio.charset.StandardCharsets.US_ASCII)) + "\r\n";
        String requests = "GET /api/overview HTTP/1.1\r\nHost: test\r\n" + auth + "\r\n"
            + "GET /api/nothing HTTP/1.1\r\nHost: test\r\n" + auth + "\r\n"
            + "GET /api/whoami HTTP/1.1\r\nHost: test\r\nConnection: close\r\n" + auth + "\r\n";
        try (java.net.Socket socket = new java.net.Socket("127.0.0.1", broker.managementPort())) {
            socket.setSoTimeout(10_000);
            socket.getOutputStream().write(requests.getBytes(java.nio.charset.StandardCharsets.US_ASCII));
            String answers = new String(socket.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
            // each body ends without a line break: the next status line follows it directly
            List<String> statuses = java.util.regex.Pattern.compile("HTTP/1\\.1 \\d{3}").matcher(answers).results()
                .map(java.util.regex.MatchResult::group).toList();
            assertThat(statuses).containsExactly("HTTP/1.1 200", "HTTP/1.1 404", "HTTP/1.1 200");
            assertThat(answers.indexOf("management_version")).isLessThan(answers.indexOf("Object Not Found"));
            assertThat(answers.indexOf("Object Not Found")).isLessThan(answers.indexOf("\"name\":\"guest\""));
        }
    }

    @Test
    void unknownPathsAndMethods() throws Exception {
        assertThat(api.get("/api/nothing").status()).isEqualTo(404);
        assertThat(api.get("/api/nothing").map()).containsKeys("error", "reason");
        assertThat(api.post("/api/overview", Map.of()).status()).isEqualTo(405);
    }
}
