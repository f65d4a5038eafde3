package io.skiffmq.server;

import static io.skiffmq.server.Amqp091Support.TIMEOUT;
import static io.skiffmq.server.Amqp091Support.await;
import static org.assertj.core.api.Assertions.assertThat;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.DefaultConsumer;
import com.rabbitmq.client.Envelope;
import com.rabbitmq.client.GetResponse;
import com.rabbitmq.client.ShutdownSignalException;
import io.skiffmq.codec.testing.LeakDetection;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * RabbitMQ's consumer timeout: a delivery not acknowledged within {@code consumer-timeout} (or its queue's
 * {@code x-consumer-timeout} or {@code consumer-timeout} policy) closes its channel with 406 in RabbitMQ 4.0's words,
 * and the channel's unacked deliveries go back to the queue. Channels look every {@code channel-tick-interval}; both
 * are short here.
 */
@ExtendWith(LeakDetection.class)
class Amqp091ConsumerTimeoutTest {
    private static final long TIMEOUT_MILLIS = 400;
    private static RunningBroker broker;
    private static HttpApiClient api;
    private static Connection connection;

    @BeforeAll
    static void start() throws Exception {
        broker = RunningBroker.start("consumer-timeout=" + TIMEOUT_MILLIS, "channel-tick-interval=50");
        api = HttpApiClient.guest(broker);
        connection = VirtualHostTest.factory(broker, "/", "guest", "guest").newConnection();
    }

    @AfterAll
    static void stop() throws Exception {
        connection.close();
        broker.close();
    }

    private static String queueWith(Map<String, Object> arguments, String... bodies) throws Exception {
        String queue = Amqp091Support.unique("timeout");
        Channel channel = connection.createChannel();
        channel.queueDeclare(queue, true, false, false, arguments);
        channel.confirmSelect();
        for (String body : bodies) {
            channel.basicPublish("", queue, null, body.getBytes(StandardCharsets.UTF_8));
        }
        channel.waitForConfirmsOrDie(TIMEOUT.toMillis());
        channel.close();
        return queue;
    }

    /** The reason the broker closed {@code channel} with, once it has. */
    private static CompletableFuture<ShutdownSignalException> closed(Channel channel) {
        CompletableFuture<ShutdownSignalException> closed = new CompletableFuture<>();
        channel.addShutdownListener(closed::complete);
        return closed;
    }

    private static void assertTimedOut(ShutdownSignalException reason, int channel, long timeout) {
        AMQP.Channel.Close close = (AMQP.Channel.Close) reason.getReason();
        assertThat(close.getReplyCode()).isEqualTo(406);
        assertThat(close.getReplyText()).isEqualTo("PRECONDITION_FAILED - delivery acknowledgement on channel "
            + channel + " timed out. Timeout value used: " + timeout + " ms. This timeout value can be configured, see"
            + " consumers doc guide to learn more");
    }

    private static int ready(String queue) throws Exception {
        return ((Number) api.get("/api/queues/%2F/" + queue).map().get("messages_ready")).intValue();
    }

    @Test
    void anUnackedDeliveryClosesItsChannelAndGoesBackWhileAnotherChannelThatAcksGoesOn() throws Exception {
        String queue = queueWith(null, "held", "acked");
        Channel holding = connection.createChannel();
        Channel acking = connection.createChannel();
        CompletableFuture<ShutdownSignalException> closed = closed(holding);
        holding.basicQos(1);
        CompletableFuture<Void> held = new CompletableFuture<>();
        holding.basicConsume(queue, false, new DefaultConsumer(holding) {
            @Override
            public void handleDelivery(String tag, Envelope envelope, AMQP.BasicProperties p, byte[] body) {
                held.complete(null); // and never acked
            }
        });
        held.get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
        GetResponse got = acking.basicGet(queue, false);
        acking.basicAck(got.getEnvelope().getDeliveryTag(), false);

        assertTimedOut(closed.get(TIMEOUT.toSeconds(), TimeUnit.SECONDS), holding.getChannelNumber(),
            TIMEOUT_MILLIS);
        assertThat(acking.isOpen()).as("a channel with nothing unacked stays").isTrue();
        assertThat(connection.isOpen()).isTrue();
        await().atMost(TIMEOUT).until(() -> ready(queue) == 1);
        GetResponse again = acking.basicGet(queue, true);
        assertThat(new String(again.getBody(), StandardCharsets.UTF_8)).isEqualTo("held");
        assertThat(again.getEnvelope().isRedeliver()).isTrue();
        acking.queueDelete(queue);
        acking.close();
    }

    @Test
    void aGetWithoutAckTimesOutToo() throws Exception {
        String queue = queueWith(null, "got");
        Channel channel = connection.createChannel();
        CompletableFuture<ShutdownSignalException> closed = closed(channel);
        assertThat(channel.basicGet(queue, false)).isNotNull();
        assertTimedOut(closed.get(TIMEOUT.toSeconds(), TimeUnit.SECONDS), channel.getChannelNumber(), TIMEOUT_MILLIS);
        await().atMost(TIMEOUT).until(() -> ready(queue) == 1);
        connection.createChannel().queueDelete(queue);
    }

    /** As RabbitMQ's args_policy_lookup: the queue's argument and its policy, the smaller of the two. */
    @Test
    void aQueuesOwnTimeoutAndItsPolicyOverrideTheBrokersTheSmallerWinning() throws Exception {
        String queue = queueWith(Map.of("x-queue-type", "quorum", "x-consumer-timeout", 300), "one");
        assertThat(api.put("/api/policies/%2F/timeout-" + queue, Map.of("pattern", "^" + queue + "$",
            "definition", Map.of("consumer-timeout", 200), "apply-to", "queues")).status()).isEqualTo(201);
        await().atMost(TIMEOUT).until(() -> ("timeout-" + queue).equals(api.get("/api/queues/%2F/" + queue).map()
            .get("policy")));
        Channel channel = connection.createChannel();
        CompletableFuture<ShutdownSignalException> closed = closed(channel);
        assertThat(channel.basicGet(queue, false)).isNotNull();
        assertTimedOut(closed.get(TIMEOUT.toSeconds(), TimeUnit.SECONDS), channel.getChannelNumber(), 200);
        assertThat(api.delete("/api/policies/%2F/timeout-" + queue).status()).isEqualTo(204);
        connection.createChannel().queueDelete(queue);
    }

    @Test
    void noAckDeliveriesAndAcknowledgedOnesNeverTimeOut() throws Exception {
        String queue = queueWith(null, "a", "b", "c");
        Channel channel = connection.createChannel();
        assertThat(channel.basicGet(queue, true)).isNotNull();
        GetResponse acked = channel.basicGet(queue, false);
        channel.basicAck(acked.getEnvelope().getDeliveryTag(), false);
        // a later channel's held delivery times out: by then this one has been looked at many times
        Channel holding = connection.createChannel();
        CompletableFuture<ShutdownSignalException> closed = closed(holding);
        assertThat(holding.basicGet(queue, false)).isNotNull();
        closed.get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
        assertThat(channel.isOpen()).isTrue();
        channel.queueDelete(queue);
        channel.close();
    }
}
