package io.skiffmq.server;

import static io.skiffmq.server.Amqp091Support.QUIET;
import static io.skiffmq.server.Amqp091Support.TIMEOUT;
import static io.skiffmq.server.Amqp091Support.await;
import static io.skiffmq.server.Amqp091Support.bytes;
import static io.skiffmq.server.Amqp091Support.channelError;
import static io.skiffmq.server.Amqp091Support.connectionError;
import static io.skiffmq.server.Amqp091Support.queueExists;
import static io.skiffmq.server.Amqp091Support.text;
import static org.assertj.core.api.Assertions.assertThat;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.Delivery;
import com.rabbitmq.client.GetResponse;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Quorum queues over AMQP 0-9-1 with the RabbitMQ Java client, by RabbitMQ 4.0's rules: what a declaration may be
 * ({@code rabbit_quorum_queue:declare/2}, {@code rabbit_amqqueue:check_declare_arguments/3}), equivalence, the
 * delivery limit with its default of 20 and dead-lettering past it, the {@code x-delivery-count} header of
 * redeliveries, and a channel-wide prefetch refused at consume.
 */
class Amqp091QuorumQueueTest extends Amqp091StreamTestBase {
    /** {@code x-queue-type: quorum} and the rest, in that order. */
    static Map<String, Object> quorum(Object... keysAndValues) {
        return typed("quorum", keysAndValues);
    }

    @Test
    void aQuorumQueueIsDeclaredWithItsArgumentsAndRedeclaredEquivalently() throws Exception {
        String q = name("qq");
        Map<String, Object> arguments = quorum("x-quorum-initial-group-size", 3, "x-queue-leader-locator", "balanced",
            "x-delivery-limit", 5, "x-dead-letter-strategy", "at-most-once", "x-max-length", 100,
            "x-overflow", "reject-publish", "x-message-ttl", 60_000, "x-expires", 600_000,
            "x-single-active-consumer", true, "x-max-in-memory-length", 10);
        assertThat(channel.queueDeclare(q, true, false, false, arguments).getMessageCount()).isZero();
        assertThat(channel.queueDeclare(q, true, false, false, arguments).getQueue()).isEqualTo(q);
        assertThat(channel.queueDeclarePassive(q).getQueue()).isEqualTo(q);
        if (!target.external()) {
            assertThat(target.broker().vhost("/").queue(q).type().alias()).isEqualTo("quorum");
        }
        Map<String, Object> other = new java.util.LinkedHashMap<>(arguments);
        other.put("x-delivery-limit", 6);
        channelError(channel, AMQP.PRECONDITION_FAILED, "PRECONDITION_FAILED - inequivalent arg 'x-delivery-limit' "
            + "for queue '" + q + "' in vhost '/': received '6' but current is '5'",
            () -> channel.queueDeclare(q, true, false, false, other));
    }

    @Test
    void propertiesAQuorumQueueCannotHaveAre406InRabbitMqsOrder() throws Exception {
        String q = name("props");
        String queue = "queue '" + q + "' in vhost '/'";
        refused(q, true, true, true, quorum(), "invalid property 'auto-delete' for " + queue);
        refused(q, true, true, false, quorum(), "invalid property 'exclusive-owner' for " + queue);
        refused(q, false, false, false, quorum(), "invalid property 'non-durable' for " + queue);
        refused("", true, false, false, quorum(), "Cannot declare a server-named queue for type rabbit_quorum_queue");
    }

