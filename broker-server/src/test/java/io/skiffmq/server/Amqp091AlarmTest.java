package io.skiffmq.server;

import static io.skiffmq.server.Amqp091Support.QUIET;
import static io.skiffmq.server.Amqp091Support.TIMEOUT;
import static io.skiffmq.server.Amqp091Support.await;
import static io.skiffmq.server.Amqp091Support.bytes;
import static io.skiffmq.server.Amqp091Support.text;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.MessageProperties;
import io.skiffmq.core.alarm.ResourceAlarms.Resource;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Memory and disk alarms over AMQP 0-9-1, with the broker's readings fed by the test ({@link ForcedAlarms}): a
 * connection that publishes during an alarm is blocked (the RabbitMQ Java client's {@code BlockedListener} hears
 * {@code connection.blocked} and {@code unblocked}), a consumer on another connection keeps consuming and acking,
 * and after the alarm every message is there, once. A client without the {@code connection.blocked} capability is
 * not told, but is not read either.
 */
class Amqp091AlarmTest extends Amqp091ClientTest {
    private ForcedAlarms alarms;

    @BeforeEach
    void forceAlarms() {
        assumeFalse(target.external(), "the test feeds SkiffMQ's own resource readings");
        alarms = target.broker().forceAlarms();
    }

    @AfterEach
    void clearAlarms() {
        if (alarms != null) {
            for (Resource resource : Resource.values()) {
                alarms.clear(resource);
            }
        }
    }

    @ParameterizedTest
    @EnumSource(Resource.class)
    void aPublisherIsBlockedWhileAConsumerKeepsConsumingAndNothingIsLost(Resource resource) throws Exception {
        String queue = "alarm-091-" + resource;
        channel.queueDeclare(queue, true, false, false, null);
        BlockingQueue<String> events = new LinkedBlockingQueue<>();
        connection.addBlockedListener(reason -> events.add("blocked: " + reason), () -> events.add("unblocked"));
        channel.confirmSelect();
        Set<String> published = ConcurrentHashMap.newKeySet();
        for (int i = 0; i < 100; i++) {
            publish(queue, "before-" + i, published);
        }
        channel.waitForConfirmsOrDie(TIMEOUT.toMillis());

        alarms.raise(resource);
        // the publish that finds the alarm up is taken; then the connection is blocked
        publish(queue, "during-0", published);
        assertThat(events.poll(TIMEOUT.toSeconds(), TimeUnit.SECONDS)).isEqualTo("blocked: low on " + resource.text());
        // these reach the socket, which the broker no longer reads
        for (int i = 1; i < 100; i++) {
            publish(queue, "during-" + i, published);
        }

        List<String> received = new CopyOnWriteArrayList<>();
        List<String> consumerEvents = new CopyOnWriteArrayList<>();
        try (Connection consuming = target.factory().newConnection()) {
            consuming.addBlockedListener(reason -> consumerEvents.add(reason), () -> consumerEvents.add("unblocked"));
            Channel consumer = consuming.createChannel();
            consumer.basicQos(10); // so deliveries go on only as the broker reads the acks
            consumer.basicConsume(queue, false, (tag, delivery) -> {
                received.add(text(delivery.getBody()));
                consumer.basicAck(delivery.getEnvelope().getDeliveryTag(), false);
            }, tag -> { });
            await().atMost(TIMEOUT).untilAsserted(() -> assertThat(received).hasSize(101));
            await().during(QUIET).atMost(QUIET.plus(TIMEOUT)).until(() -> received.size() == 101);
            assertThat(received).as("the backlog and the publish that found the alarm up").contains("during-0")
                .doesNotContain("during-1");
            assertThat(events).as("still blocked").isEmpty();

            alarms.clear(resource);
            assertThat(events.poll(TIMEOUT.toSeconds(), TimeUnit.SECONDS)).isEqualTo("unblocked");
            channel.waitForConfirmsOrDie(TIMEOUT.toMillis());
            await().atMost(TIMEOUT).until(() -> received.size() == published.size());
            assertThat(consumerEvents).as("a connection that only consumes is never blocked").isEmpty();
        }
        assertThat(received).as("every message once").doesNotHaveDuplicates();
        assertThat(Set.copyOf(received)).isEqualTo(published);
        // and publishing goes on as before
        publish(queue, "after", published);
        channel.waitForConfirmsOrDie(TIMEOUT.toMillis());
        assertThat(events).isEmpty();
    }

