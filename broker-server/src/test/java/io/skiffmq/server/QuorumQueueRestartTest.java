package io.skiffmq.server;

import static io.skiffmq.server.Amqp091RestartRecoveryTest.connect;
import static io.skiffmq.server.Amqp091Support.TIMEOUT;
import static io.skiffmq.server.Amqp091Support.bytes;
import static io.skiffmq.server.Amqp091Support.text;
import static org.assertj.core.api.Assertions.assertThat;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.GetResponse;
import io.skiffmq.codec.testing.LeakDetection;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * SkiffMQ only (it restarts the broker): a quorum queue keeps every message, whatever its delivery mode, as
 * RabbitMQ's does, across a clean restart; and a message confirmed under {@code sync-policy=sync} (once fsynced)
 * survives kill -9, with the delivery count it had.
 */
@ExtendWith(LeakDetection.class)
class QuorumQueueRestartTest {
    private static final Map<String, Object> QUORUM = Map.of("x-queue-type", "quorum");
    private static final AMQP.BasicProperties TRANSIENT = new AMQP.BasicProperties.Builder().deliveryMode(1).build();

    @TempDir
    Path dir;

    private static List<String> drain(Channel channel, String queue) throws Exception {
        List<String> bodies = new ArrayList<>();
        for (GetResponse got = channel.basicGet(queue, true); got != null; got = channel.basicGet(queue, true)) {
            bodies.add(text(got.getBody()));
        }
        return bodies;
    }

    @Test
    void everyMessageSurvivesACleanRestartWhateverItsDeliveryMode() throws Exception {
        String dataDir = "data-dir=" + dir.resolve("data");
        try (RunningBroker broker = RunningBroker.start(dataDir); Connection connection = connect(broker.port())) {
            Channel channel = connection.createChannel();
            channel.queueDeclare("qq", true, false, false, QUORUM);
            channel.confirmSelect();
            channel.basicPublish("", "qq", TRANSIENT, bytes("transient"));
            channel.basicPublish("", "qq", null, bytes("no properties"));
            channel.waitForConfirmsOrDie(TIMEOUT.toMillis());
        }
        try (RunningBroker broker = RunningBroker.start(dataDir); Connection connection = connect(broker.port())) {
            assertThat(broker.vhost("/").queue("qq").type().alias()).isEqualTo("quorum");
            assertThat(drain(connection.createChannel(), "qq")).containsExactly("transient", "no properties");
        }
    }

    @Test
    void confirmedMessagesAndTheirDeliveryCountsSurviveKill9() throws Exception {
        int count = 2_000;
        Set<String> confirmed = new HashSet<>();
        try (ChildBroker broker = ChildBroker.start(dir, "quorum-kill", List.of("-Xmx256m"),
                List.of("--sync-policy=sync"))) {
            Connection connection = connect(broker.port);
            Channel channel = connection.createChannel();
            channel.queueDeclare("qq", true, false, false, QUORUM);
            channel.basicPublish("", "qq", TRANSIENT, bytes("poison"));
            GetResponse poison = channel.basicGet("qq", false);
            channel.basicNack(poison.getEnvelope().getDeliveryTag(), false, true);
            channel.confirmSelect();
            for (int i = 0; i < count; i++) {
                String body = "m" + i;
                channel.basicPublish("", "qq", TRANSIENT, bytes(body));
                if (i % 100 == 99) {
                    channel.waitForConfirmsOrDie(TIMEOUT.toMillis());
                    for (int j = i - 99; j <= i; j++) {
                        confirmed.add("m" + j);
                    }
                }
            }
            // more, unconfirmed, while the broker dies: they may or may not be there
            for (int i = count; i < count + 500; i++) {
                channel.basicPublish("", "qq", TRANSIENT, bytes("m" + i));
            }
            broker.kill();
            connection.abort();
        }
        try (ChildBroker broker = ChildBroker.start(dir, "quorum-kill-after", List.of("-Xmx256m"),
                List.of("--sync-policy=sync"))) {
            Connection connection = connect(broker.port);
            Channel channel = connection.createChannel();
            GetResponse first = channel.basicGet("qq", true);
            assertThat(text(first.getBody())).isEqualTo("poison");
            assertThat(first.getProps().getHeaders()).containsEntry("x-delivery-count", 1L);
            Set<String> after = new HashSet<>(drain(channel, "qq"));
            Set<String> lost = new HashSet<>(confirmed);
            lost.removeAll(after);
            assertThat(lost).as("confirmed messages lost").isEmpty();
            connection.close();
            broker.stop();
        }
    }

