package io.skiffmq.server;

import static io.skiffmq.server.Amqp091Support.unique;
import static org.assertj.core.api.Assertions.assertThat;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import com.rabbitmq.client.GetResponse;
import io.skiffmq.codec.testing.LeakDetection;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Date;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.qpid.proton.amqp.Binary;
import org.apache.qpid.proton.amqp.Symbol;
import org.apache.qpid.proton.amqp.UnsignedLong;
import org.apache.qpid.proton.amqp.messaging.Data;
import org.apache.qpid.proton.message.Message;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * A durable message published over AMQP 0-9-1 and dead-lettered twice into a durable queue keeps its death times
 * to the millisecond across a restart, as RabbitMQ 4 keeps them in the stored message container: an AMQP 1.0
 * consumer then sees {@code first-time} and {@code last-time} to the ms, and a 0-9-1 consumer the {@code x-death}
 * header RabbitMQ sends (the first time, in seconds).
 */
@ExtendWith(LeakDetection.class)
class DeathTimesRestartTest {
    @TempDir
    Path dir;

    private static Connection connect(RunningBroker broker) throws Exception {
        ConnectionFactory factory = new ConnectionFactory();
        factory.setHost("127.0.0.1");
        factory.setPort(broker.port());
        return factory.newConnection();
    }

    private static GetResponse awaitGet(Channel channel, String queue) {
        AtomicReference<GetResponse> got = new AtomicReference<>();
        Amqp091Support.await().atMost(Amqp091Support.TIMEOUT).until(() -> {
            got.set(channel.basicGet(queue, false));
            return got.get() != null;
        });
        return got.get();
    }

    @Test
    @SuppressWarnings("unchecked")
    void theDeathTimesOfADurableDeadLetteredMessageSurviveARestartToTheMillisecond() throws Exception {
        TestTime time = TestTime.onManualClock();
        String[] settings = {"data-dir=" + dir.resolve("data")};
        String q = unique("died-twice");
        long first;
        long last;
        try (RunningBroker broker = RunningBroker.start(time.clock(), settings);
                Connection connection = connect(broker)) {
            Channel channel = connection.createChannel();
            channel.queueDeclare(q, true, false, false,
                Map.of("x-dead-letter-exchange", "", "x-dead-letter-routing-key", q));
            channel.confirmSelect();
            channel.basicPublish("", q, new AMQP.BasicProperties.Builder().deliveryMode(2).build(),
                "twice".getBytes(StandardCharsets.UTF_8));
            channel.waitForConfirmsOrDie(10_000);
            time.advance(123); // off the whole second, so the ms are seen
            first = time.millis();
            channel.basicReject(awaitGet(channel, q).getEnvelope().getDeliveryTag(), false);
            GetResponse back = awaitGet(channel, q); // it died before time moves on
            time.advance(1_500);
            last = time.millis();
            channel.basicReject(back.getEnvelope().getDeliveryTag(), false);
            Amqp091Support.await().atMost(Amqp091Support.TIMEOUT)
                .until(() -> channel.queueDeclarePassive(q).getMessageCount() == 1);
        }

        try (RunningBroker broker = RunningBroker.start(time.clock(), settings);
                Connection connection = connect(broker)) {
            Channel channel = connection.createChannel();
            GetResponse got = awaitGet(channel, q);
            List<Map<String, Object>> xDeath = (List<Map<String, Object>>) got.getProps().getHeaders().get("x-death");
            assertThat(xDeath).singleElement().satisfies(death -> {
                assertThat(death.get("count")).isEqualTo(2L);
                assertThat(death.get("time")).as("RabbitMQ's x-death: the first time in seconds")
                    .isEqualTo(new Date(first / 1000 * 1000));
            });
            channel.basicReject(got.getEnvelope().getDeliveryTag(), true);
            channel.close();

            Message dead;
            try (RawClient client = RawClient.openSession(broker.port())) {
                client.attachReceiver(0, RawClient.source("/queues/" + q), true);
                client.flow(0, 0, 1, false, false);
                dead = Messages.decode(client.read().payload());
            }
            Object[] deaths = (Object[]) dead.getMessageAnnotations().getValue().get(Symbol.valueOf("x-opt-deaths"));
            assertThat(deaths).hasSize(1);
            Map<Symbol, Object> death = (Map<Symbol, Object>) deaths[0];
            assertThat(death.get(Symbol.valueOf("queue"))).isEqualTo(q);
            assertThat(death.get(Symbol.valueOf("reason"))).isEqualTo(Symbol.valueOf("rejected"));
            assertThat(death.get(Symbol.valueOf("count"))).isEqualTo(UnsignedLong.valueOf(2));
            assertThat(death.get(Symbol.valueOf("first-time"))).isEqualTo(new Date(first));
            assertThat(death.get(Symbol.valueOf("last-time"))).isEqualTo(new Date(last));
            Binary body = ((Data) dead.getBody()).getValue();
            assertThat(new String(body.getArray(), body.getArrayOffset(), body.getLength(), StandardCharsets.UTF_8))
                .isEqualTo("twice");
        }
    }
}