    @Test
    void argumentsOfOtherQueueTypesAndBadValuesAreRefused() throws Exception {
        String q = name("args");
        for (String key : List.of("x-max-priority", "x-queue-mode", "x-max-age", "x-stream-max-segment-size-bytes",
                "x-initial-cluster-size")) {
            Object value = key.equals("x-queue-mode") ? "lazy" : key.equals("x-max-age") ? "1D" : (Object) 10;
            refused(q, true, false, false, quorum(key, value), "invalid arg '" + key + "' for queue '" + q
                + "' in vhost '/' of queue type rabbit_quorum_queue");
        }
        String prefix = "invalid arg '%s' for queue '" + q + "' in vhost '/': ";
        refused(q, true, false, false, quorum("x-dead-letter-strategy", "sometimes"),
            prefix.formatted("x-dead-letter-strategy") + "invalid_dlx_strategy");
        refused(q, true, false, false, quorum("x-quorum-initial-group-size", 0),
            prefix.formatted("x-quorum-initial-group-size") + "{value_zero,0}");
        refused(q, true, false, false, quorum("x-queue-leader-locator", "nearest"),
            prefix.formatted("x-queue-leader-locator") + "invalid_queue_locator_arg");
        refused(q, true, false, false, quorum("x-overflow", "drop-tail"),
            prefix.formatted("x-overflow") + "invalid_overflow");
        refused(q, true, false, false, quorum("x-max-length", -1),
            prefix.formatted("x-max-length") + "{value_negative,-1}");
        refused(q, true, false, false, quorum("x-dead-letter-routing-key", "k"),
            prefix.formatted("x-dead-letter-routing-key") + "routing_key_but_no_dlx_defined");
        // RabbitMQ 4.0 takes reject-publish-dlx for a quorum queue, logs it as invalid and drops from the head
        channel = connection.createChannel();
        channel.queueDeclare(q, true, false, false, quorum("x-overflow", "reject-publish-dlx"));
    }

    @Test
    void redeliveriesCarryXDeliveryCountAndPastTheLimitTheMessageIsDeadLettered() throws Exception {
        String dlq = name("dead");
        channel.queueDeclare(dlq, true, false, false, quorum());
        String q = name("limited");
        channel.queueDeclare(q, true, false, false, quorum("x-delivery-limit", 2, "x-dead-letter-exchange", "",
            "x-dead-letter-routing-key", dlq));
        channel.basicPublish("", q, null, bytes("poison"));
        GetResponse first = awaitGet(q);
        assertThat(first.getEnvelope().isRedeliver()).isFalse();
        assertThat(headers(first.getProps())).doesNotContainKey("x-delivery-count");
        channel.basicNack(first.getEnvelope().getDeliveryTag(), false, true);
        GetResponse second = awaitGet(q);
        assertThat(second.getEnvelope().isRedeliver()).isTrue();
        assertThat(headers(second.getProps())).containsEntry("x-delivery-count", 1L);
        channel.basicReject(second.getEnvelope().getDeliveryTag(), true);

        // the consumer path counts alike
        Amqp091Support.Recorder recorder = new Amqp091Support.Recorder(channel);
        channel.basicConsume(q, false, recorder);
        Delivery third = recorder.awaitDeliveries(1).get(0);
        assertThat(headers(third.getProperties())).containsEntry("x-delivery-count", 2L);
        channel.basicReject(third.getEnvelope().getDeliveryTag(), true);

        GetResponse dead = awaitGet(dlq);
        assertThat(text(dead.getBody())).isEqualTo("poison");
        @SuppressWarnings("unchecked")
        Map<String, Object> death = ((List<Map<String, Object>>) dead.getProps().getHeaders().get("x-death")).get(0);
        assertThat(death.get("reason").toString()).isEqualTo("delivery_limit");
        assertThat(death.get("queue").toString()).isEqualTo(q);
        assertThat(channel.queueDeclarePassive(q).getMessageCount()).isZero();
    }

