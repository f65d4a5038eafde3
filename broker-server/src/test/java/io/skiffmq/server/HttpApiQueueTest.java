package io.skiffmq.server;

import static io.skiffmq.server.Amqp091Support.TIMEOUT;
import static io.skiffmq.server.Amqp091Support.await;
import static org.assertj.core.api.Assertions.assertThat;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.GetResponse;
import io.skiffmq.codec.testing.LeakDetection;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Declaring, deleting, purging and peeking at queues, declaring exchanges and binding through the HTTP API, each
 * seen from an AMQP 0-9-1 client.
 */
@ExtendWith(LeakDetection.class)
class HttpApiQueueTest {
    private static RunningBroker broker;
    private static HttpApiClient api;
    private static Connection connection;
    private static Channel channel;

    @BeforeAll
    static void start() throws Exception {
        // long enough that a loaded machine's queues answer in time, short enough for the test of a queue that does not
        broker = RunningBroker.start("management-counts-timeout=1500");
        api = HttpApiClient.guest(broker);
        connection = VirtualHostTest.factory(broker, "/", "guest", "guest").newConnection();
        channel = connection.createChannel();
        channel.confirmSelect();
    }

    @AfterAll
    static void stop() throws Exception {
        connection.close();
        broker.close();
    }

    private static void publish(String queue, String... bodies) throws Exception {
        for (String body : bodies) {
            channel.basicPublish("", queue, new AMQP.BasicProperties.Builder().contentType("text/plain")
                .headers(Map.of("h", "v")).deliveryMode(2).build(), body.getBytes(StandardCharsets.UTF_8));
        }
        channel.waitForConfirmsOrDie(5_000);
    }

    private static int ready(String queue) throws Exception {
        return ((Number) api.get("/api/queues/%2F/" + queue).map().get("messages_ready")).intValue();
    }

    /** A page sorted by name is chosen by name before the queues are read: the same answer as sorting them all. */
    @Test
    @SuppressWarnings("unchecked")
    void pagesOfQueuesByNameAndByCount() throws Exception {
        for (String name : List.of("paged-c", "paged-a", "paged-b")) {
            channel.queueDeclare(name, false, false, true, null);
        }
        publish("paged-c", "one", "two");
        Map<String, Object> page = api.get("/api/queues/%2F?page=2&page_size=1&name=paged-").map();
        assertThat(page).containsEntry("filtered_count", 3).containsEntry("item_count", 1).containsEntry("page", 2)
            .containsEntry("page_count", 3).containsEntry("page_size", 1);
        assertThat((List<Map<String, Object>>) page.get("items")).singleElement()
            .satisfies(q -> assertThat(q).containsEntry("name", "paged-b").containsEntry("messages", 0));
        Map<String, Object> reversed = api.get("/api/queues/%2F?page=1&page_size=2&name=paged-&sort=name"
            + "&sort_reverse=true&columns=name,messages").map();
        assertThat((List<Map<String, Object>>) reversed.get("items")).containsExactly(
            Map.of("name", "paged-c", "messages", 2), Map.of("name", "paged-b", "messages", 0));
        Map<String, Object> byCount = api.get("/api/queues/%2F?page=1&page_size=1&name=paged-&sort=messages"
            + "&sort_reverse=true").map();
        assertThat((List<Map<String, Object>>) byCount.get("items")).singleElement()
            .satisfies(q -> assertThat(q).containsEntry("name", "paged-c"));
        assertThat(api.get("/api/queues/%2F?page=4&page_size=1&name=paged-").status()).isEqualTo(400);
        for (String name : List.of("paged-c", "paged-a", "paged-b")) {
            channel.queueDelete(name);
        }
    }

