package io.skiffmq.server;

import static io.skiffmq.server.StreamClients.TIMEOUT;
import static org.assertj.core.api.Assertions.assertThat;

import com.rabbitmq.stream.Consumer;
import com.rabbitmq.stream.OffsetSpecification;
import com.rabbitmq.stream.Producer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A stream, its publisher and consumers (one plain, two of a single active consumer group) made with the Java stream
 * client, then seen as RabbitMQ's operators see them: the HTTP API's queue object and {@code rabbitmq_stream_management}
 * endpoints, {@code rabbitmq-streams}' commands ({@code skiffmqctl}) and the Prometheus metrics.
 */
@SuppressWarnings("unchecked")
class StreamOperationsTest extends StreamProtocolTestBase {
    private static final String STREAM = "ops";
    private static final int MESSAGES = 10;

    private static HttpApiClient http;
    private static final List<AutoCloseable> clients = new ArrayList<>();

    @BeforeAll
    static void start() throws Exception {
        http = HttpApiClient.guest(broker);
        environment.streamCreator().stream(STREAM).create();
        Producer producer = environment.producerBuilder().stream(STREAM).name("ops-producer").build();
        clients.add(producer);
        assertThat(StreamClients.sendAndConfirm(producer, "m", MESSAGES)).isEmpty();
        CountDownLatch received = new CountDownLatch(MESSAGES);
        clients.add(environment.consumerBuilder().stream(STREAM).offset(OffsetSpecification.first())
            .messageHandler((context, message) -> received.countDown()).build());
        assertThat(received.await(TIMEOUT.toSeconds(), TimeUnit.SECONDS)).isTrue();
        for (int i = 0; i < 2; i++) {
            Consumer member = environment.consumerBuilder().stream(STREAM).name("grp").singleActiveConsumer()
                .offset(OffsetSpecification.first()).messageHandler((context, message) -> { }).build();
            clients.add(member);
        }
    }

    @AfterAll
    static void closeClients() throws Exception {
        for (AutoCloseable client : clients) {
            client.close();
        }
    }

    private static List<Map<String, Object>> list(String path) throws Exception {
        HttpApiClient.Answer answer = http.get(path);
        assertThat(answer.status()).as(path).isEqualTo(200);
        return answer.list();
    }

