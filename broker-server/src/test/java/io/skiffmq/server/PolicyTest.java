package io.skiffmq.server;

import static io.skiffmq.server.Amqp091Support.TIMEOUT;
import static io.skiffmq.server.Amqp091Support.await;
import static io.skiffmq.server.Amqp091Support.bytes;
import static io.skiffmq.server.Amqp091Support.drain;
import static io.skiffmq.server.Amqp091Support.passive;
import static io.skiffmq.server.Amqp091Support.sendToQueue;
import static io.skiffmq.server.Amqp091Support.unique;
import static org.assertj.core.api.Assertions.assertThat;

import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import com.rabbitmq.client.GetResponse;
import io.skiffmq.codec.testing.LeakDetection;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Policies and operator policies on live queues and exchanges, over the HTTP API, observed with the RabbitMQ Java
 * client: every key set, changed and cleared without a redeclaration, RabbitMQ's precedence between a policy and a
 * queue argument, the operator policy merged over the user policy, and the API's codes. The broker runs on a manual
 * clock, so TTLs and expiry are stepped, not waited for.
 */
@ExtendWith(LeakDetection.class)
class PolicyTest {
    private static TestTime time;
    private static RunningBroker broker;
    private static HttpApiClient http;
    private static Connection connection;

    @BeforeAll
    static void start() throws Exception {
        time = TestTime.onManualClock();
        broker = RunningBroker.start(time.clock());
        http = HttpApiClient.guest(broker);
        ConnectionFactory factory = new ConnectionFactory();
        factory.setPort(broker.port());
        connection = factory.newConnection();
    }

    @AfterAll
    static void stop() throws Exception {
        connection.close();
        broker.close();
    }

    private static int setPolicy(String name, String pattern, Map<String, Object> definition, Object... more)
            throws Exception {
        return put("/api/policies/%2F/" + name, pattern, definition, more);
    }

    private static int setOperatorPolicy(String name, String pattern, Map<String, Object> definition)
            throws Exception {
        return put("/api/operator-policies/%2F/" + name, pattern, definition);
    }

    private static int put(String path, String pattern, Map<String, Object> definition, Object... more)
            throws Exception {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("pattern", pattern);
        body.put("definition", definition);
        for (int i = 0; i < more.length; i += 2) {
            body.put((String) more[i], more[i + 1]);
        }
        return http.put(path, body).status();
    }

    private static void clearPolicy(String name) throws Exception {
        assertThat(http.delete("/api/policies/%2F/" + name).status()).isEqualTo(204);
    }

    private static String declare(String prefix, Map<String, Object> arguments) throws Exception {
        String queue = unique(prefix);
        try (Channel channel = connection.createChannel()) {
            channel.queueDeclare(queue, true, false, false, arguments);
        }
        return queue;
    }

    private static int ready(String queue) throws Exception {
        return passive(connection, queue).getMessageCount();
    }

    private static Map<String, Object> shown(String queue) throws Exception {
        return http.get("/api/queues/%2F/" + queue).map();
    }

    @Test
    void maxLengthSetChangedAndClearedOnALiveQueue() throws Exception {
        String queue = declare("len", Map.of());
        sendToQueue(connection, queue, "m1", "m2", "m3", "m4", "m5");
        assertThat(setPolicy(queue, "^" + queue + "$", Map.of("max-length", 3))).isEqualTo(201);
        assertThat(ready(queue)).as("drop-head drops the oldest at once").isEqualTo(3);
        assertThat(shown(queue)).containsEntry("policy", queue).containsEntry("operator_policy", null)
            .containsEntry("effective_policy_definition", Map.of("max-length", 3));

        assertThat(setPolicy(queue, "^" + queue + "$", Map.of("max-length", 2))).isEqualTo(204);
        assertThat(ready(queue)).isEqualTo(2);
        clearPolicy(queue);
        sendToQueue(connection, queue, "m6", "m7", "m8");
        assertThat(ready(queue)).isEqualTo(5);
        assertThat(shown(queue)).containsEntry("policy", null).containsEntry("effective_policy_definition", Map.of());
        try (Channel channel = connection.createChannel()) {
            assertThat(drain(channel, queue)).containsExactly("m4", "m5", "m6", "m7", "m8");
        }
    }

