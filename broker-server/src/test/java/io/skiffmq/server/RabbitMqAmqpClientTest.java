package io.skiffmq.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.rabbitmq.client.amqp.Connection;
import com.rabbitmq.client.amqp.Consumer;
import com.rabbitmq.client.amqp.Environment;
import com.rabbitmq.client.amqp.Management;
import com.rabbitmq.client.amqp.Publisher;
import com.rabbitmq.client.amqp.impl.AmqpEnvironmentBuilder;
import io.skiffmq.codec.testing.LeakDetection;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** The RabbitMQ AMQP 1.0 Java client: management node, v2 addresses, outcomes. */
@ExtendWith(LeakDetection.class)
class RabbitMqAmqpClientTest {
    private static RunningBroker broker;
    private static Environment environment;
    private static Connection connection;

    @BeforeAll
    static void start() throws Exception {
        broker = RunningBroker.start();
        environment = new AmqpEnvironmentBuilder().connectionSettings().host("127.0.0.1").port(broker.port())
            .username("guest").password("guest").environmentBuilder().build();
        connection = environment.connectionBuilder().build();
    }

    @AfterAll
    static void stop() {
        connection.close();
        environment.close();
        broker.close();
    }

    private static Publisher.Status publish(Publisher publisher, String body) throws InterruptedException {
        BlockingQueue<Publisher.Status> outcome = new ArrayBlockingQueue<>(1);
        publisher.publish(publisher.message(body.getBytes(StandardCharsets.UTF_8)), context -> outcome.add(context.status()));
        return outcome.poll(10, TimeUnit.SECONDS);
    }

    @Test
    void declaresThroughManagementPublishesByExchangeAndQueueAndSettlesEachWay() throws Exception {
        Management management = connection.management();
        management.queue().name("rmq-q").declare();
        management.exchange().name("rmq-topic").type(Management.ExchangeType.TOPIC).declare();
        management.binding().sourceExchange("rmq-topic").destinationQueue("rmq-q").key("orders.#").bind();
        assertThat(management.queueInfo("rmq-q").name()).isEqualTo("rmq-q");

        Publisher byExchange = connection.publisherBuilder().exchange("rmq-topic").key("orders.eu").build();
        Publisher byQueue = connection.publisherBuilder().queue("rmq-q").build();
        assertThat(publish(byExchange, "via exchange")).isEqualTo(Publisher.Status.ACCEPTED);
        assertThat(publish(byQueue, "via queue")).isEqualTo(Publisher.Status.ACCEPTED);
        Publisher nowhere = connection.publisherBuilder().exchange("rmq-topic").key("invoices.eu").build();
        assertThat(publish(nowhere, "unroutable")).isEqualTo(Publisher.Status.RELEASED);
        assertThat(management.queueInfo("rmq-q").messageCount()).isEqualTo(2);

        List<String> received = new CopyOnWriteArrayList<>();
        BlockingQueue<String> seen = new ArrayBlockingQueue<>(10);
        Consumer consumer = connection.consumerBuilder().queue("rmq-q").messageHandler((context, message) -> {
            String body = new String(message.body(), StandardCharsets.UTF_8);
            seen.add(body);
            if (body.equals("via queue") && !received.contains("requeued once")) {
                received.add("requeued once");
                context.requeue();
            } else {
                received.add(body);
                context.accept();
            }
        }).build();
        assertThat(seen.poll(10, TimeUnit.SECONDS)).isEqualTo("via exchange");
        assertThat(seen.poll(10, TimeUnit.SECONDS)).isEqualTo("via queue");
        assertThat(seen.poll(10, TimeUnit.SECONDS)).as("requeued and redelivered").isEqualTo("via queue");
        consumer.close();

        management.unbind().sourceExchange("rmq-topic").destinationQueue("rmq-q").key("orders.#").unbind();
        assertThat(publish(byExchange, "after unbind")).isEqualTo(Publisher.Status.RELEASED);
        management.exchangeDelete("rmq-topic");
        management.queueDelete("rmq-q");
        assertThatThrownBy(() -> management.queueInfo("rmq-q")).isInstanceOf(RuntimeException.class);
    }

    @Test
    void aConsumerOnAMissingQueueFailsAndTheConnectionCarriesOn() throws Exception {
        try (Connection own = environment.connectionBuilder().build()) {
            assertThatThrownBy(() -> own.consumerBuilder().queue("rmq-missing")
                .messageHandler((context, message) -> context.accept()).build())
                .isInstanceOf(RuntimeException.class);

            own.management().queue().name("rmq-after-refusal").declare();
            Publisher publisher = own.publisherBuilder().queue("rmq-after-refusal").build();
            assertThat(publish(publisher, "still here")).isEqualTo(Publisher.Status.ACCEPTED);
            BlockingQueue<String> seen = new ArrayBlockingQueue<>(1);
            Consumer consumer = own.consumerBuilder().queue("rmq-after-refusal").messageHandler((context, message) -> {
                seen.add(new String(message.body(), StandardCharsets.UTF_8));
                context.accept();
            }).build();
            assertThat(seen.poll(10, TimeUnit.SECONDS)).isEqualTo("still here");
            consumer.close();
            own.management().queueDelete("rmq-after-refusal");
        }
    }

