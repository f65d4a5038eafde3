package io.skiffmq.server;

import static io.skiffmq.server.Amqp091Support.TIMEOUT;
import static io.skiffmq.server.Amqp091Support.await;
import static io.skiffmq.server.Amqp091Support.text;
import static io.skiffmq.server.Amqp091Support.unique;
import static org.assertj.core.api.Assertions.assertThat;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.GetResponse;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Date;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;

/**
 * What the AMQP 0-9-1 tests of queue arguments share. The broker runs on {@link #time}: a manual clock for SkiffMQ,
 * the wall clock for an external RabbitMQ. (The {@code @BeforeAll} here hides {@link Amqp091ClientTest}'s, which
 * JUnit then does not run.) The queues and exchanges a test declares through {@link #queue} and {@link #exchange}
 * are deleted after it, on a connection of their own, since an external broker keeps them.
 */
abstract class Amqp091ArgumentsTestBase extends Amqp091ClientTest {
    protected static TestTime time;
    private final List<String> queues = new ArrayList<>();
    private final List<String> exchanges = new ArrayList<>();

    @BeforeAll
    static void startBroker() throws Exception {
        TestTime manual = TestTime.onManualClock();
        target = Amqp091Target.start(manual.clock());
        time = target.external() ? TestTime.onWallClock() : manual;
    }

    @AfterEach
    void deleteDeclared() throws Exception {
        try (Connection cleaner = target.factory().newConnection("cleanup")) {
            for (String queue : queues) {
                try (Channel c = cleaner.createChannel()) {
                    c.queueDelete(queue);
                }
            }
            for (String exchange : exchanges) {
                try (Channel c = cleaner.createChannel()) {
                    c.exchangeDelete(exchange);
                }
            }
        }
    }

    /** A map of {@code key, value, key, value, …}, in that order. */
    static Map<String, Object> args(Object... keysAndValues) {
        Map<String, Object> map = new LinkedHashMap<>();
        for (int i = 0; i < keysAndValues.length; i += 2) {
            map.put((String) keysAndValues[i], keysAndValues[i + 1]);
        }
        return map;
    }

    /** A unique name for a queue the test declares some other way; deleted after the test. */
    String queueName(String prefix) {
        String name = unique(prefix);
        queues.add(name);
        return name;
    }

    /** A unique non-durable, shared queue declared on {@link #channel} with these arguments; deleted after the test. */
    String queue(String prefix, Object... arguments) throws IOException {
        String name = queueName(prefix);
        channel.queueDeclare(name, false, false, false, args(arguments));
        return name;
    }

    /** A unique exchange of this type; deleted after the test. */
    String exchange(String prefix, String type) throws IOException {
        String name = unique(prefix);
        exchanges.add(name);
        channel.exchangeDeclare(name, type);
        return name;
    }

    /** The ready messages of a queue, by a passive declare on a channel of its own (which counts as a use). */
    int ready(String queue) throws Exception {
        return Amqp091Support.passive(connection, queue).getMessageCount();
    }

    /** Publishes through the default exchange with confirms, all acked. */
    void send(String queue, String... bodies) throws Exception {
        Amqp091Support.sendToQueue(connection, queue, bodies);
    }

    /** Publishes one message with these properties, confirmed (acked). */
    void send(String exchange, String routingKey, AMQP.BasicProperties properties, String body) throws Exception {
        Amqp091Support.publishConfirmed(connection, exchange, routingKey, properties, body);
    }

    /** Takes the queue's ready messages one {@code basic.get} (auto-ack) at a time: their bodies, in order. */
    List<String> getAll(String queue) throws IOException {
        List<String> bodies = new ArrayList<>();
        for (GetResponse got; (got = channel.basicGet(queue, true)) != null; ) {
            bodies.add(text(got.getBody()));
        }
        return bodies;
    }

    /**
     * Waits for a message to {@code basic.get} from the queue (dead-lettering reaches it asynchronously) and returns
     * it; unacknowledged unless {@code autoAck}.
     */
    GetResponse awaitGet(String queue, boolean autoAck) {
        AtomicReference<GetResponse> got = new AtomicReference<>();
        await().atMost(TIMEOUT).until(() -> {
            got.set(channel.basicGet(queue, autoAck));
            return got.get() != null;
        });
        return got.get();
    }

