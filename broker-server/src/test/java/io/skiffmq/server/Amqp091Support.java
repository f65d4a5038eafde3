package io.skiffmq.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.DefaultConsumer;
import com.rabbitmq.client.Delivery;
import com.rabbitmq.client.Envelope;
import com.rabbitmq.client.ShutdownSignalException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import org.awaitility.Awaitility;
import org.awaitility.core.ConditionFactory;

/**
 * What the AMQP 0-9-1 end-to-end tests share: unique names (an external RabbitMQ keeps durable leftovers between
 * runs), the broker's error answers as the RabbitMQ Java client reports them, and a consumer that records what it
 * is told. The reply codes and texts asserted are RabbitMQ's ({@code rabbit_channel.erl}, {@code rabbit_reader.erl}).
 */
final class Amqp091Support {
    /** How long a test waits for something that should happen at once. */
    static final Duration TIMEOUT = Duration.ofSeconds(5);
    /** How long a test watches for something that must not happen (one more delivery, say). */
    static final Duration QUIET = Duration.ofMillis(300);

    private Amqp091Support() {
    }

    /** Awaitility, polling from the start and every 10 ms (its default waits 100 ms before the first look). */
    static ConditionFactory await() {
        return Awaitility.await().pollDelay(Duration.ZERO).pollInterval(Duration.ofMillis(10));
    }

    /** {@code prefix-} and eight random hex digits. */
    static String unique(String prefix) {
        return prefix + "-" + UUID.randomUUID().toString().substring(0, 8);
    }

    static byte[] bytes(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }

    static String text(byte[] body) {
        return new String(body, StandardCharsets.UTF_8);
    }

    /**
     * Whether the target is an external RabbitMQ older than {@code major.minor}: for tests of behaviour a later
     * RabbitMQ has (SkiffMQ implements RabbitMQ 4's), skipped against an older one checked against.
     */
    static boolean externalOlderThan(Amqp091Target target, int major, int minor) throws Exception {
        if (!target.external()) {
            return false;
        }
        try (Connection connection = target.factory().newConnection()) {
            String[] version = connection.getServerProperties().get("version").toString().split("\\.");
            int actualMajor = Integer.parseInt(version[0]);
            int actualMinor = Integer.parseInt(version[1]);
            return actualMajor < major || actualMajor == major && actualMinor < minor;
        }
    }

    /** An operation that throws (the client's calls throw IOException). */
    interface Operation {
        void run() throws Exception;
    }

    /**
     * Runs a synchronous operation the broker answers with {@code channel.close}: the operation throws an
     * IOException caused by a soft ShutdownSignalException, the channel is closed and its connection stays open.
     */
    static AMQP.Channel.Close channelError(Channel channel, int replyCode, String replyTextPrefix, Operation op) {
        Throwable thrown = catchThrowable(op::run);
        assertThat(thrown).as("the broker's answer").isNotNull();
        ShutdownSignalException signal = signal(thrown);
        assertThat(signal.isHardError()).as("a channel error, not a connection error: " + signal).isFalse();
        AMQP.Channel.Close close = (AMQP.Channel.Close) signal.getReason();
        assertClose(close.getReplyCode(), close.getReplyText(), replyCode, replyTextPrefix);
        assertThat(channel.isOpen()).isFalse();
        assertThat(channel.getConnection().isOpen()).as("the connection outlives a channel error").isTrue();
        return close;
    }

    /** Runs a synchronous operation the broker answers with {@code connection.close}. */
    static AMQP.Connection.Close connectionError(Connection connection, int replyCode, String replyTextPrefix,
            Operation op) {
        Throwable thrown = catchThrowable(op::run);
        assertThat(thrown).as("the broker's answer").isNotNull();
        ShutdownSignalException signal = signal(thrown);
        assertThat(signal.isHardError()).as("a connection error: " + signal).isTrue();
        AMQP.Connection.Close close = (AMQP.Connection.Close) signal.getReason();
        assertClose(close.getReplyCode(), close.getReplyText(), replyCode, replyTextPrefix);
        await().atMost(TIMEOUT).until(() -> !connection.isOpen());
        return close;
    }

    /** After an asynchronous operation (publish, ack): waits for the broker to close the channel, only it. */
    static AMQP.Channel.Close awaitChannelError(Channel channel, int replyCode, String replyTextPrefix) {
        await().atMost(TIMEOUT).until(() -> !channel.isOpen());
        ShutdownSignalException signal = channel.getCloseReason();
        assertThat(signal.isInitiatedByApplication()).as("closed by the broker: " + signal).isFalse();
        assertThat(signal.isHardError()).as("a channel error, not a connection error: " + signal).isFalse();
        AMQP.Channel.Close close = (AMQP.Channel.Close) signal.getReason();
        assertClose(close.getReplyCode(), close.getReplyText(), replyCode, replyTextPrefix);
        assertThat(channel.getConnection().isOpen()).as("the connection outlives a channel error").isTrue();
        return close;
    }

    /** After an asynchronous operation: waits for the broker to close the connection. */
    static AMQP.Connection.Close awaitConnectionError(Connection connection, int replyCode, String replyTextPrefix) {
        await().atMost(TIMEOUT).until(() -> !connection.isOpen());
        ShutdownSignalException signal = connection.getCloseReason();
        assertThat(signal.isInitiatedByApplication()).as("closed by the broker: " + signal).isFalse();
        assertThat(signal.isHardError()).as("a connection error: " + signal).isTrue();
        AMQP.Connection.Close close = (AMQP.Connection.Close) signal.getReason();
        assertClose(close.getReplyCode(), close.getReplyText(), replyCode, replyTextPrefix);
        return close;
    }

