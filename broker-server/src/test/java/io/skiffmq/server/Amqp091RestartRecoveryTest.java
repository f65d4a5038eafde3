package io.skiffmq.server;

import static io.skiffmq.server.Amqp091Support.TIMEOUT;
import static io.skiffmq.server.Amqp091Support.await;
import static io.skiffmq.server.Amqp091Support.bytes;
import static io.skiffmq.server.Amqp091Support.text;
import static org.assertj.core.api.Assertions.assertThat;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import com.rabbitmq.client.GetResponse;
import io.skiffmq.codec.testing.LeakDetection;
import io.skiffmq.server.Amqp091Support.Recorder;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * SkiffMQ only (it restarts the broker), with the RabbitMQ Java client: what a persistent message knows of itself
 * after a restart, as RabbitMQ's classic queues know it. After a clean stop only the messages delivered before it
 * come back {@code redelivered} (the Java client's {@code MessageRecovery}); after a crash all of them do. A message's
 * TTL counts from its arrival across a restart, and one whose TTL ran out while the broker was down is dead-lettered
 * when it is back (the Java client's {@code DeadLetterExchangeDurable}).
 */
@ExtendWith(LeakDetection.class)
class Amqp091RestartRecoveryTest {
    private static final AMQP.BasicProperties PERSISTENT = new AMQP.BasicProperties.Builder().deliveryMode(2).build();

    @TempDir
    Path dir;

    /** A connection without automatic recovery (the broker restarts under it). */
    static Connection connect(int port) throws Exception {
        ConnectionFactory factory = new ConnectionFactory();
        factory.setHost("127.0.0.1");
        factory.setPort(port);
        factory.setAutomaticRecoveryEnabled(false);
        return factory.newConnection();
    }

    private static void publish(Channel channel, String queue, AMQP.BasicProperties properties, String... bodies)
            throws Exception {
        channel.confirmSelect();
        for (String body : bodies) {
            channel.basicPublish("", queue, properties, bytes(body));
        }
        channel.waitForConfirmsOrDie(TIMEOUT.toMillis());
    }

    /** The next message of the queue, taken by a no-ack get, waited for. */
    static GetResponse awaitGet(Channel channel, String queue) {
        AtomicReference<GetResponse> got = new AtomicReference<>();
        await().atMost(TIMEOUT).until(() -> {
            got.set(channel.basicGet(queue, true));
            return got.get() != null;
        });
        return got.get();
    }

    /** Every message of the queue, taken by no-ack gets, by body: whether it came redelivered. */
    private static Map<String, Boolean> redelivered(Channel channel, String queue, int count) throws Exception {
        Map<String, Boolean> redelivered = new LinkedHashMap<>();
        for (int i = 0; i < count; i++) {
            GetResponse got = awaitGet(channel, queue);
            redelivered.put(text(got.getBody()), got.getEnvelope().isRedeliver());
        }
        assertThat(channel.basicGet(queue, true)).isNull();
        return redelivered;
    }

    @Test
    void afterACleanStopOnlyTheMessagesDeliveredBeforeComeBackRedelivered() throws Exception {
        String dataDir = "data-dir=" + dir.resolve("data");
        try (RunningBroker broker = RunningBroker.start(dataDir); Connection connection = connect(broker.port())) {
            Channel channel = connection.createChannel();
            channel.queueDeclare("recovery", true, false, false, null);
            publish(channel, "recovery", PERSISTENT, "rejected", "held", "never");
            Channel consuming = connection.createChannel();
            consuming.basicQos(2);
            Recorder recorder = new Recorder(consuming);
            consuming.basicConsume("recovery", false, recorder);
            recorder.awaitDeliveries(2);
            consuming.basicReject(recorder.deliveries.get(0).getEnvelope().getDeliveryTag(), true);
            // it comes back to this consumer (one slot free): "held" and it are unacknowledged at the stop
            recorder.awaitDeliveries(3);
        }
        for (int restart = 0; restart < 2; restart++) { // the second time, nothing was delivered in between
            try (RunningBroker broker = RunningBroker.start(dataDir)) {
                assertThat(broker.vhost("/").queue("recovery").readyCount()).isEqualTo(3);
            }
        }
        try (RunningBroker broker = RunningBroker.start(dataDir); Connection connection = connect(broker.port())) {
            assertThat(redelivered(connection.createChannel(), "recovery", 3)).containsExactly(
                Map.entry("rejected", true), Map.entry("held", true), Map.entry("never", false));
        }
    }

    @Test
    void afterACrashEveryMessageComesBackRedelivered() throws Exception {
        try (ChildBroker broker = ChildBroker.start(dir, "restart-recovery-crash", List.of("-Xmx256m"), List.of())) {
            Connection connection = connect(broker.port);
            Channel channel = connection.createChannel();
            channel.queueDeclare("crash", true, false, false, null);
            publish(channel, "crash", PERSISTENT, "never delivered");
            broker.kill();
            connection.abort();
        }
        try (ChildBroker broker = ChildBroker.start(dir, "restart-recovery-after", List.of("-Xmx256m"), List.of())) {
            try (Connection connection = connect(broker.port)) {
                assertThat(redelivered(connection.createChannel(), "crash", 1))
                    .as("the journal cannot tell what was delivered before a crash")
                    .containsExactly(Map.entry("never delivered", true));
            }
            broker.stop();
        }
    }

    @Test
    void aTtlCountsOnAcrossARestartAndWhatRanOutWhileDownIsDeadLettered() throws Exception {
        TestTime time = TestTime.onManualClock();
        String dataDir = "data-dir=" + dir.resolve("data");
        try (RunningBroker broker = RunningBroker.start(time.clock(), dataDir);
                Connection connection = connect(broker.port())) {
            Channel channel = connection.createChannel();
            channel.queueDeclare("dead", true, false, false, null);
            channel.queueDeclare("ttl", true, false, false, Map.of("x-message-ttl", 1000,
                "x-dead-letter-exchange", "", "x-dead-letter-routing-key", "dead"));
            channel.queueDeclare("own", true, false, false, null);
            publish(channel, "ttl", PERSISTENT, "expires while down");
            publish(channel, "own", PERSISTENT.builder().expiration("1000").build(), "own TTL");
        }
        time.advance(1500);
        try (RunningBroker broker = RunningBroker.start(time.clock(), dataDir);
                Connection connection = connect(broker.port())) {
            Channel channel = connection.createChannel();
            GetResponse dead = awaitGet(channel, "dead");
            assertThat(text(dead.getBody())).isEqualTo("expires while down");
            @SuppressWarnings("unchecked")
            List<Map<String, Object>> xDeath = (List<Map<String, Object>>) dead.getProps().getHeaders().get("x-death");
            assertThat(String.valueOf(xDeath.get(0).get("reason"))).isEqualTo("expired");
            assertThat(channel.basicGet("ttl", true)).isNull();
            assertThat(channel.basicGet("own", true)).as("its own TTL ran out too").isNull();
        }

        try (RunningBroker broker = RunningBroker.start(time.clock(), dataDir);
                Connection connection = connect(broker.port())) {
            publish(connection.createChannel(), "own", PERSISTENT.builder().expiration("1000").build(), "counts on");
        }
        time.advance(600);
        try (RunningBroker broker = RunningBroker.start(time.clock(), dataDir);
                Connection connection = connect(broker.port())) {
            time.advance(399);
            assertThat(broker.vhost("/").queue("own").readyCount()).isEqualTo(1);
            time.advance(1);
            await().atMost(TIMEOUT).until(() -> broker.vhost("/").queue("own").readyCount() == 0);
            assertThat(connection.createChannel().basicGet("own", true)).isNull();
        }
    }
}
