package io.skiffmq.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.GetResponse;
import com.rabbitmq.client.amqp.Connection;
import com.rabbitmq.client.amqp.Environment;
import com.rabbitmq.client.amqp.Message;
import com.rabbitmq.client.amqp.Publisher;
import com.rabbitmq.client.amqp.impl.AmqpEnvironmentBuilder;
import io.skiffmq.codec.testing.LeakDetection;
import java.nio.charset.StandardCharsets;
import java.util.Date;
import java.util.Map;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Both protocols share one set of exchanges, queues and bindings: a message published over AMQP 0-9-1 is consumed
 * over AMQP 1.0 and the other way round, its properties and headers mapped as RabbitMQ 4 maps them
 * (docs/messages.md).
 */
@ExtendWith(LeakDetection.class)
class Amqp091CrossProtocolTest {
    private static RunningBroker broker;
    private static Environment environment;
    private static Connection amqp10;
    private static com.rabbitmq.client.Connection amqp091;

    @BeforeAll
    static void start() throws Exception {
        broker = RunningBroker.start();
        environment = new AmqpEnvironmentBuilder().connectionSettings().host("127.0.0.1").port(broker.port())
            .username("guest").password("guest").environmentBuilder().build();
        amqp10 = environment.connectionBuilder().build();
        com.rabbitmq.client.ConnectionFactory factory = new com.rabbitmq.client.ConnectionFactory();
        factory.setPort(broker.port());
        factory.setHost("127.0.0.1");
        amqp091 = factory.newConnection();
    }

    @AfterAll
    static void stop() throws Exception {
        amqp091.close();
        amqp10.close();
        environment.close();
        broker.close();
    }

    @Test
    void publishedOver091ConsumedOver10() throws Exception {
        Channel channel = amqp091.createChannel();
        channel.queueDeclare("x-091-to-10", true, false, false, null);
        channel.queueBind("x-091-to-10", "amq.topic", "orders.*");
        channel.confirmSelect();
        AMQP.BasicProperties properties = new AMQP.BasicProperties.Builder().messageId("m-1").correlationId("c-1")
            .contentType("application/json").replyTo("replies").type("order.created").appId("shop").priority(3)
            .deliveryMode(2).timestamp(new Date(1_700_000_000_000L))
            .headers(Map.of("region", "eu", "count", 5, "x-trace", "abc")).build();
        channel.basicPublish("amq.topic", "orders.eu", properties, "{\"n\":1}".getBytes(StandardCharsets.UTF_8));
        channel.waitForConfirmsOrDie(10_000);

        BlockingQueue<Message> got = new ArrayBlockingQueue<>(1);
        com.rabbitmq.client.amqp.Consumer consumer = amqp10.consumerBuilder().queue("x-091-to-10")
            .messageHandler((context, message) -> {
                got.add(message);
                context.accept();
            }).build();
        Message message = got.poll(10, TimeUnit.SECONDS);
        consumer.close();
        assertThat(message).isNotNull();
        assertThat(message.messageId()).isEqualTo("m-1");
        assertThat(message.correlationId()).isEqualTo("c-1");
        assertThat(message.contentType()).isEqualTo("application/json");
        assertThat(message.replyTo()).isEqualTo("replies");
        assertThat(message.groupId()).isEqualTo("shop");
        assertThat(message.creationTime()).isEqualTo(1_700_000_000_000L);
        assertThat(message.priority()).isEqualTo((byte) 3);
        assertThat(message.durable()).isTrue();
        assertThat(message.property("region")).isEqualTo("eu");
        assertThat(message.property("count")).isEqualTo(5);
        assertThat(message.annotation("x-trace")).isEqualTo("abc");
        assertThat(message.annotation("x-basic-type")).isEqualTo("order.created");
        assertThat(message.annotation("x-exchange")).isEqualTo("amq.topic");
        assertThat(message.annotation("x-routing-key")).isEqualTo("orders.eu");
        assertThat(new String(message.body(), StandardCharsets.UTF_8)).isEqualTo("{\"n\":1}");
        channel.close();
    }

    @Test
    void publishedOver10ConsumedOver091() throws Exception {
        Channel channel = amqp091.createChannel();
        channel.queueDeclare("x-10-to-091", true, false, false, null);
        Publisher publisher = amqp10.publisherBuilder().queue("x-10-to-091").build();
        BlockingQueue<Publisher.Status> outcome = new ArrayBlockingQueue<>(1);
        publisher.publish(publisher.message("hi".getBytes(StandardCharsets.UTF_8)).messageId("m-2")
            .correlationId("c-2").contentType("text/plain").replyTo("/queues/replies").priority((byte) 7)
            .property("region", "us").property("n", 7L), context -> outcome.add(context.status()));
        assertThat(outcome.poll(10, TimeUnit.SECONDS)).isEqualTo(Publisher.Status.ACCEPTED);
        publisher.close();

        GetResponse got = channel.basicGet("x-10-to-091", true);
        assertThat(got).isNotNull();
        AMQP.BasicProperties properties = got.getProps();
        assertThat(properties.getMessageId()).isEqualTo("m-2");
        assertThat(properties.getCorrelationId()).isEqualTo("c-2");
        assertThat(properties.getContentType()).isEqualTo("text/plain");
        assertThat(properties.getReplyTo()).isEqualTo("/queues/replies");
        assertThat(properties.getPriority()).isEqualTo(7);
        assertThat(properties.getDeliveryMode()).isEqualTo(2);
        assertThat(properties.getHeaders().get("region")).hasToString("us");
        assertThat(properties.getHeaders()).containsEntry("n", 7L);
        assertThat(got.getEnvelope().getExchange()).isEmpty();
        assertThat(got.getEnvelope().getRoutingKey()).isEqualTo("x-10-to-091");
        assertThat(new String(got.getBody(), StandardCharsets.UTF_8)).isEqualTo("hi");
        channel.close();
    }
}
