package io.skiffmq.server;

import static io.skiffmq.server.Amqp091Support.TIMEOUT;
import static io.skiffmq.server.Amqp091Support.await;
import static io.skiffmq.server.Amqp091Support.unique;
import static org.assertj.core.api.Assertions.assertThat;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.amqp.Connection;
import com.rabbitmq.client.amqp.Consumer;
import com.rabbitmq.client.amqp.ConsumerBuilder;
import com.rabbitmq.client.amqp.ConsumerBuilder.StreamOffsetSpecification;
import com.rabbitmq.client.amqp.Environment;
import com.rabbitmq.client.amqp.Management;
import com.rabbitmq.client.amqp.Message;
import com.rabbitmq.client.amqp.Publisher;
import com.rabbitmq.client.amqp.impl.AmqpEnvironmentBuilder;
import io.skiffmq.codec.testing.LeakDetection;
import jakarta.jms.MessageConsumer;
import jakarta.jms.Session;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;
import org.apache.qpid.jms.JmsConnectionFactory;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Streams read over AMQP 1.0 with RabbitMQ's AMQP 1.0 Java client and its stream options (offset specifications,
 * filter values, match-unfiltered): every delivery carries {@code x-stream-offset}, the client keeps the link only
 * because the filters are echoed, and messages cross to and from 0-9-1 as RabbitMQ 4 converts them.
 */
@ExtendWith(LeakDetection.class)
class Amqp10StreamTest {
    private static RunningBroker broker;
    private static Environment environment;
    private static Connection connection;
    private static com.rabbitmq.client.Connection amqp091;

    private final List<AutoCloseable> closeAfter = new ArrayList<>();
    private final List<String> streams = new ArrayList<>();