    @Test
    void maxLengthBytesAndOverflow() throws Exception {
        String queue = declare("bytes", Map.of());
        setPolicy(queue, "^" + queue + "$", Map.of("max-length-bytes", 8, "overflow", "reject-publish"));
        sendToQueue(connection, queue, "aaaa", "bbbb");
        try (Channel channel = connection.createChannel()) {
            channel.confirmSelect();
            channel.basicPublish("", queue, null, bytes("cccc"));
            assertThat(channel.waitForConfirms(TIMEOUT.toMillis())).as("refused: over max-length-bytes").isFalse();
        }
        setPolicy(queue, "^" + queue + "$", Map.of("max-length-bytes", 8));
        sendToQueue(connection, queue, "dddd");
        try (Channel channel = connection.createChannel()) {
            assertThat(drain(channel, queue)).as("drop-head again").containsExactly("bbbb", "dddd");
        }
        clearPolicy(queue);
        sendToQueue(connection, queue, "eeee", "ffff", "gggg");
        assertThat(ready(queue)).as("no byte limit").isEqualTo(3);
    }

    @Test
    void messageTtlAppliesToArrivalsFromTheChange() throws Exception {
        String queue = declare("ttl", Map.of());
        sendToQueue(connection, queue, "before");
        setPolicy(queue, "^" + queue + "$", Map.of("message-ttl", 1_000));
        sendToQueue(connection, queue, "during");
        time.advance(1_001);
        try (Channel channel = connection.createChannel()) {
            assertThat(drain(channel, queue)).as("a waiting message keeps its expiry, as in RabbitMQ")
                .containsExactly("before");
        }
        clearPolicy(queue);
        sendToQueue(connection, queue, "after");
        time.advance(1_001);
        assertThat(ready(queue)).isEqualTo(1);
    }

    @Test
    void expiresDeletesTheUnusedQueueAndClearingItKeepsIt() throws Exception {
        String kept = declare("kept", Map.of());
        String expiring = declare("expiring", Map.of());
        setPolicy("expiry-" + kept, "^(" + kept + "|" + expiring + ")$", Map.of("expires", 5_000));
        clearPolicy("expiry-" + kept);
        setPolicy("expiry-" + expiring, "^" + expiring + "$", Map.of("expires", 5_000));
        // the queues take their policies on their own threads: a task behind them there says they have
        broker.vhost("/").queue(kept).counts().get(TIMEOUT.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS);
        broker.vhost("/").queue(expiring).counts().get(TIMEOUT.toMillis(),
            java.util.concurrent.TimeUnit.MILLISECONDS);
        time.advance(5_001);
        await().atMost(TIMEOUT).until(() -> broker.vhost("/").queue(expiring) == null);
        assertThat(broker.vhost("/").queue(kept)).isNotNull();
    }

    @Test
    void deadLetterExchangeAndRoutingKey() throws Exception {
        String queue = declare("dl-src", Map.of());
        String dlq = declare("dl-target", Map.of());
        String other = declare("dl-other", Map.of());
        try (Channel channel = connection.createChannel()) {
            channel.exchangeDeclare("dlx-" + queue, "direct");
            channel.queueBind(dlq, "dlx-" + queue, "dead");
            channel.queueBind(other, "dlx-" + queue, "other");
        }
        setPolicy(queue, "^" + queue + "$", Map.of("dead-letter-exchange", "dlx-" + queue,
            "dead-letter-routing-key", "dead"));
        sendToQueue(connection, queue, "one");
        reject(queue);
        assertThat(ready(dlq)).isEqualTo(1);

        setPolicy(queue, "^" + queue + "$", Map.of("dead-letter-exchange", "dlx-" + queue,
            "dead-letter-routing-key", "other"));
        sendToQueue(connection, queue, "two");
        reject(queue);
        assertThat(ready(other)).isEqualTo(1);

        clearPolicy(queue);
        sendToQueue(connection, queue, "three");
        reject(queue);
        assertThat(ready(dlq) + ready(other)).as("dropped: no dead-letter exchange now").isEqualTo(2);
    }

    /**
     * Rejects the queue's next message, and waits until the queue has taken the reject (which has no answer): what
     * it dead-letters is then on its way to its targets, ahead of a count asked of them afterwards.
     */
    private static void reject(String queue) throws Exception {
        try (Channel channel = connection.createChannel()) {
            GetResponse got = channel.basicGet(queue, false);
            channel.basicReject(got.getEnvelope().getDeliveryTag(), false);
        }
        await().atMost(TIMEOUT).until(() -> broker.vhost("/").queue(queue).counts().get().unacknowledged() == 0);
    }