    @Test
    void theHttpApiShowsTheStreamItsConnectionsPublishersAndConsumers() throws Exception {
        String node = broker.broker().config().node();
        Map<String, Object> queue = http.get("/api/queues/%2F/" + STREAM).map();
        assertThat(queue).containsEntry("type", "stream").containsEntry("messages", MESSAGES)
            .containsEntry("committed_offset", MESSAGES - 1).containsEntry("first_offset", 0)
            .containsEntry("leader", node)
            .containsEntry("members", List.of(node));
        assertThat((Integer) queue.get("segments")).isEqualTo(1);
        assertThat((Integer) queue.get("committed_chunk_id")).as("the last chunk's first offset").isBetween(0,
            MESSAGES - 1);

        Amqp091Support.await().atMost(TIMEOUT).untilAsserted(() -> assertThat(list("/api/stream/publishers/%2F"))
            .singleElement().satisfies(p -> {
                assertThat(p).containsEntry("queue", Map.of("name", STREAM, "vhost", "/"))
                    .containsEntry("publisher_id", 0).containsEntry("reference", "ops-producer")
                    .containsEntry("published", MESSAGES).containsEntry("confirmed", MESSAGES)
                    .containsEntry("errored", 0);
                assertThat((Map<String, Object>) p.get("connection_details")).containsEntry("user", "guest")
                    .containsEntry("node", node).containsKeys("name", "peer_host", "peer_port");
            }));
        assertThat(list("/api/stream/publishers/%2F/" + STREAM)).hasSize(1);
        assertThat(http.get("/api/stream/publishers/%2F/nowhere").status()).isEqualTo(404);

        Amqp091Support.await().atMost(TIMEOUT).untilAsserted(() -> {
            List<Map<String, Object>> consumers = list("/api/stream/consumers/%2F");
            assertThat(consumers).extracting(c -> c.get("activity_status"))
                .containsExactlyInAnyOrder("up", "single_active", "waiting");
            Map<String, Object> plain = consumers.stream().filter(c -> "up".equals(c.get("activity_status")))
                .findFirst().orElseThrow();
            assertThat(plain).containsEntry("consumed", MESSAGES).containsEntry("offset", MESSAGES - 1)
                .containsEntry("offset_lag", 0).containsEntry("active", true);
            Map<String, Object> waiting = consumers.stream().filter(c -> "waiting".equals(c.get("activity_status")))
                .findFirst().orElseThrow();
            assertThat(waiting).containsEntry("active", false).containsEntry("consumed", 0);
            assertThat((Map<String, Object>) waiting.get("properties")).containsEntry("name", "grp")
                .containsEntry("single-active-consumer", "true");
        });
        assertThat(list("/api/stream/consumers")).hasSize(3);

        List<Map<String, Object>> connections = list("/api/stream/connections");
        assertThat(connections).isNotEmpty().allSatisfy(c -> {
            assertThat(c).containsEntry("protocol", "stream").containsEntry("vhost", "/")
                .containsEntry("auth_mechanism", "PLAIN").containsEntry("channel_max", 0)
                .containsEntry("ssl", false).containsEntry("connection_state", "running");
            assertThat(((Number) c.get("frame_max")).longValue()).isPositive();
            assertThat(((Number) c.get("connected_at")).longValue()).isPositive();
        });
        assertThat(connections.stream().mapToInt(c -> (Integer) c.get("subscriptions")).sum()).isEqualTo(3);
        assertThat(list("/api/stream/connections/%2F")).hasSameSizeAs(connections);
        assertThat(list("/api/connections")).filteredOn(c -> "stream".equals(c.get("protocol")))
            .hasSameSizeAs(connections);

        // one connection, and its own publishers and consumers
        String publishing = (String) ((Map<?, ?>) list("/api/stream/publishers").get(0).get("connection_details"))
            .get("name");
        String path = "/api/stream/connections/%2F/" + HttpApiClient.seg(publishing);
        assertThat(http.get(path).map()).containsEntry("name", publishing);
        assertThat(list(path + "/publishers")).extracting(p -> p.get("reference")).containsExactly("ops-producer");
        assertThat(http.get(path + "/consumers").status()).isEqualTo(200);
        assertThat(http.get("/api/stream/connections/%2F/nowhere").status()).isEqualTo(404);

        assertThat(list("/api/stream/groups/%2F/" + STREAM + "/grp")).extracting(m -> m.get("state"))
            .containsExactly("active (connected)", "waiting (connected)");
        assertThat(http.get("/api/stream/groups/%2F/" + STREAM + "/none").status()).isEqualTo(404);
        assertThat(list("/api/stream/status/%2F/" + STREAM)).singleElement().satisfies(s -> assertThat(s)
            .containsEntry("role", "writer").containsEntry("node", node).containsEntry("offset", MESSAGES - 1)
            .containsEntry("first_offset", 0).containsEntry("segments", 1));
    }

