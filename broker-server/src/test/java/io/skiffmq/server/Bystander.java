package io.skiffmq.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.rabbitmq.client.Channel;
import com.rabbitmq.client.ConnectionFactory;
import jakarta.jms.MessageConsumer;
import jakarta.jms.MessageProducer;
import jakarta.jms.Session;
import jakarta.jms.TextMessage;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.qpid.jms.JmsConnectionFactory;

/**
 * A well-behaved client that keeps doing round trips (publish one message, consume it back, check it) on a thread of
 * its own while a test mistreats the broker on other connections; it records the first error, the round trips done
 * and the longest wait between two of them. Connected (and authenticated) when made, before the mistreatment.
 * Counters are read from any thread.
 */
final class Bystander implements AutoCloseable {
    /** One client's round trip and its end. */
    interface RoundTrip extends AutoCloseable {
        /** Publishes {@code body} and consumes it back; fails when it does not come back. */
        void once(String body) throws Exception;
    }

    /** Numbers each bystander's queue: a bystander has a queue of its own. */
    private static final java.util.concurrent.atomic.AtomicInteger NEXT = new java.util.concurrent.atomic.AtomicInteger();

    private final RoundTrip roundTrip;
    private final Thread thread;
    private final AtomicLong done = new AtomicLong();
    private final AtomicLong longestGapNanos = new AtomicLong();
    private final AtomicReference<Throwable> error = new AtomicReference<>();
    private volatile long lastNanos = System.nanoTime();
    private volatile boolean stopping;

    private Bystander(String name, RoundTrip roundTrip) {
        this.roundTrip = roundTrip;
        this.thread = new Thread(this::run, "bystander-" + name);
        thread.setDaemon(true);
        thread.start();
    }

    /** A bystander on AMQP 1.0 (Qpid JMS): a queue of its own, a producer and a consumer. */
    static Bystander amqp10(int port) throws Exception {
        jakarta.jms.Connection connection = new JmsConnectionFactory("guest", "guest", "amqp://127.0.0.1:" + port)
            .createConnection();
        connection.start();
        Session session = connection.createSession(false, Session.AUTO_ACKNOWLEDGE);
        jakarta.jms.Queue queue = session.createQueue("bystander-amqp10-" + NEXT.incrementAndGet());
        MessageProducer producer = session.createProducer(queue);
        MessageConsumer consumer = session.createConsumer(queue);
        return new Bystander("amqp10", new RoundTrip() {
            @Override
            public void once(String body) throws Exception {
                producer.send(session.createTextMessage(body));
                jakarta.jms.Message received = consumer.receive(TimeUnit.SECONDS.toMillis(30));
                assertThat(received).as("round trip %s", body).isNotNull();
                assertThat(((TextMessage) received).getText()).isEqualTo(body);
            }

            @Override
            public void close() throws Exception {
                connection.close();
            }
        });
    }

    /** A bystander on AMQP 0-9-1 (the RabbitMQ Java client): a queue of its own, publish and a consumer. */
    static Bystander amqp091(int port) throws Exception {
        ConnectionFactory factory = new ConnectionFactory();
        factory.setPort(port);
        factory.setHost("127.0.0.1");
        factory.setAutomaticRecoveryEnabled(false);
        com.rabbitmq.client.Connection connection = factory.newConnection("bystander");
        Channel channel = connection.createChannel();
        String queue = channel.queueDeclare("bystander-amqp091-" + NEXT.incrementAndGet(), false, false, false,
            null).getQueue();
        java.util.concurrent.BlockingQueue<String> received = new java.util.concurrent.LinkedBlockingQueue<>();
        channel.basicConsume(queue, true, (tag, delivery) ->
            received.add(new String(delivery.getBody(), StandardCharsets.UTF_8)), tag -> { });
        return new Bystander("amqp091", new RoundTrip() {
            @Override
            public void once(String body) throws Exception {
                channel.basicPublish("", queue, null, body.getBytes(StandardCharsets.UTF_8));
                assertThat(received.poll(30, TimeUnit.SECONDS)).as("round trip %s", body).isEqualTo(body);
            }

            @Override
            public void close() throws Exception {
                connection.close();
            }
        });
    }

    /** A bystander on the stream protocol (the stream Java client): a stream of its own, a producer, a consumer. */
    static Bystander stream(int port) throws Exception {
        // tried again: the replays' brokers close a connection whose handshake takes past 1 s, and a busy machine's
        // first stream connection in a fresh JVM (the client's classes loading) can take that long
        com.rabbitmq.stream.Environment environment = org.awaitility.Awaitility.await()
            .atMost(java.time.Duration.ofSeconds(60)).ignoreExceptions()
            .until(() -> StreamClients.builder(port).build(), java.util.Objects::nonNull);
        String stream = "bystander-stream-" + NEXT.incrementAndGet();
        environment.streamCreator().stream(stream).create();
        com.rabbitmq.stream.Producer producer = environment.producerBuilder().stream(stream).build();
        java.util.concurrent.BlockingQueue<String> received = new java.util.concurrent.LinkedBlockingQueue<>();
        com.rabbitmq.stream.Consumer consumer = environment.consumerBuilder().stream(stream)
            .messageHandler((context, message) -> received.add(StreamClients.text(message))).build();
        return new Bystander("stream", new RoundTrip() {
            @Override
            public void once(String body) throws Exception {
                java.util.concurrent.CompletableFuture<Boolean> confirmed = new java.util.concurrent.CompletableFuture<>();
                producer.send(producer.messageBuilder().addData(StreamClients.bytes(body)).build(),
                    status -> confirmed.complete(status.isConfirmed()));
                assertThat(confirmed.get(30, TimeUnit.SECONDS)).as("confirm of %s", body).isTrue();
                assertThat(received.poll(30, TimeUnit.SECONDS)).as("round trip %s", body).isEqualTo(body);
            }

            @Override
            public void close() {
                consumer.close();
                producer.close();
                environment.close();
            }
        });
    }

    private void run() {
        while (!stopping) {
            try {
                roundTrip.once("round trip " + done.get());
            } catch (Throwable e) {
                if (!stopping) {
                    error.compareAndSet(null, e);
                }
                return;
            }
            long now = System.nanoTime();
            longestGapNanos.accumulateAndGet(now - lastNanos, Math::max);
            lastNanos = now;
            done.incrementAndGet();
        }
    }

    /** Its first error, or null. */
    Throwable error() {
        return error.get();
    }

    /** Round trips done so far. */
    long roundTrips() {
        return done.get();
    }

    /**
     * Fails unless the bystander saw no error, did at least {@code atLeast} round trips, and never waited longer
     * than {@code maxGapMillis} for one (up to now).
     */
    void assertHealthy(long atLeast, long maxGapMillis) {
        if (error.get() != null) {
            throw new AssertionError("the bystander failed after " + done.get() + " round trips", error.get());
        }
        assertThat(done.get()).as("the bystander's round trips").isGreaterThanOrEqualTo(atLeast);
        long gap = Math.max(longestGapNanos.get(), System.nanoTime() - lastNanos);
        assertThat(TimeUnit.NANOSECONDS.toMillis(gap)).as("the bystander's longest wait for a round trip, ms")
            .isLessThan(maxGapMillis);
    }

    /** The longest wait for a round trip so far, ms. */
    long longestGapMillis() {
        return TimeUnit.NANOSECONDS.toMillis(longestGapNanos.get());
    }

    @Override
    public void close() throws Exception {
        stopping = true;
        thread.join(TimeUnit.SECONDS.toMillis(35));
        roundTrip.close();
    }
}