    @Test
    void deliveryLimitAppliesToOurClassicQueues() throws Exception {
        String queue = declare("limit", Map.of());
        String dlq = declare("limit-dlq", Map.of());
        setPolicy(queue, "^" + queue + "$", Map.of("delivery-limit", 1, "dead-letter-exchange", "",
            "dead-letter-routing-key", dlq));
        sendToQueue(connection, queue, "poison");
        try (Channel channel = connection.createChannel()) {
            for (int i = 0; i < 2; i++) {
                GetResponse got = channel.basicGet(queue, false);
                channel.basicNack(got.getEnvelope().getDeliveryTag(), false, true);
            }
        }
        assertThat(ready(queue)).isZero();
        assertThat(ready(dlq)).isEqualTo(1);

        clearPolicy(queue); // no limit now: a message comes back however often it is refused
        sendToQueue(connection, queue, "kept");
        try (Channel channel = connection.createChannel()) {
            for (int i = 0; i < 3; i++) {
                GetResponse got = channel.basicGet(queue, false);
                channel.basicNack(got.getEnvelope().getDeliveryTag(), false, true);
            }
        }
        await().atMost(TIMEOUT).untilAsserted(() -> assertThat(ready(queue)).isEqualTo(1));
        assertThat(ready(dlq)).isEqualTo(1);
    }

    @Test
    void alternateExchangeOnALiveExchange() throws Exception {
        String source = unique("ae-src");
        String ae = declare("ae-q", Map.of());
        try (Channel channel = connection.createChannel()) {
            channel.exchangeDeclare(source, "direct");
            channel.exchangeDeclare("ae-" + source, "fanout");
            channel.queueBind(ae, "ae-" + source, "");
        }
        setPolicy(source, "^" + source + "$", Map.of("alternate-exchange", "ae-" + source), "apply-to",
            "exchanges");
        assertThat(http.get("/api/exchanges/%2F/" + source).map()).containsEntry("policy", source);
        Amqp091Support.publishConfirmed(connection, source, "nowhere", null, "unroutable");
        assertThat(ready(ae)).isEqualTo(1);
        clearPolicy(source);
        Amqp091Support.publishConfirmed(connection, source, "nowhere", null, "dropped");
        assertThat(ready(ae)).isEqualTo(1);
        assertThat(http.get("/api/exchanges/%2F/" + source).map()).doesNotContainKey("policy");
        try (Channel channel = connection.createChannel()) {
            channel.exchangeDeclare(source, "direct"); // the policy is no part of the declaration
        }
    }

    @Test
    void anExchangesAlternateExchangeArgumentWinsOverItsPolicys() throws Exception {
        String source = unique("ae-arg");
        String byArgument = declare("ae-by-arg", Map.of());
        String byPolicy = declare("ae-by-policy", Map.of());
        try (Channel channel = connection.createChannel()) {
            channel.exchangeDeclare("arg-" + source, "fanout");
            channel.exchangeDeclare("pol-" + source, "fanout");
            channel.queueBind(byArgument, "arg-" + source, "");
            channel.queueBind(byPolicy, "pol-" + source, "");
            channel.exchangeDeclare(source, "direct", true, false, Map.of("alternate-exchange", "arg-" + source));
        }
        setPolicy(source, "^" + source + "$", Map.of("alternate-exchange", "pol-" + source), "apply-to",
            "exchanges");
        assertThat(http.get("/api/exchanges/%2F/" + source).map()).containsEntry("policy", source);
        Amqp091Support.publishConfirmed(connection, source, "nowhere", null, "unroutable");
        assertThat(ready(byArgument)).isEqualTo(1);
        assertThat(ready(byPolicy)).isZero();
        clearPolicy(source);
    }