    private void publish(String queue, String body, Set<String> published) throws Exception {
        published.add(body);
        channel.basicPublish("", queue, MessageProperties.PERSISTENT_TEXT_PLAIN, bytes(body));
    }

    @Test
    void aConnectionPublishingBeforeTheAlarmIsNotBlockedUntilItPublishesAgain() throws Exception {
        String queue = channel.queueDeclare("", false, true, false, null).getQueue();
        List<String> events = new CopyOnWriteArrayList<>();
        connection.addBlockedListener(events::add, () -> events.add("unblocked"));
        channel.basicPublish("", queue, null, bytes("before"));
        // a round trip: the publish was read before the alarm rises (read during it, it would block the connection)
        assertThat(channel.queueDeclarePassive(queue).getMessageCount()).isEqualTo(1);
        alarms.raise(Resource.MEMORY);
        // other methods are still read and answered
        assertThat(channel.queueDeclarePassive(queue).getMessageCount()).isEqualTo(1);
        assertThat(events).isEmpty();
        alarms.clear(Resource.MEMORY);
        assertThat(channel.queueDeclarePassive(queue).getMessageCount()).isEqualTo(1);
        assertThat(events).as("never blocked, so never unblocked").isEmpty();
    }

    @Test
    void aClientWithoutTheCapabilityIsNotToldButNotReadEither() throws Exception {
        try (Raw091Client client = Raw091Client.open(target, 0, 0, 0)) {
            client.send(1, new AMQP.Channel.Open.Builder().build());
            client.expect(AMQP.Channel.OpenOk.class);
            client.send(1, new AMQP.Queue.Declare.Builder().queue("alarm-raw").autoDelete(true).build());
            client.expect(AMQP.Queue.DeclareOk.class);

            alarms.raise(Resource.DISK);
            client.send(1, new AMQP.Basic.Publish.Builder().routingKey("alarm-raw").build());
            byte[] body = bytes("held");
            client.writeFrame(Raw091Client.HEADER, 1, contentHeader(body.length), Raw091Client.FRAME_END);
            client.writeFrame(Raw091Client.BODY, 1, body, Raw091Client.FRAME_END);
            client.send(1, new AMQP.Queue.Declare.Builder().queue("alarm-raw").passive(true).build());
            client.soTimeout((int) QUIET.toMillis());
            try {
                Raw091Client.Frame frame = client.read();
                throw new AssertionError("expected silence while blocked, got frame type " + frame.type() + " "
                    + (frame.type() == Raw091Client.METHOD ? frame.method() : ""));
            } catch (SocketTimeoutException expected) {
                // no connection.blocked (not asked for), and the declare is not read
            }
            client.soTimeout((int) TIMEOUT.toMillis());

            alarms.clear(Resource.DISK);
            AMQP.Queue.DeclareOk declared = client.expect(AMQP.Queue.DeclareOk.class);
            assertThat(declared.getMessageCount()).as("the publish that found the alarm up was taken").isEqualTo(1);
        }
    }

    /** A content header for basic with no properties: class, weight, body size, property flags. */
    private static byte[] contentHeader(long bodySize) {
        return ByteBuffer.allocate(14).putShort((short) 60).putShort((short) 0).putLong(bodySize)
            .putShort((short) 0).array();
    }

    @Test
    void aBlockedConnectionMissingHeartbeatsIsNotClosed() throws Exception {
        List<String> events = new ArrayList<>();
        // heartbeat 1 s: the broker would close a peer silent for 2 s; blocked, it does not read, so must not
        try (Raw091Client client = Raw091Client.open(target, 0, 0, 1)) {
            client.send(1, new AMQP.Channel.Open.Builder().build());
            client.expect(AMQP.Channel.OpenOk.class);
            alarms.raise(Resource.MEMORY);
            client.send(1, new AMQP.Basic.Publish.Builder().routingKey("nowhere").build());
            client.writeFrame(Raw091Client.HEADER, 1, contentHeader(0), Raw091Client.FRAME_END);
            long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(3);
            while (System.nanoTime() < until) {
                Raw091Client.Frame frame = client.read(); // the broker's heartbeats, every half second
                events.add(frame.type() == Raw091Client.HEARTBEAT ? "heartbeat" : "frame " + frame.type());
            }
            assertThat(events).as("heartbeats only, no close").containsOnly("heartbeat");
            alarms.clear(Resource.MEMORY);
            client.send(1, new AMQP.Queue.Declare.Builder().queue("").exclusive(true).build());
            client.expect(AMQP.Queue.DeclareOk.class);
        }
    }
}
