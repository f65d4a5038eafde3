package io.skiffmq.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.DefaultConsumer;
import com.rabbitmq.client.Envelope;
import com.rabbitmq.client.GetResponse;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The shortest path through AMQP 0-9-1 with the RabbitMQ Java client: declare, publish with confirms, consume, get. */
@org.junit.jupiter.api.extension.ExtendWith(io.skiffmq.codec.testing.LeakDetection.class)
class Amqp091SmokeTest {
    private static Amqp091Target target;

    @BeforeAll
    static void start() throws Exception {
        target = Amqp091Target.start();
    }

    @AfterAll
    static void stop() {
        target.close();
    }

    @Test
    void publishConfirmConsumeAndGet() throws Exception {
        try (Connection connection = target.factory().newConnection()) {
            assertThat(connection.getServerProperties()).containsKeys("product", "version", "capabilities");
            Channel channel = connection.createChannel();
            String queue = channel.queueDeclare("", false, true, true, null).getQueue();
            assertThat(queue).startsWith("amq.gen-");
            channel.confirmSelect();
            for (int i = 0; i < 10; i++) {
                channel.basicPublish("", queue, new AMQP.BasicProperties.Builder().messageId("m" + i).build(),
                    ("hello " + i).getBytes(StandardCharsets.UTF_8));
            }
            channel.waitForConfirmsOrDie(10_000);
            assertThat(channel.queueDeclarePassive(queue).getMessageCount()).isEqualTo(10);

            GetResponse got = channel.basicGet(queue, false);
            assertThat(new String(got.getBody(), StandardCharsets.UTF_8)).isEqualTo("hello 0");
            assertThat(got.getMessageCount()).isEqualTo(9);
            channel.basicAck(got.getEnvelope().getDeliveryTag(), false);

            List<String> bodies = new CopyOnWriteArrayList<>();
            CountDownLatch nine = new CountDownLatch(9);
            channel.basicQos(3);
            channel.basicConsume(queue, false, new DefaultConsumer(channel) {
                @Override
                public void handleDelivery(String tag, Envelope envelope, AMQP.BasicProperties properties, byte[] body)
                        throws java.io.IOException {
                    bodies.add(properties.getMessageId() + ":" + new String(body, StandardCharsets.UTF_8));
                    getChannel().basicAck(envelope.getDeliveryTag(), false);
                    nine.countDown();
                }
            });
            assertThat(nine.await(10, TimeUnit.SECONDS)).isTrue();
            assertThat(bodies).hasSize(9).first().isEqualTo("m1:hello 1");
        }
    }
}