    @Test
    void quorumKeysWithoutAnEffectOnOneNodeAreShownChangedAndClearedOnALiveQueue() throws Exception {
        String queue = declare("qq-keys", Map.of("x-queue-type", "quorum"));
        setPolicy(queue, "^" + queue + "$", Map.of("dead-letter-strategy", "at-least-once", "overflow",
            "reject-publish", "queue-leader-locator", "balanced"), "apply-to", "quorum_queues");
        assertThat(shown(queue)).containsEntry("policy", queue).containsEntry("effective_policy_definition",
            Map.of("dead-letter-strategy", "at-least-once", "overflow", "reject-publish", "queue-leader-locator",
                "balanced"));
        setPolicy(queue, "^" + queue + "$", Map.of("dead-letter-strategy", "at-most-once", "queue-leader-locator",
            "client-local"), "apply-to", "quorum_queues");
        assertThat(shown(queue)).containsEntry("effective_policy_definition", Map.of("dead-letter-strategy",
            "at-most-once", "queue-leader-locator", "client-local"));
        clearPolicy(queue);
        assertThat(shown(queue)).containsEntry("policy", null).containsEntry("effective_policy_definition", Map.of());
    }

    @Test
    void theSmallerValueWinsForLimitsAndTheArgumentForOverflowAndDeadLettering() throws Exception {
        String queue = declare("precedence", Map.of("x-max-length", 2, "x-overflow", "reject-publish",
            "x-dead-letter-exchange", "amq.fanout"));
        setPolicy(queue, "^" + queue + "$", Map.of("max-length", 5, "overflow", "drop-head",
            "dead-letter-exchange", "nowhere"));
        sendToQueue(connection, queue, "a", "b");
        try (Channel channel = connection.createChannel()) {
            channel.confirmSelect();
            channel.basicPublish("", queue, null, bytes("c"));
            assertThat(channel.waitForConfirms(TIMEOUT.toMillis())).as("x-max-length 2 and x-overflow win")
                .isFalse();
        }
        setPolicy(queue, "^" + queue + "$", Map.of("max-length", 1));
        assertThat(ready(queue)).as("reject-publish keeps what it took").isEqualTo(2);
        try (Channel channel = connection.createChannel()) {
            channel.confirmSelect();
            channel.basicPublish("", queue, null, bytes("d"));
            assertThat(channel.waitForConfirms(TIMEOUT.toMillis())).isFalse();
        }
    }

    @Test
    void theHighestPriorityPolicyAppliesWhole() throws Exception {
        String queue = declare("prio", Map.of());
        setPolicy("low-" + queue, "^" + queue, Map.of("max-length", 1, "message-ttl", 60_000), "priority", 1);
        setPolicy("high-" + queue, queue, Map.of("max-length", 4), "priority", 2);
        assertThat(shown(queue)).containsEntry("policy", "high-" + queue)
            .containsEntry("effective_policy_definition", Map.of("max-length", 4));
        sendToQueue(connection, queue, "1", "2", "3", "4", "5");
        assertThat(ready(queue)).isEqualTo(4);
        setPolicy("high-" + queue, queue, Map.of("max-length", 4), "apply-to", "streams", "priority", 2);
        assertThat(shown(queue)).as("not for classic queues: the next one applies")
            .containsEntry("policy", "low-" + queue);
        assertThat(ready(queue)).isEqualTo(1);
        setPolicy("stream-" + queue, queue, Map.of("max-age", "1D"), "priority", 9);
        assertThat(shown(queue)).as("skipped: classic queues take no max-age")
            .containsEntry("policy", "low-" + queue);
    }

    @Test
    void anOperatorPolicyIsMergedKeyByKey() throws Exception {
        String queue = declare("op", Map.of());
        setPolicy(queue, "^" + queue + "$", Map.of("max-length", 10, "message-ttl", 5_000, "expires", 600_000));
        assertThat(setOperatorPolicy("cap-" + queue, "^" + queue + "$", Map.of("max-length", 3,
            "expires", 900_000, "delivery-limit", 7))).isEqualTo(201);
        assertThat(shown(queue)).containsEntry("policy", queue).containsEntry("operator_policy", "cap-" + queue)
            .containsEntry("effective_policy_definition", Map.of("max-length", 3, "message-ttl", 5_000,
                "expires", 600_000, "delivery-limit", 7));
        sendToQueue(connection, queue, "1", "2", "3", "4");
        assertThat(ready(queue)).isEqualTo(3);
        clearPolicy(queue);
        assertThat(shown(queue)).containsEntry("policy", null)
            .containsEntry("effective_policy_definition", Map.of("max-length", 3, "expires", 900_000,
                "delivery-limit", 7));
        assertThat(http.delete("/api/operator-policies/%2F/cap-" + queue).status()).isEqualTo(204);
        assertThat(shown(queue)).containsEntry("effective_policy_definition", Map.of());
    }