    @Test
    void pauseStopsDeliveriesUnpauseResumesAndDiscardDropsTheMessage() throws Exception {
        Management management = connection.management();
        management.queue().name("rmq-pause").declare();
        Publisher publisher = connection.publisherBuilder().queue("rmq-pause").build();
        BlockingQueue<String> seen = new ArrayBlockingQueue<>(100);
        Consumer consumer = connection.consumerBuilder().queue("rmq-pause").initialCredits(5)
            .messageHandler((context, message) -> {
                String body = new String(message.body(), StandardCharsets.UTF_8);
                seen.add(body);
                if (body.startsWith("drop")) {
                    context.discard();
                } else {
                    context.accept();
                }
            }).build();
        assertThat(publish(publisher, "drop me")).isEqualTo(Publisher.Status.ACCEPTED);
        assertThat(seen.poll(10, TimeUnit.SECONDS)).isEqualTo("drop me");
        consumer.pause();
        // the client drains its credit with echo on pause; what arrives after the pause settles must not come
        assertThat(publish(publisher, "while paused")).isEqualTo(Publisher.Status.ACCEPTED);
        assertThat(seen.poll(500, TimeUnit.MILLISECONDS)).isNull();
        consumer.unpause();
        assertThat(seen.poll(10, TimeUnit.SECONDS)).isEqualTo("while paused");
        consumer.close();
        // the client sends its accept of "while paused" asynchronously: when the detach overtakes it, that message is
        // released back (rightly); "drop me" must not be there either way
        long left = management.queueInfo("rmq-pause").messageCount();
        assertThat(left).isLessThanOrEqualTo(1);
        if (left == 1) {
            BlockingQueue<String> remaining = new ArrayBlockingQueue<>(10);
            Consumer drain = connection.consumerBuilder().queue("rmq-pause").messageHandler((context, message) -> {
                remaining.add(new String(message.body(), StandardCharsets.UTF_8));
                context.accept();
            }).build();
            assertThat(remaining.poll(10, TimeUnit.SECONDS)).as("discarded, not requeued").isEqualTo("while paused");
            drain.close();
        }
        management.queueDelete("rmq-pause");
    }

    @Test
    void everyExchangeTypeRoutesAsDeclared() throws Exception {
        Management management = connection.management();
        management.queue().name("rmq-types").declare();
        Map<Management.ExchangeType, String> keys = Map.of(Management.ExchangeType.DIRECT, "k",
            Management.ExchangeType.FANOUT, "anything", Management.ExchangeType.TOPIC, "a.b",
            Management.ExchangeType.HEADERS, "");
        for (Map.Entry<Management.ExchangeType, String> e : keys.entrySet()) {
            String name = "rmq-" + e.getKey().name().toLowerCase();
            management.exchange().name(name).type(e.getKey()).declare();
            var binding = management.binding().sourceExchange(name).destinationQueue("rmq-types")
                .key(e.getKey() == Management.ExchangeType.TOPIC ? "a.*" : e.getKey() == Management.ExchangeType.DIRECT ? "k" : "");
            if (e.getKey() == Management.ExchangeType.HEADERS) {
                binding.argument("x-match", "any").argument("colour", "blue");
            }
            binding.bind();
            Publisher publisher = connection.publisherBuilder().exchange(name).key(e.getValue()).build();
            BlockingQueue<Publisher.Status> outcome = new ArrayBlockingQueue<>(1);
            var message = publisher.message("x".getBytes(StandardCharsets.UTF_8)).property("colour", "blue");
            publisher.publish(message, context -> outcome.add(context.status()));
            assertThat(outcome.poll(10, TimeUnit.SECONDS)).as(name).isEqualTo(Publisher.Status.ACCEPTED);
        }
        assertThat(management.queueInfo("rmq-types").messageCount()).isEqualTo(4);
        management.queueDelete("rmq-types");
    }

    @Test
    void aConflictingExchangeDeclarationIsRefused() {
        Management management = connection.management();
        management.exchange().name("typed").type(Management.ExchangeType.FANOUT).declare();
        assertThatThrownBy(() -> management.exchange().name("typed").type(Management.ExchangeType.DIRECT).declare())
            .isInstanceOf(RuntimeException.class);
        management.exchangeDelete("typed");
    }
}
