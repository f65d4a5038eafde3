package io.skiffmq.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.ConnectionFactory;
import com.rabbitmq.client.MessageProperties;
import com.rabbitmq.client.amqp.Environment;
import com.rabbitmq.client.amqp.Publisher;
import com.rabbitmq.client.amqp.impl.AmqpEnvironmentBuilder;
import io.skiffmq.codec.amqp10.AmqpError;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentNavigableMap;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import org.apache.qpid.proton.amqp.transport.Close;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * SIGTERM under load: a broker in a child JVM takes persistent messages with publisher confirms over AMQP 0-9-1
 * and durable ones over AMQP 1.0 when it gets SIGTERM ({@link ChildBroker#stop}). Its shutdown hook closes the
 * 0-9-1 connection with 320 and RabbitMQ's text and AMQP 1.0 connections with {@code amqp:connection:forced}, then
 * flushes and closes the journal. After a restart on the same data directory every confirmed message is there.
 */
class GracefulShutdownChildJvmTest {
    private static final String QUEUE = "shutdown";
    private static final Duration TIMEOUT = Duration.ofSeconds(60);

    @TempDir
    Path dataDir;

    private final Set<String> confirmed = ConcurrentHashMap.newKeySet();
    private final Set<String> sent = ConcurrentHashMap.newKeySet();

    @Test
    void sigtermClosesConnectionsAsForcedAndLosesNoConfirmedMessage() throws Exception {
        AMQP.Connection.Close close091;
        try (ChildBroker broker = ChildBroker.start(dataDir, "shutdown-a", List.of("-Xmx512m"), List.of());
             RawClient idle10 = RawClient.openSession(broker.port);
             Environment environment = new AmqpEnvironmentBuilder().connectionSettings().host("127.0.0.1")
                 .port(broker.port).username("guest").password("guest").environmentBuilder().build()) {
            com.rabbitmq.client.Connection connection091 = factory(broker.port).newConnection();
            connection091.createChannel().queueDeclare(QUEUE, true, false, false, null);
            CompletableFuture<Void> publisher091 = CompletableFuture.runAsync(() -> publish091(connection091));
            com.rabbitmq.client.amqp.Connection connection10 = environment.connectionBuilder().recovery()
                .activated(false).connectionBuilder().build();
            CompletableFuture<Void> publisher10 = CompletableFuture.runAsync(() -> publish10(connection10));

            await().atMost(TIMEOUT).until(() -> confirmed.size() >= 3000 || publisher091.isDone()
                || publisher10.isDone());
            assertThat(publisher091).as("still publishing").isNotDone();
            assertThat(publisher10).as("still publishing").isNotDone();

            broker.stop(); // SIGTERM, and waits for the JVM to exit
            // the child's output reaches its log file through a pump thread: wait for the last line
            await().atMost(TIMEOUT).until(() -> Files.readString(broker.log).contains("SkiffMQ stopped"));
            publisher091.handle((ok, e) -> null).get(60, TimeUnit.SECONDS);
            publisher10.handle((ok, e) -> null).get(60, TimeUnit.SECONDS);

            await().atMost(TIMEOUT).until(() -> !connection091.isOpen());
            close091 = (AMQP.Connection.Close) connection091.getCloseReason().getReason();
            Close close10 = idle10.readUntil(Close.class);
            assertThat((Object) close10.getError().getCondition()).isEqualTo(AmqpError.CONNECTION_FORCED.symbol());
        }
        assertThat(close091.getReplyCode()).isEqualTo(320);
        assertThat(close091.getReplyText())
            .isEqualTo("CONNECTION_FORCED - broker forced connection closure with reason 'shutdown'");

        Set<String> recovered = ConcurrentHashMap.newKeySet();
        try (ChildBroker broker = ChildBroker.start(dataDir, "shutdown-b", List.of("-Xmx512m"), List.of())) {
            com.rabbitmq.client.Connection connection = factory(broker.port).newConnection();
            Channel channel = connection.createChannel();
            long count = channel.queueDeclarePassive(QUEUE).getMessageCount();
            assertThat(count).as("messages after the restart").isGreaterThanOrEqualTo(confirmed.size());
            channel.basicQos(500);
            channel.basicConsume(QUEUE, true, (tag, delivery) ->
                recovered.add(new String(delivery.getBody(), StandardCharsets.UTF_8)), tag -> { });
            await().atMost(TIMEOUT).until(() -> recovered.size() >= count);
            System.out.printf("GracefulShutdownChildJvmTest: %d sent, %d confirmed, %d after the restart%n",
                sent.size(), confirmed.size(), count);
            connection.close();
            broker.stop();
        }
        assertThat(Missing.from(sent, recovered)).as("came back, never sent").isEmpty();
        assertThat(Missing.from(recovered, confirmed)).as("confirmed, missing after the restart").isEmpty();
    }

    private static ConnectionFactory factory(int port) {
        ConnectionFactory factory = new ConnectionFactory();
        factory.setHost("127.0.0.1");
        factory.setPort(port);
        factory.setAutomaticRecoveryEnabled(false);
        return factory;
    }

    /** Persistent messages with confirms, at most 1,000 unconfirmed, until the broker closes the connection. */
    private void publish091(com.rabbitmq.client.Connection connection) {
        ConcurrentNavigableMap<Long, String> unconfirmed = new ConcurrentSkipListMap<>();
        Semaphore inFlight = new Semaphore(1000);
        try {
            Channel channel = connection.createChannel();
            channel.confirmSelect();
            channel.addConfirmListener((tag, multiple) -> settle(unconfirmed, inFlight, tag, multiple, true),
                (tag, multiple) -> settle(unconfirmed, inFlight, tag, multiple, false));
            for (int n = 0; ; n++) {
                String id = "091-" + n;
                while (!inFlight.tryAcquire(100, TimeUnit.MILLISECONDS)) {
                    if (!connection.isOpen()) {
                        return;
                    }
                }
                sent.add(id);
                unconfirmed.put(channel.getNextPublishSeqNo(), id);
                channel.basicPublish("", QUEUE, MessageProperties.PERSISTENT_BASIC,
                    id.getBytes(StandardCharsets.UTF_8));
            }
        } catch (Exception e) {
            // closed by the broker's shutdown: done
        }
    }

    private void settle(ConcurrentNavigableMap<Long, String> unconfirmed, Semaphore inFlight, long tag,
            boolean multiple, boolean ack) {
        Map<Long, String> done = multiple ? unconfirmed.headMap(tag, true) : unconfirmed.subMap(tag, true, tag, true);
        for (String id : List.copyOf(done.values())) {
            if (ack) {
                confirmed.add(id);
            }
            inFlight.release();
        }
        done.clear();
    }

    /** Durable messages over AMQP 1.0, each confirmed by its accepted outcome, until the broker closes. */
    private void publish10(com.rabbitmq.client.amqp.Connection connection) {
        try (Publisher out = connection.publisherBuilder().queue(QUEUE).build()) {
            for (int n = 0; ; n++) {
                String id = "10-" + n;
                sent.add(id);
                out.publish(out.message(id.getBytes(StandardCharsets.UTF_8)).durable(true), context -> {
                    if (context.status() == Publisher.Status.ACCEPTED) {
                        confirmed.add(id);
                    }
                });
            }
        } catch (RuntimeException e) {
            // closed by the broker's shutdown: done
        }
    }
}