    @Test
    void theApiAnswersAsRabbitMqs() throws Exception {
        assertThat(setPolicy("codes", "^codes$", Map.of("max-length", 1))).isEqualTo(201);
        assertThat(setPolicy("codes", "^codes$", Map.of("max-length", 2))).isEqualTo(204);
        assertThat(http.get("/api/policies/%2F/codes").map()).isEqualTo(Map.of("vhost", "/", "name", "codes",
            "pattern", "^codes$", "apply-to", "all", "definition", Map.of("max-length", 2), "priority", 0));
        assertThat(http.get("/api/policies/%2F").list()).extracting(p -> p.get("name")).contains("codes");
        HttpApiClient.Answer stringPriority = http.put("/api/policies/%2F/codes", Map.of("pattern", "^q",
            "definition", Map.of("max-length", 1), "priority", "1"));
        assertThat(stringPriority.status()).isEqualTo(400);
        assertThat(stringPriority.map()).containsEntry("reason",
            "Validation failed\n\npriority should be a number, actually was &lt;&lt;\"1\"&gt;&gt;\n");
        assertThat(http.put("/api/policies/%2F/codes", Map.of("pattern", "^q", "definition", Map.of("foo", 5)))
            .map()).containsEntry("reason",
                "Validation failed\n\n[{&lt;&lt;\"foo\"&gt;&gt;,5}] are not recognised policy settings\n");
        assertThat(http.put("/api/policies/%2F/codes", Map.of("pattern", "^q", "definition",
            Map.of("max-length", "x"))).map()).containsEntry("reason",
                "Validation failed\n\n&lt;&lt;\"x\"&gt;&gt; is not a valid maximum length\n");
        assertThat(http.put("/api/policies/%2F/codes", Map.of("pattern", "^q", "definition", Map.of())).map())
            .containsEntry("reason", "Validation failed\n\nno policy provided\n");
        assertThat(http.put("/api/policies/%2F/codes", Map.of("definition", Map.of("max-length", 1))).map())
            .containsEntry("reason", "[{key_missing,pattern}]");
        HttpApiClient.Answer opKey = http.put("/api/operator-policies/%2F/o", Map.of("pattern", "^q",
            "definition", Map.of("dead-letter-exchange", "x")));
        assertThat(opKey.status()).isEqualTo(400);
        assertThat(opKey.map()).containsEntry("reason", "Validation failed\n\n[{<<\"dead-letter-exchange\">>,"
            + "<<\"x\">>}] are not recognised policy settings\n");
        assertThat(http.put("/api/policies/nowhere/p", Map.of("pattern", "^q", "definition",
            Map.of("max-length", 1))).map()).isEqualTo(Map.of("error", "not_found", "reason", "vhost_not_found"));
        assertThat(http.get("/api/policies/%2F/codes").status()).isEqualTo(200);
        clearPolicy("codes");
        assertThat(http.delete("/api/policies/%2F/codes").status()).isEqualTo(404);
        assertThat(http.get("/api/policies/%2F/codes").status()).isEqualTo(404);
        assertThat(http.delete("/api/operator-policies/%2F/codes").status()).isEqualTo(404);
    }

    @Test
    void aStreamsRetentionComesFromItsPolicy() throws Exception {
        String stream = declare("stream", Map.of("x-queue-type", "stream"));
        setPolicy(stream, "^" + stream + "$", Map.of("stream-max-segment-size-bytes", 2_000,
            "max-length-bytes", 6_000, "max-age", "7D"), "apply-to", "streams");
        assertThat(shown(stream)).containsEntry("policy", stream);
        try (Channel channel = connection.createChannel()) {
            channel.confirmSelect();
            for (int i = 0; i < 200; i++) {
                channel.basicPublish("", stream, null, new byte[100]);
                channel.waitForConfirmsOrDie(TIMEOUT.toMillis()); // a chunk each
            }
        }
        await().atMost(TIMEOUT).untilAsserted(() -> assertThat(((Number) shown(stream).get("first_offset"))
            .longValue()).as("segments of 2,000 bytes, 6,000 kept").isGreaterThan(100));
        clearPolicy(stream);
        assertThat(shown(stream)).containsEntry("policy", null).containsEntry("effective_policy_definition",
            Map.of());
    }
}