    /**
     * A queue whose thread does not answer in time (behind 100,000 count tasks or a full GC at 100,000 queues, where
     * a listing answered 500) is listed with its gauges, and so is the overview's total: one late queue does not fail
     * the whole answer.
     */
    @Test
    @SuppressWarnings("unchecked")
    void aQueueTooBusyToCountIsListedWithItsGauges() throws Exception {
        String name = Amqp091Support.unique("busy");
        channel.queueDeclare(name, false, false, true, null);
        publish(name, "one", "two");
        io.skiffmq.core.queue.Queue queue = broker.vhost("/").queue(name);
        java.util.concurrent.CountDownLatch blocked = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
        queue.executor().execute(() -> {
            blocked.countDown();
            try {
                release.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        try {
            assertThat(blocked.await(5, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
            HttpApiClient.Answer list = api.get("/api/queues/%2F");
            assertThat(list.status()).isEqualTo(200);
            assertThat(list.list()).filteredOn(q -> name.equals(q.get("name"))).singleElement()
                .satisfies(q -> assertThat(q).containsEntry("messages_ready", 2));
            Map<String, Object> totals = (Map<String, Object>) api.get("/api/overview").map().get("queue_totals");
            assertThat(((Number) totals.get("messages_ready")).intValue()).isGreaterThanOrEqualTo(2);
        } finally {
            release.countDown();
        }
        assertThat(ready(name)).isEqualTo(2);
        channel.queueDelete(name);
    }

    @Test
    void declareAndDeleteAQueue() throws Exception {
        assertThat(api.put("/api/queues/%2F/made", Map.of("durable", true, "arguments",
            Map.of("x-max-length", 3))).status()).isEqualTo(201);
        assertThat(api.put("/api/queues/%2F/made", Map.of("durable", true, "arguments",
            Map.of("x-max-length", 3))).status()).isEqualTo(204);
        AMQP.Queue.DeclareOk ok = channel.queueDeclarePassive("made");
        assertThat(ok.getQueue()).isEqualTo("made");
        HttpApiClient.Answer different = api.put("/api/queues/%2F/made", Map.of("durable", false));
        assertThat(different.status()).isEqualTo(400);
        assertThat(different.map()).containsKeys("error", "reason");
        assertThat(api.put("/api/queues/%2F/bad", Map.of("colour", "red")).status()).isEqualTo(400);
        assertThat(api.put("/api/queues/%2F/bad", "{not json").status()).isEqualTo(400);

        publish("made", "x");
        assertThat(api.delete("/api/queues/%2F/made?if-empty=true").status()).isEqualTo(400);
        assertThat(api.delete("/api/queues/%2F/made").status()).isEqualTo(204);
        assertThat(api.get("/api/queues/%2F/made").status()).isEqualTo(404);
        assertThat(api.delete("/api/queues/%2F/made").status()).isEqualTo(404);
    }

    @Test
    @SuppressWarnings("unchecked")
    void quorumQueuesAreDeclaredImportedAndShownWithTheirLeaderAndPolicy() throws Exception {
        assertThat(api.put("/api/queues/%2F/api-qq", Map.of("durable", true, "arguments",
            Map.of("x-queue-type", "quorum"))).status()).isEqualTo(201);
        Map<String, Object> shown = api.get("/api/queues/%2F/api-qq").map();
        assertThat(shown).containsEntry("type", "quorum").containsEntry("durable", true);
        assertThat(shown.get("members")).isEqualTo(List.of(shown.get("leader")));
        assertThat(shown.get("online")).isEqualTo(List.of(shown.get("node")));
        HttpApiClient.Answer nonDurable = api.put("/api/queues/%2F/api-qq-nd", Map.of("durable", false,
            "arguments", Map.of("x-queue-type", "quorum")));
        assertThat(nonDurable.status()).isEqualTo(400);
        assertThat(nonDurable.map().get("reason")).asString()
            .contains("invalid property 'non-durable' for queue 'api-qq-nd' in vhost '/'");

        assertThat(api.post("/api/definitions", Map.of("queues", List.of(Map.of("name", "imported-qq", "vhost", "/",
            "durable", true, "auto_delete", false, "arguments", Map.of("x-queue-type", "quorum",
                "x-delivery-limit", 5)))))
            .status()).isEqualTo(204);
        assertThat(api.get("/api/queues/%2F/imported-qq").map()).containsEntry("type", "quorum");
        List<Map<String, Object>> exported = (List<Map<String, Object>>) api.get("/api/definitions").map()
            .get("queues");
        assertThat(exported).anySatisfy(q -> assertThat(q).containsEntry("name", "imported-qq")
            .containsEntry("arguments", Map.of("x-queue-type", "quorum", "x-delivery-limit", 5)));

        // a policy for quorum queues applies to them, not to classic ones
        assertThat(api.put("/api/policies/%2F/qq-only", Map.of("pattern", "qq$", "apply-to", "quorum_queues",
            "definition", Map.of("delivery-limit", 1))).status()).isEqualTo(201);
        assertThat(api.put("/api/queues/%2F/classic-qq", Map.of("durable", true)).status()).isEqualTo(201);
        Amqp091Support.await().atMost(Amqp091Support.TIMEOUT)
            .until(() -> "qq-only".equals(api.get("/api/queues/%2F/api-qq").map().get("policy")));
        assertThat(api.get("/api/queues/%2F/classic-qq").map().get("policy")).isNull();
        assertThat(api.delete("/api/policies/%2F/qq-only").status()).isEqualTo(204);
        for (String q : List.of("api-qq", "imported-qq", "classic-qq")) {
            assertThat(api.delete("/api/queues/%2F/" + q).status()).isEqualTo(204);
        }
    }

    @Test
    void aLeaderLocatorIsCheckedAndShownAsDeclared() throws Exception {
        assertThat(api.put("/api/queues/%2F/least-leaders", Map.of("durable", false, "arguments",
            Map.of("x-queue-leader-locator", "least-leaders"))).status()).isEqualTo(201);
        assertThat(api.get("/api/queues/%2F/least-leaders").map().get("arguments"))
            .isEqualTo(Map.of("x-queue-leader-locator", "least-leaders"));
        HttpApiClient.Answer refused = api.put("/api/queues/%2F/nearest", Map.of("durable", false, "arguments",
            Map.of("x-queue-leader-locator", "nearest")));
        assertThat(refused.status()).isEqualTo(400);
        assertThat(refused.map().get("reason")).asString().contains("invalid_queue_locator_arg");
        assertThat(api.delete("/api/queues/%2F/least-leaders").status()).isEqualTo(204);
    }

    @Test
    void unacknowledgedDeliveriesAreCounted() throws Exception {
        channel.queueDeclare("held", false, false, false, null);
        publish("held", "a", "b", "c");
        try (Connection other = VirtualHostTest.factory(broker, "/", "guest", "guest").newConnection()) {
            Channel consumer = other.createChannel();
            consumer.basicQos(2);
            consumer.basicConsume("held", false, new com.rabbitmq.client.DefaultConsumer(consumer));
            await().atMost(TIMEOUT).until(() -> ((Number) api.get("/api/queues/%2F/held").map()
                .get("messages_unacknowledged")).intValue() == 2);
            assertThat(api.get("/api/queues/%2F/held").map()).containsEntry("messages", 3)
                .containsEntry("messages_ready", 1).containsEntry("consumers", 1);
            @SuppressWarnings("unchecked")
            Map<String, Object> totals = (Map<String, Object>) api.get("/api/overview").map().get("queue_totals");
            assertThat(((Number) totals.get("messages_unacknowledged")).intValue()).isGreaterThanOrEqualTo(2);
        }
        await().atMost(TIMEOUT).until(() -> ready("held") == 3);
    }

    @Test
    void publishThroughAnExchange() throws Exception {
        channel.queueDeclare("published", true, false, false, null);
        Map<String, Object> message = Map.of("routing_key", "published", "payload", "hello", "payload_encoding",
            "string", "properties", Map.of("content_type", "text/plain", "delivery_mode", 2,
                "headers", Map.of("k", "v"), "message_id", "m-1"));
        HttpApiClient.Answer answer = api.post("/api/exchanges/%2F/amq.default/publish", message);
        assertThat(answer.status()).isEqualTo(200);
        assertThat(answer.map()).isEqualTo(Map.of("routed", true));
        GetResponse got = channel.basicGet("published", true);
        assertThat(new String(got.getBody(), StandardCharsets.UTF_8)).isEqualTo("hello");
        assertThat(got.getProps().getContentType()).isEqualTo("text/plain");
        assertThat(got.getProps().getDeliveryMode()).isEqualTo(2);
        assertThat(got.getProps().getMessageId()).isEqualTo("m-1");
        assertThat(got.getProps().getHeaders().get("k").toString()).isEqualTo("v");

        assertThat(api.post("/api/exchanges/%2F/amq.direct/publish", Map.of("routing_key", "nowhere",
            "payload", "aGk=", "payload_encoding", "base64", "properties", Map.of())).map())
            .isEqualTo(Map.of("routed", false));
        assertThat(api.post("/api/exchanges/%2F/amq.direct/publish", Map.of("routing_key", "x",
            "payload", "hi", "payload_encoding", "rot13", "properties", Map.of())).status()).isEqualTo(400);
        assertThat(api.post("/api/exchanges/%2F/amq.direct/publish", Map.of("routing_key", "x",
            "payload", "hi", "payload_encoding", "string", "properties", Map.of("user_id", "mallory")))
            .status()).isEqualTo(400);
        assertThat(api.post("/api/exchanges/%2F/missing/publish", message).status()).isEqualTo(404);

        channel.queueDeclare("full", false, false, false, Map.of("x-max-length", 1, "x-overflow",
            "reject-publish"));
        Map<String, Object> toFull = Map.of("routing_key", "full", "payload", "x", "payload_encoding", "string",
            "properties", Map.of());
        assertThat(api.post("/api/exchanges/%2F/amq.default/publish", toFull).map()).containsEntry("routed", true);
        HttpApiClient.Answer rejected = api.post("/api/exchanges/%2F/amq.default/publish", toFull);
        assertThat(rejected.status()).isEqualTo(400);
        assertThat(rejected.map()).containsEntry("reason", "Unable to publish message. Check queue limits.");
    }

    @Test
    void purgeEmptiesTheQueue() throws Exception {
        channel.queueDeclare("to-purge", false, false, false, null);
        publish("to-purge", "a", "b", "c");
        await().atMost(TIMEOUT).until(() -> ready("to-purge") == 3);
        assertThat(api.delete("/api/queues/%2F/to-purge/contents").status()).isEqualTo(204);
        assertThat(ready("to-purge")).isZero();
        assertThat(channel.basicGet("to-purge", true)).isNull();
    }

    @Test
    void getWithRequeueLeavesTheMessagesRedelivered() throws Exception {
        channel.queueDeclare("to-peek", false, false, false, null);
        publish("to-peek", "first", "second", "third");
        HttpApiClient.Answer answer = api.post("/api/queues/%2F/to-peek/get", Map.of("count", 2,
            "ackmode", "ack_requeue_true", "encoding", "auto", "truncate", 50000));
        assertThat(answer.status()).isEqualTo(200);
        List<Map<String, Object>> messages = answer.list();
        assertThat(messages).extracting(m -> m.get("payload")).containsExactly("first", "second");
        Map<String, Object> first = messages.get(0);
        assertThat(first.keySet()).containsExactlyInAnyOrder("payload_bytes", "redelivered", "exchange",
            "routing_key", "message_count", "properties", "payload", "payload_encoding");
        assertThat(first).containsEntry("payload_bytes", 5).containsEntry("redelivered", false)
            .containsEntry("exchange", "").containsEntry("routing_key", "to-peek")
            .containsEntry("message_count", 2).containsEntry("payload_encoding", "string")
            .containsEntry("properties", Map.of("content_type", "text/plain", "delivery_mode", 2,
                "headers", Map.of("h", "v")));
        assertThat(ready("to-peek")).isEqualTo(3);

        GetResponse again = channel.basicGet("to-peek", true);
        assertThat(new String(again.getBody(), StandardCharsets.UTF_8)).isEqualTo("first");
        assertThat(again.getEnvelope().isRedeliver()).isTrue();
    }

    @Test
    void getWithoutRequeueTakesTheMessages() throws Exception {
        channel.queueDeclare("to-take", false, false, false, null);
        publish("to-take", "one", "two");
        List<Map<String, Object>> taken = api.post("/api/queues/%2F/to-take/get", Map.of("count", 5,
            "ackmode", "ack_requeue_false", "encoding", "base64")).list();
        assertThat(taken).extracting(m -> m.get("payload")).containsExactly("b25l", "dHdv");
        assertThat(taken).extracting(m -> m.get("payload_encoding")).containsOnly("base64");
        assertThat(ready("to-take")).isZero();
        assertThat(api.post("/api/queues/%2F/to-take/get", Map.of("count", 1, "ackmode", "ack_requeue_false",
            "encoding", "auto")).list()).isEmpty();
        assertThat(api.post("/api/queues/%2F/to-take/get", Map.of("count", 1, "ackmode", "sideways",
            "encoding", "auto")).status()).isEqualTo(400);
    }

    @Test
    void exchangesAndBindingsThroughTheApi() throws Exception {
        channel.queueDeclare("bound", false, false, false, null);
        assertThat(api.put("/api/exchanges/%2F/api.x", Map.of("type", "direct", "durable", false)).status())
            .isEqualTo(201);
        assertThat(api.put("/api/exchanges/%2F/api.x", Map.of("type", "direct", "durable", false)).status())
            .isEqualTo(204);
        assertThat(api.put("/api/exchanges/%2F/api.bad", Map.of("type", "sideways")).status()).isEqualTo(400);
        HttpApiClient.Answer created = api.post("/api/bindings/%2F/e/api.x/q/bound", Map.of("routing_key", "rk"));
        assertThat(created.status()).isEqualTo(201);
        assertThat(created.raw().headers().firstValue("location")).hasValue("rk");

        channel.basicPublish("api.x", "rk", null, "routed".getBytes(StandardCharsets.UTF_8));
        channel.waitForConfirmsOrDie(5_000);
        await().atMost(TIMEOUT).until(() -> ready("bound") == 1);

        assertThat(api.get("/api/bindings/%2F/e/api.x/q/bound/rk").map()).containsEntry("destination", "bound");
        assertThat(api.delete("/api/bindings/%2F/e/api.x/q/bound/rk").status()).isEqualTo(204);
        assertThat(api.get("/api/bindings/%2F/e/api.x/q/bound").list()).isEmpty();
        assertThat(api.delete("/api/exchanges/%2F/api.x").status()).isEqualTo(204);
        assertThat(api.get("/api/exchanges/%2F/api.x").status()).isEqualTo(404);
        assertThat(api.delete("/api/exchanges/%2F/amq.default").status()).isEqualTo(403);
    }
}