    @Test
    void theDeliveryLimitIs20ByDefaultAndMinusOneMeansNone() throws Exception {
        String q = name("default-limit");
        channel.queueDeclare(q, true, false, false, quorum());
        String unlimited = name("unlimited");
        channel.queueDeclare(unlimited, true, false, false, quorum("x-delivery-limit", -1));
        channel.basicPublish("", q, null, bytes("poison"));
        channel.basicPublish("", unlimited, null, bytes("poison"));
        for (int i = 0; i < 20; i++) {
            channel.basicNack(awaitGet(q).getEnvelope().getDeliveryTag(), false, true);
            channel.basicNack(awaitGet(unlimited).getEnvelope().getDeliveryTag(), false, true);
        }
        GetResponse last = awaitGet(q);
        assertThat(headers(last.getProps())).containsEntry("x-delivery-count", 20L);
        channel.basicNack(last.getEnvelope().getDeliveryTag(), false, true);
        await().atMost(TIMEOUT).until(() -> channel.queueDeclarePassive(q).getMessageCount() == 0);
        assertThat(channel.basicGet(q, false)).as("dropped: no dead-letter exchange").isNull();
        channel.basicNack(awaitGet(unlimited).getEnvelope().getDeliveryTag(), false, true);
        assertThat(headers(awaitGet(unlimited).getProps())).containsEntry("x-delivery-count", 21L);
    }

    /**
     * A message a closed channel gave back counts as a return, as RabbitMQ 4.0's {@code acquired_count} does: its
     * redelivery carries {@code x-delivery-count: 1}, and returns count against the delivery limit.
     */
    @Test
    void everyReturnCountsAClosedChannelToo() throws Exception {
        String q = name("returns");
        channel.queueDeclare(q, true, false, false, quorum("x-delivery-limit", 1));
        channel.basicPublish("", q, null, bytes("m"));
        Channel closing = connection.createChannel();
        Amqp091Support.Recorder first = new Amqp091Support.Recorder(closing);
        closing.basicConsume(q, false, first);
        first.awaitDeliveries(1);
        closing.close();
        GetResponse again = awaitGet(q);
        assertThat(again.getEnvelope().isRedeliver()).isTrue();
        assertThat(headers(again.getProps())).containsEntry("x-delivery-count", 1L);
        channel.close();
        channel = connection.createChannel();
        await().atMost(TIMEOUT).until(() -> channel.queueDeclarePassive(q).getMessageCount() == 0);
        assertThat(channel.basicGet(q, false)).as("past the limit of 1 after two returns: dropped").isNull();
    }

    /** A consumer on a channel of its own, with a prefetch of 1, manual acks and {@code x-priority}. */
    private Amqp091Support.Recorder consumer(String queue, int priority) throws Exception {
        Channel own = connection.createChannel();
        own.basicQos(1);
        Amqp091Support.Recorder recorder = new Amqp091Support.Recorder(own);
        own.basicConsume(queue, false, Map.of("x-priority", priority), recorder);
        return recorder;
    }

    private static void ack(Amqp091Support.Recorder recorder, int index) throws Exception {
        recorder.getChannel().basicAck(recorder.deliveries.get(index).getEnvelope().getDeliveryTag(), false);
    }

    private static List<String> bodies(Amqp091Support.Recorder recorder) {
        return recorder.deliveries.stream().map(d -> Amqp091Support.text(d.getBody())).toList();
    }

    /**
     * RabbitMQ 4.0's quorum queue: a single active consumer gives way to one of higher priority once its unacked
     * messages are acked, gets nothing in between, and stays registered, waiting; it is active again when the other
     * goes.
     */
    @Test
    void aSingleActiveConsumerGivesWayToAHigherPriorityOnceItsMessagesAreAcked() throws Exception {
        String q = name("sac-takeover");
        channel.queueDeclare(q, true, false, false, quorum("x-single-active-consumer", true));
        Amqp091Support.sendToQueue(connection, q, "m1", "m2", "m3");
        Amqp091Support.Recorder low = consumer(q, 0);
        low.awaitDeliveries(1);
        Amqp091Support.Recorder high = consumer(q, 10);
        await().during(QUIET).atMost(QUIET.plus(TIMEOUT)).until(() -> high.deliveries.isEmpty()
            && low.deliveries.size() == 1);
        ack(low, 0);
        high.awaitDeliveries(1);
        ack(high, 0);
        high.awaitDeliveries(2);
        assertThat(bodies(high)).containsExactly("m2", "m3");
        assertThat(bodies(low)).containsExactly("m1");
        assertThat(channel.queueDeclarePassive(q).getConsumerCount()).as("the first waits, registered").isEqualTo(2);
        ack(high, 1);
        high.getChannel().basicCancel(high.consumeOks.get(0));
        Amqp091Support.sendToQueue(connection, q, "m4");
        low.awaitDeliveries(2);
        assertThat(bodies(low)).containsExactly("m1", "m4");
    }