    @Test
    void rabbitmqStreamsCommandsListThemInPrettyTables() throws Exception {
        SkiffmqCtlTest.Result publishers = SkiffmqCtlTest.ctl(broker.managementPort(), "list_stream_publishers");
        assertThat(publishers.code()).as(publishers.err()).isZero();
        assertThat(publishers.lines().get(0)).isEqualTo("Listing stream publishers ...");
        assertThat(publishers.lines().get(1)).startsWith("┌").endsWith("┐");
        assertThat(cells(publishers.lines().get(2))).containsExactly("publisher_id", "stream", "reference",
            "messages_published", "messages_confirmed", "messages_errored");
        assertThat(cells(publishers.lines().get(4))).containsExactly("0", STREAM, "ops-producer", "10", "10", "0");
        assertThat(publishers.lines().get(5)).startsWith("└");

        Amqp091Support.await().atMost(TIMEOUT).untilAsserted(() -> assertThat(rows(SkiffmqCtlTest.ctl(
                broker.managementPort(), "list_stream_consumers", "stream", "messages_consumed", "activity_status")))
            .containsExactlyInAnyOrder(List.of(STREAM, "10", "up"), List.of(STREAM, "10", "single_active"),
                List.of(STREAM, "0", "waiting")));

        SkiffmqCtlTest.Result group = SkiffmqCtlTest.ctl(broker.managementPort(), "list_stream_group_consumers",
            "--stream", STREAM, "--reference", "grp", "state");
        assertThat(rows(group)).containsExactly(List.of("active (connected)"), List.of("waiting (connected)"));
        SkiffmqCtlTest.Result noGroup = SkiffmqCtlTest.ctl(broker.managementPort(), "list_stream_group_consumers",
            "--stream", STREAM, "--reference", "none");
        assertThat(noGroup.code()).isEqualTo(70);
        assertThat(noGroup.err()).contains("The group does not exist");
        assertThat(SkiffmqCtlTest.ctl(broker.managementPort(), "list_stream_group_consumers", "--stream", STREAM)
            .code()).isEqualTo(64);

        SkiffmqCtlTest.Result status = SkiffmqCtlTest.ctl(broker.managementPort(), "stream_status", STREAM);
        assertThat(status.lines().get(0)).isEqualTo("Status of stream " + STREAM + " on node "
            + broker.broker().config().node() + " ...");
        assertThat(rows(status)).singleElement().satisfies(row -> assertThat(row).startsWith("writer",
            broker.broker().config().node(), "1", "9", "9").endsWith("0", "0", "1"));
        // --tracking: the named producer's highest publishing id with its chunk, and a stored offset
        com.rabbitmq.stream.impl.Client client = new com.rabbitmq.stream.impl.Client(
            new com.rabbitmq.stream.impl.Client.ClientParameters().host("127.0.0.1").port(broker.streamPort()));
        try {
            client.storeOffset("ops-reader", STREAM, 7);
            Amqp091Support.await().atMost(TIMEOUT).until(() -> client.queryOffset("ops-reader", STREAM)
                .getOffset() == 7);
            long sequence = client.queryPublisherSequence("ops-producer", STREAM);
            SkiffmqCtlTest.Result tracking = SkiffmqCtlTest.ctl(broker.managementPort(), "stream_status", STREAM,
                "--tracking");
            assertThat(tracking.lines().get(0)).isEqualTo("Status of stream " + STREAM + " on node "
                + broker.broker().config().node() + " ...");
            assertThat(cells(tracking.lines().get(2))).containsExactly("type", "reference", "value");
            // (the group "grp" stores its offset too: the client tracks a named consumer's offset itself)
            assertThat(rows(tracking)).contains(List.of("offset", "ops-reader", "7"))
                .anySatisfy(row -> assertThat(String.join(" ", row)).matches(
                    "sequence ops-producer \\{\\d+, " + sequence + "\\}"));
        } finally {
            client.close();
        }
        broker.vhost("/").declareQueue("ops-classic", true, Map.of());
        SkiffmqCtlTest.Result classic = SkiffmqCtlTest.ctl(broker.managementPort(), "stream_status", "ops-classic");
        assertThat(classic.code()).isEqualTo(70);
        assertThat(classic.err()).contains("Cannot get stream status of a classic queue");
        broker.vhost("/").deleteQueue("ops-classic");

        SkiffmqCtlTest.Result connections = SkiffmqCtlTest.ctl(broker.managementPort(), "list_stream_connections",
            "auth_mechanism", "connection_state");
        assertThat(rows(connections)).isNotEmpty().allSatisfy(row -> assertThat(row).containsExactly("PLAIN",
            "running"));
        SkiffmqCtlTest.Result all = SkiffmqCtlTest.ctl(broker.managementPort(), "list_connections", "protocol",
            "auth_mechanism");
        assertThat(all.code()).as(all.err()).isZero();
        assertThat(all.rows("protocol\tauth_mechanism")).contains(List.of("stream", "PLAIN"));
        // rabbitmqctl lists no consumer of a stream (rabbit_amqqueue:consumers/1), the HTTP API does
        SkiffmqCtlTest.Result consumers = SkiffmqCtlTest.ctl(broker.managementPort(), "list_consumers",
            "queue_name", "consumer_tag");
        assertThat(consumers.code()).as(consumers.err()).isZero();
        assertThat(consumers.rows("queue_name\tconsumer_tag")).noneMatch(row -> row.contains(STREAM));
    }

    @Test
    void prometheusCountsTheStreamProtocolsClientsAndTheStreamsSegments() throws Exception {
        Amqp091Support.await().atMost(TIMEOUT).untilAsserted(() -> assertThat(
                PrometheusMetricsTest.scrape(broker, "/metrics"))
            .containsEntry("rabbitmq_global_publishers{protocol=stream}", 1.0)
            .containsEntry("rabbitmq_global_consumers{protocol=stream}", 3.0)
            .containsEntry("rabbitmq_global_messages_received_confirm_total{protocol=stream}", (double) MESSAGES)
            .containsEntry("rabbitmq_stream_segments{queue=" + STREAM + ",vhost=/}", 1.0));
    }