    /** Takes the message without settling it and gives it back by closing the channel: a return, not a failure. */
    private static void takeAndGiveBack(Connection connection, String queue) throws Exception {
        Channel channel = connection.createChannel();
        assertThat(channel.basicGet(queue, false)).isNotNull();
        channel.close();
    }

    @Test
    void theCountOfReturnsSurvivesARestartAndTheDeliveryLimitJudgesIt() throws Exception {
        String dataDir = "data-dir=" + dir.resolve("data");
        Map<String, Object> arguments = Map.of("x-queue-type", "quorum", "x-delivery-limit", 2,
            "x-dead-letter-exchange", "", "x-dead-letter-routing-key", "dlq");
        try (RunningBroker broker = RunningBroker.start(dataDir); Connection connection = connect(broker.port())) {
            Channel channel = connection.createChannel();
            channel.queueDeclare("dlq", true, false, false, null);
            channel.queueDeclare("qq", true, false, false, arguments);
            channel.confirmSelect();
            channel.basicPublish("", "qq", null, bytes("returned"));
            channel.waitForConfirmsOrDie(TIMEOUT.toMillis());
            takeAndGiveBack(connection, "qq");
            takeAndGiveBack(connection, "qq");
        }
        try (RunningBroker broker = RunningBroker.start(dataDir); Connection connection = connect(broker.port())) {
            Channel channel = connection.createChannel();
            GetResponse got = channel.basicGet("qq", false);
            assertThat(got.getProps().getHeaders()).as("returned twice before the restart")
                .containsEntry("x-delivery-count", 2L);
            channel.close(); // a third return, past the limit of 2: dead-lettered
            Channel other = connection.createChannel();
            GetResponse dead = Amqp10ClientTestBase.awaitGet(other, "dlq");
            assertThat(text(dead.getBody())).isEqualTo("returned");
            assertThat(other.basicGet("qq", true)).isNull();
        }
    }

    @Test
    void annotationsOfAModifiedOutcomeSurviveARestart() throws Exception {
        String dataDir = "data-dir=" + dir.resolve("data");
        try (RunningBroker broker = RunningBroker.start(dataDir)) {
            com.rabbitmq.client.amqp.Environment environment = new com.rabbitmq.client.amqp.impl.AmqpEnvironmentBuilder()
                .connectionSettings().host("127.0.0.1").port(broker.port()).username("guest").password("guest")
                .environmentBuilder().build();
            try (environment; com.rabbitmq.client.amqp.Connection connection = environment.connectionBuilder().build()) {
                connection.management().queue().name("qq").type(com.rabbitmq.client.amqp.Management.QueueType.QUORUM)
                    .declare();
                java.util.concurrent.CountDownLatch requeued = new java.util.concurrent.CountDownLatch(1);
                java.util.concurrent.atomic.AtomicReference<com.rabbitmq.client.amqp.Consumer> self =
                    new java.util.concurrent.atomic.AtomicReference<>();
                com.rabbitmq.client.amqp.Consumer consumer = connection.consumerBuilder().queue("qq").initialCredits(1)
                    .messageHandler((context, message) -> {
                        if (requeued.getCount() > 0) {
                            // no more credit: the message requeued is not delivered again here, as a delivery
                            // left unsettled at the close leaks the client's own buffers
                            self.get().pause();
                            context.requeue(Map.of("x-opt-note", "kept"));
                            requeued.countDown();
                        }
                    }).build();
                self.set(consumer); // before the message is there: the handler finds it set
                com.rabbitmq.client.amqp.Publisher publisher = connection.publisherBuilder().queue("qq").build();
                java.util.concurrent.CountDownLatch accepted = new java.util.concurrent.CountDownLatch(1);
                publisher.publish(publisher.message(bytes("annotated")), context -> accepted.countDown());
                assertThat(accepted.await(10, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
                assertThat(requeued.await(10, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
                consumer.close();
            }
        }
        try (RunningBroker broker = RunningBroker.start(dataDir); Connection connection = connect(broker.port())) {
            GetResponse got = connection.createChannel().basicGet("qq", true);
            assertThat(text(got.getBody())).isEqualTo("annotated");
            assertThat(got.getProps().getHeaders().get("x-opt-note").toString()).isEqualTo("kept");
        }
    }
}