    @BeforeAll
    static void start() throws Exception {
        broker = RunningBroker.start();
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
    void cleanUp() throws Exception {
        for (AutoCloseable resource : closeAfter) {
            resource.close();
        }
        for (String stream : streams) {
            connection.management().queueDelete(stream);
        }
    }

    private String stream(String prefix) {
        String name = unique(prefix);
        connection.management().queue(name).type(Management.QueueType.STREAM).declare();
        streams.add(name);
        return name;
    }

    /** Publishes {@code count} messages, each confirmed before the next: one chunk each. */
    private void publishEach(String stream, int count, UnaryOperator<Message> shape) throws InterruptedException {
        try (Publisher publisher = connection.publisherBuilder().queue(stream).build()) {
            for (int i = 0; i < count; i++) {
                publishAll(publisher, List.of(shape.apply(publisher.message(bytes("m" + i)))));
            }
        }
    }

    /** Publishes {@code count} messages together and waits for all their confirms. */
    private void publishTogether(String stream, int count, String body, UnaryOperator<Message> shape)
            throws InterruptedException {
        try (Publisher publisher = connection.publisherBuilder().queue(stream).build()) {
            List<Message> messages = new ArrayList<>();
            for (int i = 0; i < count; i++) {
                messages.add(shape.apply(publisher.message(bytes(body))));
            }
            publishAll(publisher, messages);
        }
    }

    private static void publishAll(Publisher publisher, List<Message> messages) throws InterruptedException {
        CountDownLatch accepted = new CountDownLatch(messages.size());
        for (Message message : messages) {
            publisher.publish(message, context -> {
                if (context.status() == Publisher.Status.ACCEPTED) {
                    accepted.countDown();
                }
            });
        }
        assertThat(accepted.await(10, TimeUnit.SECONDS)).as("every message accepted").isTrue();
    }

    private static byte[] bytes(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }

    private static String text(Message message) {
        return new String(message.body(), StandardCharsets.UTF_8);
    }

    /** A consumer of {@code stream} with the options {@code options} sets, recording what it gets (accepted). */
    private List<Message> consume(String stream, UnaryOperator<ConsumerBuilder.StreamOptions> options) {
        List<Message> received = new CopyOnWriteArrayList<>();
        ConsumerBuilder builder = connection.consumerBuilder().queue(stream).messageHandler((context, message) -> {
            received.add(message);
            context.accept();
        });
        Consumer consumer = options.apply(builder.stream()).builder().build();
        closeAfter.add(consumer);
        return received;
    }

    private static List<Long> offsets(List<Message> messages) {
        return messages.stream().map(m -> (Long) m.annotation("x-stream-offset")).toList();
    }

    private static List<Long> range(long from, long to) {
        List<Long> values = new ArrayList<>();
        for (long i = from; i <= to; i++) {
            values.add(i);
        }
        return values;
    }

    @Test
    void eachOffsetSpecificationReadsFromWhereItSaysWithTheOffsetOnEveryDelivery() throws Exception {
        String stream = stream("amqp-offsets");
        publishEach(stream, 10, m -> m);

        List<Message> first = consume(stream, o -> o.offset(StreamOffsetSpecification.FIRST));
        List<Message> fromFive = consume(stream, o -> o.offset(5L));
        List<Message> last = consume(stream, o -> o.offset(StreamOffsetSpecification.LAST));
        List<Message> earlier = consume(stream, o -> o.offset(Instant.now().minus(Duration.ofMinutes(10))));
        List<Message> interval = consume(stream, o -> o.offset("10m"));
        List<Message> next = consume(stream, o -> o.offset(StreamOffsetSpecification.NEXT));
        List<Message> future = consume(stream, o -> o.offset(Instant.now().plus(Duration.ofHours(1))));
        await().atMost(TIMEOUT).until(() -> first.size() == 10 && fromFive.size() == 5 && last.size() == 1
            && earlier.size() == 10 && interval.size() == 10);
        assertThat(offsets(first)).isEqualTo(range(0, 9));
        assertThat(first.stream().map(Amqp10StreamTest::text).toList()).startsWith("m0", "m1").endsWith("m9");
        assertThat(offsets(fromFive)).isEqualTo(range(5, 9));
        assertThat(offsets(last)).as("the last chunk: the last message, each was a chunk").containsExactly(9L);
        assertThat(offsets(earlier)).isEqualTo(range(0, 9));
        assertThat(offsets(interval)).isEqualTo(range(0, 9));
        assertThat(next).isEmpty();
        assertThat(future).isEmpty();

        publishEach(stream, 1, m -> m);
        await().atMost(TIMEOUT).until(() -> next.size() == 1 && future.size() == 1 && first.size() == 11);
        assertThat(offsets(next)).containsExactly(10L);
        assertThat(offsets(future)).as("nothing written at or after then: from the next on").containsExactly(10L);
        assertThat(offsets(first)).isEqualTo(range(0, 10));
    }

    @Test
    void aFilteringConsumerSkipsTheChunksItsValuesRuleOut() throws Exception {
        String stream = stream("amqp-filter");
        for (String value : List.of("apple", "orange", "", "banana")) {
            // each wave confirmed before the next: waves never share a chunk
            publishTogether(stream, 50, value.isEmpty() ? "none" : value,
                m -> value.isEmpty() ? m : m.annotation("x-stream-filter-value", value));
        }
        publishTogether(stream, 1, "end", m -> m.annotation("x-stream-filter-value", "banana"));

        List<Message> banana = consume(stream, o -> o.offset(StreamOffsetSpecification.FIRST)
            .filterValues("banana").filterMatchUnfiltered(false));
        List<Message> bananaOrNone = consume(stream, o -> o.offset(StreamOffsetSpecification.FIRST)
            .filterValues("banana").filterMatchUnfiltered(true));
        List<Message> everything = consume(stream, o -> o.offset(StreamOffsetSpecification.FIRST));
        // in offset order: once the last message is there, everything before it that is read is too
        await().atMost(TIMEOUT).until(() -> ends(banana) && ends(bananaOrNone) && ends(everything));
        assertThat(banana).hasSize(51).allSatisfy(m -> assertThat(m.annotation("x-stream-filter-value"))
            .isEqualTo("banana"));
        assertThat(bananaOrNone).hasSize(101);
        assertThat(bananaOrNone.stream().map(Amqp10StreamTest::text).distinct().toList())
            .containsExactly("none", "banana", "end");
        assertThat(everything).hasSize(201);
    }

    private static boolean ends(List<Message> messages) {
        return !messages.isEmpty() && text(messages.get(messages.size() - 1)).equals("end");
    }

    @Test
    void aMessagePublishedOver091IsReadOverAmqp10AsRabbitMqConvertsIt() throws Exception {
        String stream = stream("from-091");
        com.rabbitmq.client.Channel channel = amqp091.createChannel();
        channel.exchangeDeclare("stream-in", "direct");
        channel.queueBind(stream, "stream-in", "to-stream");
        channel.confirmSelect();
        AMQP.BasicProperties properties = new AMQP.BasicProperties.Builder().contentType("text/plain")
            .messageId("m-1").headers(Map.of("colour", "blue", "x-stream-filter-value", "blue")).deliveryMode(2)
            .build();
        channel.basicPublish("stream-in", "to-stream", properties, bytes("over 0-9-1"));
        channel.basicPublish("", stream, null, bytes("default exchange"));
        channel.waitForConfirmsOrDie(TIMEOUT.toMillis());
        channel.exchangeDelete("stream-in");
        channel.close();

        List<Message> received = consume(stream, o -> o.offset(StreamOffsetSpecification.FIRST));
        await().atMost(TIMEOUT).until(() -> received.size() == 2);
        Message converted = received.get(0);
        assertThat(text(converted)).isEqualTo("over 0-9-1");
        assertThat(converted.contentType()).isEqualTo("text/plain");
        assertThat(converted.messageId()).isEqualTo("m-1");
        assertThat(converted.property("colour")).isEqualTo("blue");
        assertThat(converted.annotation("x-stream-filter-value")).isEqualTo("blue");
        assertThat(converted.annotation("x-exchange")).isEqualTo("stream-in");
        assertThat(converted.annotation("x-routing-key")).isEqualTo("to-stream");
        assertThat(converted.annotation("x-stream-offset")).isEqualTo(0L);
        assertThat(received.get(1).annotation("x-exchange")).isEqualTo("");
        assertThat(received.get(1).annotation("x-routing-key")).isEqualTo(stream);
        assertThat(received.get(1).annotation("x-stream-offset")).isEqualTo(1L);

        // the 0-9-1 filter value header went into the chunk's Bloom filter
        List<Message> blue = consume(stream, o -> o.offset(StreamOffsetSpecification.FIRST).filterValues("blue"));
        await().atMost(TIMEOUT).until(() -> !blue.isEmpty());
        assertThat(text(blue.get(0))).isEqualTo("over 0-9-1");
    }

    @Test
    void aMessagePublishedOverAmqp10IsReadOver091AsRabbitMqConvertsIt() throws Exception {
        String stream = stream("to-091");
        publishEach(stream, 1, m -> m.messageId("id-7").contentType("text/plain").property("colour", "red")
            .annotation("x-opt-tag", "t"));
        com.rabbitmq.client.Channel channel = amqp091.createChannel();
        channel.basicQos(10);
        Amqp091Support.Recorder recorder = new Amqp091Support.Recorder(channel);
        channel.basicConsume(stream, false, Map.of("x-stream-offset", "first"), recorder);
        com.rabbitmq.client.Delivery delivery = recorder.awaitDeliveries(1).get(0);
        assertThat(new String(delivery.getBody(), StandardCharsets.UTF_8)).isEqualTo("m0");
        assertThat(delivery.getProperties().getMessageId()).isEqualTo("id-7");
        assertThat(delivery.getProperties().getContentType()).isEqualTo("text/plain");
        assertThat(delivery.getProperties().getHeaders()).containsEntry("x-stream-offset", 0L)
            .containsKeys("colour", "x-opt-tag");
        assertThat(delivery.getProperties().getHeaders().get("colour").toString()).isEqualTo("red");
        assertThat(delivery.getEnvelope().getExchange()).isEmpty();
        assertThat(delivery.getEnvelope().getRoutingKey()).isEqualTo(stream);
        channel.close();
    }

    @Test
    void aStreamWrittenOverTheStreamProtocolIsReadOverAmqp10WithItsFilterAndOver091() throws Exception {
        String stream = stream("from-stream-protocol");
        try (com.rabbitmq.stream.Environment streams = StreamClients.environment(broker);
                com.rabbitmq.stream.Producer producer = streams.producerBuilder().stream(stream)
                    .filterValue(m -> (String) m.getApplicationProperties().get("region")).build()) {
            for (String region : List.of("emea", "amer", "emea")) {
                // each confirmed before the next: a chunk each, so a filter can skip the others
                CountDownLatch confirmed = new CountDownLatch(1);
                producer.send(producer.messageBuilder().properties().messageId("id-" + region).messageBuilder()
                    .applicationProperties().entry("region", region).messageBuilder()
                    .addData(bytes("from " + region)).build(), status -> {
                        if (status.isConfirmed()) {
                            confirmed.countDown();
                        }
                    });
                assertThat(confirmed.await(10, TimeUnit.SECONDS)).isTrue();
            }
        }
        List<Message> amer = consume(stream, o -> o.offset(StreamOffsetSpecification.FIRST).filterValues("amer"));
        List<Message> all = consume(stream, o -> o.offset(StreamOffsetSpecification.FIRST));
        await().atMost(TIMEOUT).until(() -> all.size() == 3 && !amer.isEmpty());
        assertThat(amer).singleElement().satisfies(m -> {
            assertThat(text(m)).isEqualTo("from amer");
            assertThat(m.messageIdAsString()).isEqualTo("id-amer");
            assertThat(m.property("region")).isEqualTo("amer");
            assertThat(m.annotation("x-stream-offset")).isEqualTo(1L);
        });
        assertThat(offsets(all)).isEqualTo(range(0, 2));

        com.rabbitmq.client.Channel channel = amqp091.createChannel();
        channel.basicQos(10);
        Amqp091Support.Recorder recorder = new Amqp091Support.Recorder(channel);
        channel.basicConsume(stream, false, Map.of("x-stream-offset", 1L), recorder);
        com.rabbitmq.client.Delivery delivery = recorder.awaitDeliveries(2).get(0);
        assertThat(new String(delivery.getBody(), StandardCharsets.UTF_8)).isEqualTo("from amer");
        assertThat(delivery.getProperties().getMessageId()).isEqualTo("id-amer");
        assertThat(delivery.getProperties().getHeaders()).containsEntry("x-stream-offset", 1L);
        assertThat(delivery.getProperties().getHeaders().get("region").toString()).isEqualTo("amer");
        assertThat(delivery.getEnvelope().getRoutingKey()).as("as RabbitMQ reads a stream protocol message")
            .isEqualTo(stream);
        channel.close();
    }

    @Test
    void aJmsConsumerOnAStreamGetsWhatItsSelectorMatchesFromTheNextMessageOn() throws Exception {
        String stream = stream("jms-stream");
        publishEach(stream, 1, m -> m.property("colour", "red")); // before the consumer: not read
        JmsConnectionFactory factory = new JmsConnectionFactory("guest", "guest", broker.amqpUri());
        try (jakarta.jms.Connection jms = factory.createConnection()) {
            jms.start();
            Session session = jms.createSession(false, Session.AUTO_ACKNOWLEDGE);
            MessageConsumer consumer = session.createConsumer(session.createQueue(stream), "colour = 'red'");
            publishEach(stream, 1, m -> m.property("colour", "blue"));
            publishEach(stream, 1, m -> m.property("colour", "red"));
            jakarta.jms.Message got = consumer.receive(TIMEOUT.toMillis());
            assertThat(got).isNotNull();
            assertThat(got.getStringProperty("colour")).isEqualTo("red");
            assertThat(got.getBody(byte[].class)).isEqualTo(bytes("m0"));
            // the blue one came before it, and was skipped; the red one before the consumer was never read
            assertThat(consumer.receiveNoWait()).isNull();
        }
    }
}