    @Test
    void theStreamProtocolsConsumersAreAmongTheConsumersAsRabbitMqListsThem() throws Exception {
        // rabbit_stream_metrics:consumer_created/10 registers each subscription with the core metrics
        Amqp091Support.await().atMost(TIMEOUT).untilAsserted(() -> assertThat(list("/api/consumers/%2F"))
            .filteredOn(c -> Map.of("name", STREAM, "vhost", "/").equals(c.get("queue"))).hasSize(3)
            .allSatisfy(c -> {
                assertThat((String) c.get("consumer_tag")).startsWith("stream.subid-");
                assertThat(c).containsEntry("ack_required", false).containsEntry("prefetch_count", 0)
                    .containsEntry("channel_details", Map.of());
            })
            .extracting(c -> c.get("activity_status")).containsExactlyInAnyOrder("up", "single_active", "waiting"));
        assertThat(list("/api/consumers")).filteredOn(c -> Map.of("name", STREAM, "vhost", "/").equals(c.get("queue")))
            .filteredOn(c -> "waiting".equals(c.get("activity_status"))).singleElement()
            .satisfies(c -> {
                assertThat(c).containsEntry("active", false);
                assertThat((Map<String, Object>) c.get("arguments")).containsEntry("single-active-consumer", "true")
                    .containsEntry("name", "grp");
            });
    }

    @Test
    void prometheusShowsTheHighestOffsetLagOfAStreamsConsumers() throws Exception {
        String lagging = "ops-lagging";
        environment.streamCreator().stream(lagging).create();
        try (Producer producer = environment.producerBuilder().stream(lagging).build()) {
            // at least two chunks (offsets 0-9): the second send waits for the first's confirms
            assertThat(StreamClients.sendAndConfirm(producer, "a", 5)).isEmpty();
            assertThat(StreamClients.sendAndConfirm(producer, "b", 5)).isEmpty();
        }
        // credit for one chunk, never given back: it stays at the first chunk's last offset, of 9
        java.util.concurrent.atomic.AtomicLong last = new java.util.concurrent.atomic.AtomicLong(-1);
        com.rabbitmq.stream.impl.Client client = new com.rabbitmq.stream.impl.Client(
            new com.rabbitmq.stream.impl.Client.ClientParameters().host("127.0.0.1").port(broker.streamPort())
                .chunkListener((c, subscription, offset, messages, size) -> {
                    last.set(offset + messages - 1);
                    return null;
                }));
        try {
            assertThat(client.subscribe((byte) 0, lagging, OffsetSpecification.first(), 1).isOk()).isTrue();
            Amqp091Support.await().atMost(TIMEOUT).until(() -> last.get() >= 0);
            assertThat(last.get()).as("a chunk before the last").isLessThan(9);
            Amqp091Support.await().atMost(TIMEOUT).untilAsserted(() -> assertThat(
                    PrometheusMetricsTest.scrape(broker, "/metrics/per-object"))
                .containsEntry("rabbitmq_stream_consumer_max_offset_lag{queue=" + lagging + ",vhost=/}",
                    (double) (9 - last.get()))
                .containsEntry("rabbitmq_stream_consumer_max_offset_lag{queue=" + STREAM + ",vhost=/}", 0.0));
        } finally {
            client.close();
            environment.deleteStream(lagging);
        }
    }

    /** The cells of a pretty table's line. */
    private static List<String> cells(String line) {
        List<String> cells = new ArrayList<>();
        for (String cell : line.substring(1, line.length() - 1).split("│")) {
            cells.add(cell.strip());
        }
        return cells;
    }

    /** A pretty table's rows below its header row (the banner, top rule, header and rule above them). */
    private static List<List<String>> rows(SkiffmqCtlTest.Result result) {
        assertThat(result.code()).as(result.err()).isZero();
        List<String> lines = result.lines();
        List<List<String>> rows = new ArrayList<>();
        for (String line : lines.subList(4, lines.size() - 1)) {
            rows.add(cells(line));
        }
        return rows;
    }
}
