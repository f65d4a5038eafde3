package io.skiffmq.server;

import io.skiffmq.server.auth.UserStore;

import static org.assertj.core.api.Assertions.assertThat;

import com.rabbitmq.client.amqp.Connection;
import com.rabbitmq.client.amqp.Environment;
import com.rabbitmq.client.amqp.Management;
import com.rabbitmq.client.amqp.Publisher;
import com.rabbitmq.client.amqp.impl.AmqpEnvironmentBuilder;
import io.skiffmq.codec.testing.LeakDetection;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * A clean restart on the same data directory, through the RabbitMQ AMQP 1.0 client: the user from the users file,
 * queues with their arguments, exchanges and bindings with arguments still route, durable messages are back and a
 * non-durable one is not.
 */
@ExtendWith(LeakDetection.class)
class RestartTest {
    @TempDir
    Path dir;

    private static Environment environment(RunningBroker broker) {
        return new AmqpEnvironmentBuilder().connectionSettings().host("127.0.0.1").port(broker.port())
            .username("alice").password("s3cret").environmentBuilder().build();
    }

    private static void publish(Publisher publisher, String body, boolean durable, String kind) throws Exception {
        CountDownLatch settled = new CountDownLatch(1);
        Publisher.Status[] status = new Publisher.Status[1];
        var message = publisher.message(body.getBytes(StandardCharsets.UTF_8)).durable(durable);
        if (kind != null) {
            message.property("kind", kind);
        }
        publisher.publish(message, context -> {
            status[0] = context.status();
            settled.countDown();
        });
        assertThat(settled.await(10, TimeUnit.SECONDS)).isTrue();
        assertThat(status[0]).isEqualTo(Publisher.Status.ACCEPTED);
    }

    @Test
    void definitionsUsersAndDurableMessagesSurviveARestart() throws Exception {
        Path users = dir.resolve("users");
        Files.writeString(users, "alice:" + UserStore.hash("s3cret") + "\n");
        String[] settings = {"data-dir=" + dir.resolve("data"), "users-file=" + users};

        try (RunningBroker broker = RunningBroker.start(settings); Environment env = environment(broker);
                Connection connection = env.connectionBuilder().build()) {
            Management management = connection.management();
            management.queue("orders").type(Management.QueueType.CLASSIC).declare();
            management.exchange("events").type(Management.ExchangeType.TOPIC).declare();
            management.exchange("by-kind").type(Management.ExchangeType.HEADERS).declare();
            management.binding().sourceExchange("events").destinationQueue("orders").key("order.*").bind();
            management.binding().sourceExchange("by-kind").destinationQueue("orders")
                .argument("x-match", "all").argument("kind", "refund").bind();
            try (Publisher publisher = connection.publisherBuilder().queue("orders").build()) {
                publish(publisher, "durable-1", true, null);
                publish(publisher, "not durable", false, null);
                publish(publisher, "durable-2", true, null);
            }
        }

        try (RunningBroker broker = RunningBroker.start(settings); Environment env = environment(broker);
                Connection connection = env.connectionBuilder().build()) {
            Management management = connection.management();
            Management.QueueInfo orders = management.queueInfo("orders");
            assertThat(orders.durable()).isTrue();
            assertThat(orders.arguments()).containsEntry("x-queue-type", "classic");
            assertThat(orders.messageCount()).as("the durable messages, not the other").isEqualTo(2);
            try (Publisher byTopic = connection.publisherBuilder().exchange("events").key("order.new").build();
                    Publisher byHeaders = connection.publisherBuilder().exchange("by-kind").build()) {
                publish(byTopic, "routed by topic", true, null);
                publish(byHeaders, "routed by headers", true, "refund");
            }
            List<String> bodies = new CopyOnWriteArrayList<>();
            CountDownLatch four = new CountDownLatch(4);
            connection.consumerBuilder().queue("orders").messageHandler((context, message) -> {
                bodies.add(new String(message.body(), StandardCharsets.UTF_8));
                context.accept();
                four.countDown();
            }).build();
            assertThat(four.await(10, TimeUnit.SECONDS)).isTrue();
            assertThat(bodies).containsExactly("durable-1", "durable-2", "routed by topic", "routed by headers");
        }
    }
}