    private static void assertClose(int code, String text, int expectedCode, String expectedPrefix) {
        assertThat(code).as("reply code (" + text + ")").isEqualTo(expectedCode);
        assertThat(text).startsWith(expectedPrefix);
    }

    static ShutdownSignalException signal(Throwable thrown) {
        for (Throwable t = thrown; t != null; t = t.getCause()) {
            if (t instanceof ShutdownSignalException signal) {
                return signal;
            }
        }
        throw new AssertionError("no ShutdownSignalException in the chain", thrown);
    }

    /** Publishes with confirms on a channel of its own, so that counts asserted afterwards are exact. */
    static void publishConfirmed(Connection connection, String exchange, String routingKey,
            AMQP.BasicProperties properties, String... bodies) throws Exception {
        Channel channel = connection.createChannel();
        try {
            channel.confirmSelect();
            for (String body : bodies) {
                channel.basicPublish(exchange, routingKey, properties, bytes(body));
            }
            channel.waitForConfirmsOrDie(TIMEOUT.toMillis());
        } finally {
            channel.close();
        }
    }

    /** Publishes to a queue through the default exchange, with confirms. */
    static void sendToQueue(Connection connection, String queue, String... bodies) throws Exception {
        publishConfirmed(connection, "", queue, null, bodies);
    }

    /** The ready messages and the consumers of a queue, as a passive declare reports them. */
    /** Takes every message waiting in {@code queue} ({@code basic.get}, no acks): their bodies as text, in order. */
    static List<String> drain(Channel channel, String queue) throws IOException {
        List<String> bodies = new java.util.ArrayList<>();
        for (com.rabbitmq.client.GetResponse got; (got = channel.basicGet(queue, true)) != null; ) {
            bodies.add(text(got.getBody()));
        }
        return bodies;
    }

    static AMQP.Queue.DeclareOk passive(Connection connection, String queue) throws Exception {
        Channel channel = connection.createChannel();
        try {
            return channel.queueDeclarePassive(queue);
        } finally {
            channel.close();
        }
    }

    /** Whether a queue exists (a passive declare on a throwaway channel). */
    static boolean queueExists(Connection connection, String queue) throws Exception {
        Channel channel = connection.createChannel();
        try {
            channel.queueDeclarePassive(queue);
            channel.close();
            return true;
        } catch (IOException e) {
            AMQP.Channel.Close close = (AMQP.Channel.Close) signal(e).getReason();
            assertThat(close.getReplyCode()).isEqualTo(AMQP.NOT_FOUND);
            return false;
        }
    }

    /** Whether an exchange exists (a passive declare on a throwaway channel). */
    static boolean exchangeExists(Connection connection, String exchange) throws Exception {
        Channel channel = connection.createChannel();
        try {
            channel.exchangeDeclarePassive(exchange);
            channel.close();
            return true;
        } catch (IOException e) {
            AMQP.Channel.Close close = (AMQP.Channel.Close) signal(e).getReason();
            assertThat(close.getReplyCode()).isEqualTo(AMQP.NOT_FOUND);
            return false;
        }
    }

    /** A consumer that records its deliveries, consume-ok, cancel-ok and the broker's cancel. Thread-safe. */
    static final class Recorder extends DefaultConsumer {
        final List<Delivery> deliveries = new CopyOnWriteArrayList<>();
        final List<String> consumeOks = new CopyOnWriteArrayList<>();
        final List<String> cancelOks = new CopyOnWriteArrayList<>();
        /** The broker's {@code basic.cancel} (the queue went). */
        final List<String> brokerCancels = new CopyOnWriteArrayList<>();

        Recorder(Channel channel) {
            super(channel);
        }

        @Override
        public void handleConsumeOk(String consumerTag) {
            super.handleConsumeOk(consumerTag);
            consumeOks.add(consumerTag);
        }

        @Override
        public void handleCancelOk(String consumerTag) {
            cancelOks.add(consumerTag);
        }

        @Override
        public void handleCancel(String consumerTag) {
            brokerCancels.add(consumerTag);
        }

        @Override
        public void handleDelivery(String consumerTag, Envelope envelope, AMQP.BasicProperties properties,
                byte[] body) {
            deliveries.add(new Delivery(envelope, properties, body));
        }

        /** Waits for exactly {@code count} deliveries in all and returns them. */
        List<Delivery> awaitDeliveries(int count) {
            await().atMost(TIMEOUT).until(() -> deliveries.size() >= count);
            assertThat(deliveries).hasSize(count);
            return List.copyOf(deliveries);
        }

        /** Waits for {@code count} deliveries, then checks that no more come for a while. */
        List<Delivery> awaitExactly(int count) {
            awaitDeliveries(count);
            await().during(QUIET).atMost(QUIET.plus(TIMEOUT)).until(() -> deliveries.size() == count);
            return List.copyOf(deliveries);
        }

        List<String> bodies() {
            return deliveries.stream().map(d -> text(d.getBody())).toList();
        }

        long lastTag() {
            return deliveries.get(deliveries.size() - 1).getEnvelope().getDeliveryTag();
        }
    }
}
