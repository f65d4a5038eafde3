package io.skiffmq.server;

import static io.skiffmq.server.Amqp091Support.TIMEOUT;
import static io.skiffmq.server.Amqp091Support.await;
import static io.skiffmq.server.Amqp091Support.unique;
import static org.assertj.core.api.Assertions.assertThat;

import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.impl.Method;
import com.rabbitmq.client.impl.nio.NioParams;
import io.skiffmq.codec.testing.LeakDetection;
import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.ConcurrentSkipListSet;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A client that closes its connection while another of its threads still publishes flat out: the broker reads
 * every byte up to {@code connection.close}, routes every publish before it, writes {@code close-ok}, and then reads
 * on, dropping what comes, until the client closes the socket (at most its heartbeat interval, or 30 s), as
 * {@code rabbit_reader} does. So {@code close()} gets its close-ok and the client's writes in flight meet no reset
 * or broken pipe, with each of the Java client's I/O layers. The raw client shows the bytes on the wire.
 */
@ExtendWith(LeakDetection.class)
class Amqp091CloseWhilePublishingTest {
    private static final Duration CLOSE_WAIT = Duration.ofSeconds(10);
    private static final int ENQUEUING_TIMEOUT_MS = 500;
    private static RunningBroker broker;

    @BeforeAll
    static void start() throws Exception {
        broker = RunningBroker.start();
    }

    @AfterAll
    static void stop() {
        broker.close();
    }

    private static ConnectionFactory factory() {
        ConnectionFactory factory = new ConnectionFactory();
        factory.setHost("127.0.0.1");
        factory.setPort(broker.port());
        factory.setAutomaticRecoveryEnabled(false);
        return factory;
    }

    private static ConnectionFactory factory(String io) {
        ConnectionFactory factory = factory();
        switch (io) {
            case "blocking" -> factory.useBlockingIo();
            // a publisher blocked on a full write queue holds its channel's lock, which the client's I/O thread
            // needs when the connection shuts down: it waits until the enqueuing times out (a client matter, the
            // same against RabbitMQ), so that timeout is short here
            case "nio" -> {
                factory.useNio();
                factory.setNioParams(new NioParams().setWriteEnqueuingTimeoutInMs(ENQUEUING_TIMEOUT_MS));
            }
            case "netty" -> factory.netty().enqueuingTimeout(Duration.ofMillis(ENQUEUING_TIMEOUT_MS));
            default -> throw new IllegalArgumentException(io);
        }
        return factory;
    }

    @ParameterizedTest
    @ValueSource(strings = {"blocking", "nio", "netty"})
    void closeWhileAnotherThreadPublishesGetsCloseOkAndLosesNothingConfirmed(String io) throws Exception {
        String queue = unique("close-publishing");
        try (Connection admin = factory().newConnection(); Channel declare = admin.createChannel()) {
            declare.queueDeclare(queue, false, false, false, null);
        }
        Connection connection = factory(io).newConnection();
        Channel channel = connection.createChannel();
        channel.confirmSelect();
        ConcurrentSkipListSet<Long> confirmed = new ConcurrentSkipListSet<>();
        AtomicLong highestMultiple = new AtomicLong();
        channel.addConfirmListener((tag, multiple) -> {
            if (multiple) {
                highestMultiple.accumulateAndGet(tag, Math::max);
            } else {
                confirmed.add(tag);
            }
        }, (tag, multiple) -> { });
        AtomicLong published = new AtomicLong();
        AtomicReference<Throwable> publisherEnd = new AtomicReference<>();
        byte[] body = new byte[65536];
        Thread publisher = new Thread(() -> {
            try {
                while (true) {
                    channel.basicPublish("", queue, null, body);
                    published.incrementAndGet();
                }
            } catch (Throwable e) {
                publisherEnd.set(e);
            }
        }, "flat-out-publisher");
        publisher.start();
        await().atMost(TIMEOUT).until(() -> published.get() > 300);
        Throwable closing = null;
        try {
            connection.close((int) CLOSE_WAIT.toMillis()); // without close-ok the client would wait forever
        } catch (Throwable e) {
            closing = e;
        }
        publisher.join(TIMEOUT.toMillis());
        assertThat(closing).as("close() got its close-ok").isNull();
        // the publisher ends when the client stops it (closed, or its own socket closed under a write in flight),
        // never by a reset or broken pipe from the broker
        assertThat(publisherEnd.get()).as("the publisher ended").isNotNull();
        assertThat(String.valueOf(publisherEnd.get().getMessage())).doesNotContainIgnoringCase("reset")
            .doesNotContainIgnoringCase("broken pipe");
        long sure = Math.max(highestMultiple.get(), confirmed.isEmpty() ? 0 : confirmed.last());
        try (Connection admin = factory().newConnection(); Channel check = admin.createChannel()) {
            await().atMost(TIMEOUT).until(() -> check.messageCount(queue) >= sure);
            assertThat(check.messageCount(queue)).as("every confirmed publish is in the queue")
                .isGreaterThanOrEqualTo(sure);
            check.queueDelete(queue);
        }
    }

