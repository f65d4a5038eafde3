package io.skiffmq.server;

import static io.skiffmq.server.Amqp091Support.unique;
import static org.assertj.core.api.Assertions.assertThat;

import com.rabbitmq.client.Channel;
import com.rabbitmq.client.GetResponse;
import com.rabbitmq.client.amqp.Connection;
import com.rabbitmq.client.amqp.Consumer;
import com.rabbitmq.client.amqp.Environment;
import com.rabbitmq.client.amqp.Management;
import com.rabbitmq.client.amqp.Message;
import com.rabbitmq.client.amqp.Publisher;
import com.rabbitmq.client.amqp.impl.AmqpEnvironmentBuilder;
import com.rabbitmq.qpid.protonj2.types.Symbol;
import com.rabbitmq.qpid.protonj2.types.UnsignedInteger;
import com.rabbitmq.qpid.protonj2.types.UnsignedLong;
import io.skiffmq.codec.testing.LeakDetection;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * What the AMQP 1.0 tests of queue arguments share: a SkiffMQ broker on a manual clock ({@link #time}), RabbitMQ's
 * AMQP 1.0 client ({@code com.rabbitmq.client:amqp-client}) connected to it, an AMQP 0-9-1 connection for the tests
 * that cross protocols, publishers and consumers closed after each test, and checks of the dead-letter history as
 * RabbitMQ 4 writes it in {@code x-opt-deaths} ({@code mc_amqp:encode_deaths/1}). SkiffMQ only: RabbitMQ 3.10 has
 * neither the management node nor these addresses.
 */
@ExtendWith(LeakDetection.class)
abstract class Amqp10ClientTestBase {
    static final Duration QUIET = Amqp091Support.QUIET;
    static TestTime time;
    static RunningBroker broker;
    static Environment environment;
    static Connection connection;
    static com.rabbitmq.client.Connection amqp091;

    final List<AutoCloseable> closeAfter = new ArrayList<>();

    @BeforeAll
    static void start() throws Exception {
        time = TestTime.onManualClock();
        broker = RunningBroker.start(time.clock());
        environment = new AmqpEnvironmentBuilder().connectionSettings().host("127.0.0.1").port(broker.port())
            .username("guest").password("guest").environmentBuilder().build();
        connection = environment.connectionBuilder().build();
        com.rabbitmq.client.ConnectionFactory factory = new com.rabbitmq.client.ConnectionFactory();
        factory.setHost("127.0.0.1");
        factory.setPort(broker.port());
        amqp091 = factory.newConnection();
    }

    @AfterAll
    static void stop() throws Exception {
        amqp091.close();
        connection.close();
        environment.close();
        broker.close();
    }

    @AfterEach
    void closeResources() throws Exception {
        for (AutoCloseable resource : closeAfter) {
            resource.close();
        }
    }

    static Management management() {
        return connection.management();
    }

    static byte[] bytes(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }

    static String text(Message message) {
        return new String(message.body(), StandardCharsets.UTF_8);
    }

    /** A unique queue name, and a queue that dead-letters to it. */
    static String[] queueWithDeadLetterQueue(String prefix, Map<String, Object> more) {
        String dlq = unique(prefix + "-dead");
        management().queue().name(dlq).declare();
        String q = unique(prefix);
        // arguments(Map) replaces what was set before it
        management().queue().name(q).arguments(more).deadLetterExchange("").deadLetterRoutingKey(dlq).declare();
        return new String[] {q, dlq};
    }

    Publisher publisher(String queue) {
        Publisher publisher = connection.publisherBuilder().queue(queue).build();
        closeAfter.add(publisher);
        return publisher;
    }

    /** Publishes and returns where the outcomes arrive. */
    static BlockingQueue<Publisher.Status> publish(Publisher publisher, Message message) {
        BlockingQueue<Publisher.Status> outcome = new LinkedBlockingQueue<>();
        publisher.publish(message, context -> outcome.add(context.status()));
        return outcome;
    }

    static Publisher.Status published(Publisher publisher, String body) throws InterruptedException {
        return publish(publisher, publisher.message(bytes(body))).poll(10, TimeUnit.SECONDS);
    }

    /** A consumer that hands every message to {@code handler} and records it. */
    Consumer consumer(String queue, BlockingQueue<Message> seen, Consumer.MessageHandler handler) {
        Consumer consumer = connection.consumerBuilder().queue(queue).messageHandler((context, message) -> {
            seen.add(message);
            handler.handle(context, message);
        }).build();
        closeAfter.add(consumer);
        return consumer;
    }

    /** The next message on the queue, accepted. */
    Message next(String queue) throws InterruptedException {
        BlockingQueue<Message> seen = new LinkedBlockingQueue<>();
        Consumer consumer = consumer(queue, seen, (context, message) -> context.accept());
        Message message = seen.poll(10, TimeUnit.SECONDS);
        consumer.close();
        assertThat(message).as("a message on " + queue).isNotNull();
        return message;
    }

    static GetResponse awaitGet(Channel channel, String queue) {
        java.util.concurrent.atomic.AtomicReference<GetResponse> got = new java.util.concurrent.atomic.AtomicReference<>();
        Amqp091Support.await().atMost(Amqp091Support.TIMEOUT).until(() -> {
            got.set(channel.basicGet(queue, false));
            return got.get() != null;
        });
        return got.get();
    }

    /** Takes one message from the queue with a raw pre-settled link and decodes it with proton-j. */
    static org.apache.qpid.proton.message.Message rawGet(String queue) throws Exception {
        try (RawClient client = RawClient.openSession(broker.port())) {
            client.attachReceiver(0, RawClient.source("/queues/" + queue), true);
            client.flow(0, 0, 1, false, false);
            return Messages.decode(client.read().payload());
        }
    }

    /** A proton-j symbol, as read off the wire. */
    static org.apache.qpid.proton.amqp.Symbol wire(String name) {
        return org.apache.qpid.proton.amqp.Symbol.valueOf(name);
    }

    static Symbol symbol(String name) {
        return Symbol.valueOf(name);
    }

    /**
     * Checks one {@code x-opt-deaths} entry as the client decodes it: its keys symbols, in RabbitMQ 4's order, and
     * its values of RabbitMQ's types (the client decodes a timestamp as a long: its wire type is checked in
     * {@link Amqp10DeadLetterTest#theHistoryIsEncodedWithRabbitMqsTypes}).
     */
    static void assertDeath(Object entry, String queue, String reason, long count, String exchange,
            List<String> routingKeys, long ttl, long firstTime, long lastTime) {
        assertThat(entry).isInstanceOf(Map.class);
        Map<?, ?> death = (Map<?, ?>) entry;
        List<Symbol> keys = new ArrayList<>();
        if (ttl >= 0) {
            keys.add(symbol("ttl"));
        }
        for (String key : List.of("queue", "reason", "count", "first-time", "last-time", "exchange", "routing-keys")) {
            keys.add(symbol(key));
        }
        assertThat(new ArrayList<Object>(death.keySet())).as("keys").isEqualTo(keys);
        if (ttl >= 0) {
            assertThat(death.get(symbol("ttl"))).isEqualTo(UnsignedInteger.valueOf(ttl));
        }
        assertThat(death.get(symbol("queue"))).isEqualTo(queue);
        assertThat(death.get(symbol("reason"))).isEqualTo(symbol(reason));
        assertThat(death.get(symbol("count"))).isEqualTo(UnsignedLong.valueOf(count));
        assertThat(death.get(symbol("first-time"))).isEqualTo(firstTime);
        assertThat(death.get(symbol("last-time"))).isEqualTo(lastTime);
        assertThat(death.get(symbol("exchange"))).isEqualTo(exchange);
        assertThat(death.get(symbol("routing-keys"))).isEqualTo(routingKeys.toArray(new String[0]));
    }

    static void assertFirstAndLast(Message message, String reason, String queue, String exchange) {
        for (String which : List.of("first", "last")) {
            assertThat(message.annotation("x-" + which + "-death-reason")).isEqualTo(reason);
            assertThat(message.annotation("x-" + which + "-death-queue")).isEqualTo(queue);
            assertThat(message.annotation("x-" + which + "-death-exchange")).isEqualTo(exchange);
        }
    }
}
