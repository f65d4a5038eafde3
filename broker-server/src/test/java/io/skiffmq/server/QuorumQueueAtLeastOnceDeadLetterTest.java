package io.skiffmq.server;

import static io.skiffmq.server.Amqp091RestartRecoveryTest.awaitGet;
import static io.skiffmq.server.Amqp091RestartRecoveryTest.connect;
import static io.skiffmq.server.Amqp091Support.QUIET;
import static io.skiffmq.server.Amqp091Support.TIMEOUT;
import static io.skiffmq.server.Amqp091Support.await;
import static io.skiffmq.server.Amqp091Support.bytes;
import static io.skiffmq.server.Amqp091Support.text;
import static org.assertj.core.api.Assertions.assertThat;

import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.GetResponse;
import io.skiffmq.codec.testing.LeakDetection;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * A quorum queue with {@code x-dead-letter-strategy: at-least-once} and {@code x-overflow: reject-publish} keeps a
 * message that died until its dead-letter exchange has routed it to a queue that confirmed it, trying again every
 * {@code dead-letter-retry-interval} (here 100 ms), as RabbitMQ 4.0's {@code rabbit_fifo_dlx}; with another overflow
 * it falls back to at most once. With the RabbitMQ Java client (0-9-1); SkiffMQ only (it sets the retry interval).
 */
@ExtendWith(LeakDetection.class)
class QuorumQueueAtLeastOnceDeadLetterTest {
    @TempDir
    Path dir;

    private static Map<String, Object> quorum(String overflow) {
        return Map.of("x-queue-type", "quorum", "x-dead-letter-exchange", "dlx", "x-dead-letter-routing-key", "dlq",
            "x-dead-letter-strategy", "at-least-once", "x-overflow", overflow, "x-max-length", 1);
    }

    /** Publishes {@code body} with confirms: true when the queue took it. */
    private static boolean publish(Channel channel, String queue, String body) throws Exception {
        channel.basicPublish("", queue, null, bytes(body));
        try {
            channel.waitForConfirmsOrDie(TIMEOUT.toMillis());
            return true;
        } catch (java.io.IOException e) {
            return false;
        }
    }

    private static void reject(Channel channel, String queue) throws Exception {
        GetResponse got = channel.basicGet(queue, false);
        channel.basicReject(got.getEnvelope().getDeliveryTag(), false);
    }

    private static void declareTarget(Channel channel) throws Exception {
        channel.exchangeDeclare("dlx", "direct", true);
        channel.queueDeclare("dlq", true, false, false, null);
        channel.queueBind("dlq", "dlx", "dlq");
    }

    @Test
    void aMessageWaitsInTheSourceUntilItsDeadLetterQueueIsThereAndCountsTowardsItsLength() throws Exception {
        try (RunningBroker broker = RunningBroker.start("dead-letter-retry-interval=100");
                Connection connection = connect(broker.port())) {
            Channel channel = connection.createChannel();
            channel.queueDeclare("qq", true, false, false, quorum("reject-publish"));
            channel.confirmSelect();
            assertThat(publish(channel, "qq", "dead")).isTrue();
            reject(channel, "qq");
            // no exchange dlx yet: it stays, neither ready nor delivered, and holds the queue's one place
            await().during(QUIET).atMost(QUIET.plus(TIMEOUT)).until(() -> channel.basicGet("qq", false) == null);
            assertThat(channel.queueDeclarePassive("qq").getMessageCount()).isZero();
            assertThat(publish(channel, "qq", "refused")).as("x-max-length 1, held by the dying message").isFalse();
            Map<?, ?> info = (Map<?, ?>) HttpApiClient.guest(broker).get("/api/queues/%2F/qq").body();
            assertThat(info.get("messages")).as("counted in the total").isEqualTo(1);
            assertThat(info.get("messages_ready")).isEqualTo(0);
            assertThat(info.get("messages_dlx")).isEqualTo(1);

            Channel other = connection.createChannel();
            declareTarget(other);
            GetResponse dead = awaitGet(other, "dlq");
            assertThat(text(dead.getBody())).isEqualTo("dead");
            assertThat(dead.getProps().getHeaders()).containsKey("x-death");
            Channel confirming = connection.createChannel();
            confirming.confirmSelect();
            await().atMost(TIMEOUT).until(() -> publish(confirming, "qq", "taken"));
            assertThat(other.basicGet("dlq", true)).as("dead-lettered once here").isNull();
        }
    }

    @Test
    void withAnotherOverflowItFallsBackToAtMostOnce() throws Exception {
        try (RunningBroker broker = RunningBroker.start("dead-letter-retry-interval=100");
                Connection connection = connect(broker.port())) {
            Channel channel = connection.createChannel();
            channel.queueDeclare("qq", true, false, false, quorum("drop-head"));
            channel.confirmSelect();
            assertThat(publish(channel, "qq", "dropped")).isTrue();
            reject(channel, "qq");
            assertThat(publish(channel, "qq", "taken")).as("nothing held").isTrue();
            declareTarget(channel);
            await().during(QUIET).atMost(QUIET.plus(TIMEOUT)).until(() -> channel.queueDeclarePassive("dlq")
                .getMessageCount() == 0);
        }
    }

    @Test
    void aMessageWaitingToBeDeadLetteredIsNotLostAcrossARestart() throws Exception {
        String[] settings = {"data-dir=" + dir.resolve("data"), "dead-letter-retry-interval=100"};
        try (RunningBroker broker = RunningBroker.start(settings); Connection connection = connect(broker.port())) {
            Channel channel = connection.createChannel();
            channel.queueDeclare("qq", true, false, false, quorum("reject-publish"));
            channel.confirmSelect();
            assertThat(publish(channel, "qq", "kept")).isTrue();
            reject(channel, "qq");
            await().during(QUIET).atMost(QUIET.plus(TIMEOUT)).until(() -> channel.basicGet("qq", false) == null);
        }
        try (RunningBroker broker = RunningBroker.start(settings); Connection connection = connect(broker.port())) {
            Channel channel = connection.createChannel();
            await().during(QUIET).atMost(QUIET.plus(TIMEOUT)).until(() -> channel.basicGet("qq", false) == null);
            declareTarget(channel);
            GetResponse dead = awaitGet(channel, "dlq");
            assertThat(text(dead.getBody())).as("still waiting to be dead-lettered after the restart").isEqualTo("kept");
        }
        try (RunningBroker broker = RunningBroker.start(settings); Connection connection = connect(broker.port())) {
            Channel channel = connection.createChannel();
            assertThat(channel.queueDeclarePassive("qq").getMessageCount()).isZero();
            assertThat(channel.basicGet("qq", false)).as("gone from its queue once dead-lettered").isNull();
        }
    }
}