    /** A message with an {@code expiration} (its own TTL, in milliseconds). */
    static AMQP.BasicProperties expiring(long millis) {
        return new AMQP.BasicProperties.Builder().expiration(Long.toString(millis)).build();
    }

    /** The message's {@code x-death} tables, most recent first. */
    @SuppressWarnings("unchecked")
    static List<Map<String, Object>> xDeath(AMQP.BasicProperties properties) {
        assertThat(properties.getHeaders()).as("headers").containsKey("x-death");
        return (List<Map<String, Object>>) properties.getHeaders().get("x-death");
    }

    /**
     * Checks one {@code x-death} table field by field, as RabbitMQ writes it ({@code mc_amqpl:death_table/7}): count
     * (long), reason, queue, time (seconds, the first death's, within {@code [from, to]} milliseconds), exchange,
     * routing-keys, and original-expiration only when the message had a TTL of its own.
     */
    static void assertDeath(Map<String, Object> death, String queue, String reason, long count, String exchange,
            List<String> routingKeys, String originalExpiration, long from, long to) {
        assertThat(death.get("count")).as("count").isEqualTo(count);
        assertThat(String.valueOf(death.get("reason"))).as("reason").isEqualTo(reason);
        assertThat(String.valueOf(death.get("queue"))).as("queue").isEqualTo(queue);
        assertThat(String.valueOf(death.get("exchange"))).as("exchange").isEqualTo(exchange);
        assertThat(((List<?>) death.get("routing-keys")).stream().map(String::valueOf).toList()).as("routing-keys")
            .isEqualTo(routingKeys);
        assertThat(death.get("time")).as("time").isInstanceOf(Date.class);
        long time = ((Date) death.get("time")).getTime();
        assertThat(time % 1000).as("0-9-1 timestamps are whole seconds").isZero();
        assertThat(time).as("time").isBetween(from / 1000 * 1000, to);
        if (originalExpiration == null) {
            assertThat(death).as("no original-expiration").doesNotContainKey("original-expiration");
        } else {
            assertThat(String.valueOf(death.get("original-expiration"))).as("original-expiration")
                .isEqualTo(originalExpiration);
        }
        assertThat(death).as("no other fields").containsOnlyKeys(originalExpiration == null
            ? List.of("count", "reason", "queue", "time", "exchange", "routing-keys")
            : List.of("count", "reason", "queue", "time", "exchange", "routing-keys", "original-expiration"));
    }

    /**
     * Checks the {@code x-first-death-*} headers, and the {@code x-last-death-*} ones RabbitMQ writes since 3.13
     * ({@code mc:record_death/3}); 3.12 and older write the first ones only, and those are all an older external
     * RabbitMQ is asked for.
     */
    static void assertFirstAndLast(AMQP.BasicProperties properties, String firstReason, String firstQueue,
            String firstExchange, String lastReason, String lastQueue, String lastExchange) throws Exception {
        Map<String, Object> headers = properties.getHeaders();
        assertThat(String.valueOf(headers.get("x-first-death-reason"))).isEqualTo(firstReason);
        assertThat(String.valueOf(headers.get("x-first-death-queue"))).isEqualTo(firstQueue);
        assertThat(String.valueOf(headers.get("x-first-death-exchange"))).isEqualTo(firstExchange);
        if (Amqp091Support.externalOlderThan(target, 3, 13)) {
            assertThat(headers).doesNotContainKeys("x-last-death-reason", "x-last-death-queue", "x-last-death-exchange");
            return;
        }
        assertThat(String.valueOf(headers.get("x-last-death-reason"))).isEqualTo(lastReason);
        assertThat(String.valueOf(headers.get("x-last-death-queue"))).isEqualTo(lastQueue);
        assertThat(String.valueOf(headers.get("x-last-death-exchange"))).isEqualTo(lastExchange);
    }
}