    @Test
    void aSingleActiveConsumerWithNothingUnackedGivesWayAtOnce() throws Exception {
        String q = name("sac-takeover-idle");
        channel.queueDeclare(q, true, false, false, quorum("x-single-active-consumer", true));
        Amqp091Support.Recorder low = consumer(q, 0);
        Amqp091Support.Recorder high = consumer(q, 5);
        Amqp091Support.sendToQueue(connection, q, "m1");
        high.awaitDeliveries(1);
        assertThat(low.deliveries).isEmpty();
    }

    @Test
    void aClassicQueuesSingleActiveConsumerStaysActive() throws Exception {
        String q = name("sac-classic");
        channel.queueDeclare(q, true, false, false, Map.of("x-single-active-consumer", true));
        Amqp091Support.Recorder low = consumer(q, 0);
        Amqp091Support.Recorder high = consumer(q, 5);
        Amqp091Support.sendToQueue(connection, q, "m1");
        low.awaitDeliveries(1);
        assertThat(high.deliveries).isEmpty();
    }

    @Test
    void aChannelWidePrefetchIsRefusedAtConsume() throws Exception {
        String q = name("global");
        channel.queueDeclare(q, true, false, false, quorum());
        Connection global = target.factory().newConnection();
        Channel g = global.createChannel();
        g.basicQos(10, true);
        connectionError(global, AMQP.NOT_IMPLEMENTED, "NOT_IMPLEMENTED - queue '" + q + "' in vhost '/' does not "
            + "support global qos", () -> g.basicConsume(q, false, new Amqp091Support.Recorder(g)));
        // a consumer's own prefetch is fine
        channel.basicQos(10);
        channel.basicConsume(q, false, new Amqp091Support.Recorder(channel));
    }

    @Test
    void aConditionalDeleteIsNotImplementedForQuorumQueues() throws Exception {
        String q = name("delete");
        channel.queueDeclare(q, true, false, false, quorum());
        connectionError(connection, AMQP.NOT_IMPLEMENTED, "NOT_IMPLEMENTED - cannot delete queue '" + q + "' in vhost "
            + "'/'. queue.delete operations with if-unused flag set are not supported by quorum queues",
            () -> channel.queueDelete(q, true, false));
        Connection other = target.factory().newConnection();
        connectionError(other, AMQP.NOT_IMPLEMENTED, "NOT_IMPLEMENTED - cannot delete queue '" + q + "' in vhost "
            + "'/'. queue.delete operations with if-empty flag set are not supported by quorum queues",
            () -> other.createChannel().queueDelete(q, false, true));
        try (Connection third = target.factory().newConnection()) {
            assertThat(third.createChannel().queueDelete(q).getMessageCount()).isZero();
        }
    }

    private GetResponse awaitGet(String queue) throws Exception {
        GetResponse[] got = new GetResponse[1];
        await().atMost(TIMEOUT).until(() -> (got[0] = channel.basicGet(queue, false)) != null);
        return got[0];
    }

    private static Map<String, Object> headers(AMQP.BasicProperties properties) {
        return properties.getHeaders() == null ? Map.of() : properties.getHeaders();
    }
}
