package io.skiffmq.server;

import static io.skiffmq.server.Amqp091Support.TIMEOUT;
import static io.skiffmq.server.Amqp091Support.bytes;
import static io.skiffmq.server.Amqp091Support.queueExists;
import static io.skiffmq.server.Amqp091Support.exchangeExists;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.BuiltinExchangeType;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.Delivery;
import io.skiffmq.codec.testing.LeakDetection;
import io.skiffmq.server.Amqp091Support.Recorder;
import java.nio.file.Path;
import java.util.Date;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * SkiffMQ only (it restarts the broker): a clean restart on the same data directory keeps durable queues,
 * exchanges and bindings declared over 0-9-1, and the persistent (delivery-mode 2) messages in durable queues, with
 * their properties and headers; transient messages, transient queues and transient exchanges are gone. Messages
 * a consumer held unacknowledged at the stop are back.
 */
@ExtendWith(LeakDetection.class)
class Amqp091DurabilityTest {
    @TempDir
    Path dir;

    private static AMQP.BasicProperties persistent(String id) {
        return new AMQP.BasicProperties.Builder().deliveryMode(2).messageId(id).contentType("text/plain")
            .timestamp(new Date(1_700_000_000_000L)).headers(Map.of("kind", "refund", "n", 7)).build();
    }

    @Test
    void durableDefinitionsAndPersistentMessagesSurviveARestart() throws Exception {
        String dataDir = "data-dir=" + dir.resolve("data");
        try (Amqp091Target target = Amqp091Target.start(dataDir)) {
            assumeFalse(target.external(), "restarts the broker: SkiffMQ only");
            try (Connection connection = target.factory().newConnection()) {
                Channel channel = connection.createChannel();
                channel.queueDeclare("orders", true, false, false, null);
                channel.queueDeclare("held", true, false, false, null);
                channel.queueDeclare("transient", false, false, false, null);
                channel.exchangeDeclare("events", BuiltinExchangeType.TOPIC, true);
                channel.exchangeDeclare("scratch", BuiltinExchangeType.FANOUT, false);
                channel.queueBind("orders", "events", "order.*");
                channel.queueBind("orders", "scratch", "");

                channel.confirmSelect();
                channel.basicPublish("", "orders", persistent("p1"), bytes("persistent 1"));
                channel.basicPublish("", "orders", new AMQP.BasicProperties.Builder().deliveryMode(1).build(),
                    bytes("transient message"));
                channel.basicPublish("", "orders", null, bytes("no properties: transient"));
                channel.basicPublish("events", "order.new", persistent("p2"), bytes("persistent 2"));
                channel.basicPublish("", "transient", persistent("t1"), bytes("in a transient queue"));
                channel.basicPublish("", "held", persistent("h1"), bytes("held 1"));
                channel.basicPublish("", "held", persistent("h2"), bytes("held 2"));
                channel.waitForConfirmsOrDie(TIMEOUT.toMillis());
                assertThat(channel.queueDeclarePassive("orders").getMessageCount()).isEqualTo(4);

                // a consumer holds both messages of "held", acks one, and is still holding the other at the stop
                Channel consumerChannel = connection.createChannel();
                Recorder holder = new Recorder(consumerChannel);
                consumerChannel.basicConsume("held", false, holder);
                holder.awaitExactly(2);
                consumerChannel.basicAck(1, false);
                consumerChannel.basicQos(0); // a round trip: the ack is in before the broker stops
            }
        }

        try (Amqp091Target target = Amqp091Target.start(dataDir);
                Connection connection = target.factory().newConnection()) {
            Channel channel = connection.createChannel();
            assertThat(queueExists(connection, "transient")).isFalse();
            assertThat(exchangeExists(connection, "scratch")).isFalse();
            assertThat(exchangeExists(connection, "events")).isTrue();
            AMQP.Queue.DeclareOk orders = channel.queueDeclarePassive("orders");
            assertThat(orders.getMessageCount()).as("the persistent messages, not the others").isEqualTo(2);

            Recorder consumer = new Recorder(channel);
            channel.basicConsume("orders", true, consumer);
            List<Delivery> deliveries = consumer.awaitExactly(2);
            assertThat(consumer.bodies()).containsExactly("persistent 1", "persistent 2");
            AMQP.BasicProperties p1 = deliveries.get(0).getProperties();
            assertThat(p1.getDeliveryMode()).isEqualTo(2);
            assertThat(p1.getMessageId()).isEqualTo("p1");
            assertThat(p1.getContentType()).isEqualTo("text/plain");
            assertThat(p1.getTimestamp()).isEqualTo(new Date(1_700_000_000_000L));
            assertThat(p1.getHeaders()).containsOnlyKeys("kind", "n");
            assertThat(p1.getHeaders().get("kind")).hasToString("refund");
            assertThat(p1.getHeaders().get("n")).isEqualTo(7);
            assertThat(deliveries.get(1).getEnvelope().getExchange()).isEqualTo("events");
            assertThat(deliveries.get(1).getEnvelope().getRoutingKey()).isEqualTo("order.new");

            Channel heldChannel = connection.createChannel();
            Recorder held = new Recorder(heldChannel);
            heldChannel.basicConsume("held", true, held);
            held.awaitExactly(1);
            assertThat(held.bodies()).containsExactly("held 2");

            // the durable binding still routes
            channel.confirmSelect();
            channel.basicPublish("events", "order.paid", persistent("p3"), bytes("after the restart"));
            channel.waitForConfirmsOrDie(TIMEOUT.toMillis());
            consumer.awaitExactly(3);
            assertThat(consumer.bodies()).last().isEqualTo("after the restart");
        }
    }
}