    /** Header, login, tune-ok (no heartbeats unless asked), open and channel 1: a raw connection ready to publish. */
    private static Raw091Client rawOpen(int heartbeat) throws IOException {
        Raw091Client client = new Raw091Client("127.0.0.1", broker.port());
        AMQP.Connection.Tune tune = client.start();
        client.tuneOk(tune.getChannelMax(), tune.getFrameMax(), heartbeat);
        client.send(0, new AMQP.Connection.Open.Builder().virtualHost("/").build());
        client.expect(AMQP.Connection.OpenOk.class);
        client.send(1, new AMQP.Channel.Open.Builder().build());
        client.expect(AMQP.Channel.OpenOk.class);
        return client;
    }

    /** The frames of {@code count} publishes of 1 KiB to {@code queue} on channel 1, in one array. */
    private static byte[] publishes(String queue, int count) throws IOException {
        ByteArrayOutputStream method = new ByteArrayOutputStream();
        ((Method) new AMQP.Basic.Publish.Builder().routingKey(queue).build()).toFrame(1)
            .writeTo(new DataOutputStream(method));
        ByteArrayOutputStream header = new ByteArrayOutputStream();
        DataOutputStream h = new DataOutputStream(header);
        h.writeShort(60); // basic
        h.writeShort(0); // weight
        h.writeLong(1024); // body size
        h.writeShort(0); // no properties
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        DataOutputStream out = new DataOutputStream(bytes);
        for (int i = 0; i < count; i++) {
            out.write(method.toByteArray());
            frame(out, Raw091Client.HEADER, header.toByteArray());
            frame(out, Raw091Client.BODY, new byte[1024]);
        }
        return bytes.toByteArray();
    }

    private static void frame(DataOutputStream out, int type, byte[] payload) throws IOException {
        out.writeByte(type);
        out.writeShort(1);
        out.writeInt(payload.length);
        out.write(payload);
        out.writeByte(Raw091Client.FRAME_END);
    }

    private static byte[] connectionClose() throws IOException {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        ((Method) new AMQP.Connection.Close.Builder().replyCode(200).replyText("bye").build()).toFrame(0)
            .writeTo(new DataOutputStream(bytes));
        return bytes.toByteArray();
    }

    @Test
    void everyPublishBeforeTheCloseIsRoutedAndTheBrokerReadsOnUntilTheClientCloses() throws Exception {
        String queue = unique("close-raw");
        try (Connection admin = factory().newConnection(); Channel declare = admin.createChannel()) {
            declare.queueDeclare(queue, false, false, false, null);
            try (Raw091Client client = rawOpen(0)) {
                ByteArrayOutputStream batch = new ByteArrayOutputStream();
                batch.write(publishes(queue, 500));
                batch.write(connectionClose());
                batch.write(publishes(queue, 500)); // another thread of the client was still publishing
                client.writeRaw(batch.toByteArray());
                client.expect(AMQP.Connection.CloseOk.class);
                client.soTimeout((int) Amqp091Support.QUIET.toMillis());
                assertThat(client.closedByBroker()).as("the client closes, not the broker").isFalse();
                // what still comes is read and dropped: no reset, no broken pipe
                client.writeRaw(publishes(queue, 4096));
                client.writeRaw(publishes(queue, 1));
            }
            await().atMost(TIMEOUT).until(() -> declare.messageCount(queue) >= 500);
            assertThat(declare.messageCount(queue)).as("the publishes before the close, not one after")
                .isEqualTo(500);
            declare.queueDelete(queue);
        }
    }

    @Test
    void theClientsExclusiveQueuesAreGoneWhenItHasCloseOk() throws Exception {
        String queue = unique("close-exclusive");
        try (Raw091Client client = rawOpen(0)) {
            client.send(1, new AMQP.Queue.Declare.Builder().queue(queue).exclusive(true).build());
            client.expect(AMQP.Queue.DeclareOk.class);
            client.writeRaw(connectionClose());
            client.expect(AMQP.Connection.CloseOk.class);
            // the socket is still open: the queue went before close-ok, as in RabbitMQ
            try (Connection next = factory().newConnection(); Channel channel = next.createChannel()) {
                assertThat(channel.queueDeclare(queue, false, true, false, null).getQueue()).isEqualTo(queue);
            }
        }
    }

    @Test
    void aClientThatDoesNotCloseAfterCloseOkIsClosedAfterItsHeartbeatInterval() throws Exception {
        try (Raw091Client client = rawOpen(1)) {
            client.writeRaw(connectionClose());
            client.expect(AMQP.Connection.CloseOk.class);
            client.soTimeout((int) TIMEOUT.toMillis());
            assertThat(client.closedByBroker()).isTrue();
        }
    }
}
