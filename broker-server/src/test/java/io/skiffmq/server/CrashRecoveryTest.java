package io.skiffmq.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.rabbitmq.client.amqp.Connection;
import com.rabbitmq.client.amqp.Consumer;
import com.rabbitmq.client.amqp.Environment;
import com.rabbitmq.client.amqp.Message;
import com.rabbitmq.client.amqp.Publisher;
import com.rabbitmq.client.amqp.impl.AmqpEnvironmentBuilder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.zip.CRC32;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * kill -9 at random moments: the broker runs as a child JVM; several connections publish durable messages with
 * confirms (over AMQP 1.0, and one over 0-9-1) while a consumer takes some (accepting, requeueing after a failed delivery, or holding them
 * unsettled); the broker is killed, restarted on the same data directory, and the queue drained. Every confirmed
 * message that was not accepted must come back, exactly once, intact and marked as acquired before; nothing comes
 * back twice. Then the broker is stopped cleanly and the next round begins on the same data, so recovery also
 * reads what earlier recoveries left.
 *
 * <p>Rounds: {@code -Dskiffmq.crash.rounds} (3 by default, for the suite's time; raise it for a longer soak); the seed of the random kill points is printed.
 */
class CrashRecoveryTest {
    private static final int PUBLISHERS = 3;
    private static final String QUEUE = "crash";

    @TempDir
    Path dataDir;

    @Test
    void everyConfirmedMessageSurvivesKill9ExactlyOnce() throws Exception {
        int rounds = Integer.getInteger("skiffmq.crash.rounds", 3);
        long seed = Long.getLong("skiffmq.crash.seed", System.nanoTime());
        System.out.println("CrashRecoveryTest: " + rounds + " rounds, -Dskiffmq.crash.seed=" + seed);
        Random random = new Random(seed);
        for (int round = 0; round < rounds; round++) {
            Round r = new Round(round);
            try (ChildBroker broker = ChildBroker.start(dataDir, "crash-" + round + "a", List.of("-Xmx512m"),
                List.of("--journal-segment-size=1048576"))) {
                r.publishAndKill(broker, 200 + random.nextInt(1500));
            }
            try (ChildBroker broker = ChildBroker.start(dataDir, "crash-" + round + "b", List.of("-Xmx512m"),
                List.of("--journal-segment-size=1048576"))) {
                r.drainAndCheck(broker);
                broker.stop();
            }
        }
    }

    /** One publish-kill-recover round; message ids are {@code round-publisher-n}. */
    private static final class Round {
        final int round;
        final Set<String> sent = ConcurrentHashMap.newKeySet();
        final Set<String> confirmed = ConcurrentHashMap.newKeySet();
        final Set<String> accepted = ConcurrentHashMap.newKeySet();
        final Set<String> requeued = ConcurrentHashMap.newKeySet();

        Round(int round) {
            this.round = round;
        }

        void publishAndKill(ChildBroker broker, int killAfterMillis) throws Exception {
            try (Environment environment = environment(broker)) {
                Connection setup = connect(environment);
                assertThat(setup.management().queueInfo(QUEUE).messageCount())
                    .as("round %d starts with the queue empty", round).isZero();
                List<Connection> connections = new ArrayList<>();
                List<CompletableFuture<Void>> publishers = new ArrayList<>();
                // threads of their own: the common pool has one thread on 2 cores, which ran the publishers one
                // after another and kept the last running into the next test class
                java.util.concurrent.ExecutorService threads =
                    java.util.concurrent.Executors.newFixedThreadPool(PUBLISHERS);
                for (int p = 0; p < PUBLISHERS - 1; p++) {
                    Connection connection = connect(environment);
                    connections.add(connection);
                    int publisher = p;
                    publishers.add(CompletableFuture.runAsync(() -> publish(connection, publisher), threads));
                }
                // the last publisher speaks AMQP 0-9-1: its persistent messages share the journal
                publishers.add(CompletableFuture.runAsync(() -> publish091(broker, PUBLISHERS - 1), threads));
                // takes some as they arrive: accepts, requeues once after a failed delivery, or holds unsettled
                Connection consuming = connect(environment);
                consuming.consumerBuilder().queue(QUEUE).initialCredits(50).messageHandler((context, message) -> {
                    String id = check(message);
                    switch (Math.floorMod(id.hashCode(), 3)) {
                        case 0 -> {
                            accepted.add(id);
                            context.accept();
                        }
                        case 1 -> {
                            if (message.deliveryCount() == 0) {
                                requeued.add(id);
                                context.requeue(Map.of(), true);
                            } else {
                                context.accept();
                                accepted.add(id);
                            }
                        }
                        default -> { } // held: never settled before the kill
                    }
                }).build();
                long killAt = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(killAfterMillis);
                long giveUp = killAt + TimeUnit.SECONDS.toNanos(60);
                while (System.nanoTime() < killAt || confirmed.isEmpty() && System.nanoTime() < giveUp) {
                    Thread.onSpinWait();
                }
                assertThat(confirmed).as("round %d: some messages confirmed before the kill", round).isNotEmpty();
                broker.kill();
                for (CompletableFuture<Void> p : publishers) {
                    p.handle((ok, error) -> null).get(60, TimeUnit.SECONDS);
                }
                threads.shutdownNow();
            }
            System.out.printf("round %d: %d sent, %d confirmed, %d accepted, killed after %d ms%n", round, sent.size(),
                confirmed.size(), accepted.size(), killAfterMillis);
        }

        private void publish(Connection connection, int publisher) {
            try (Publisher out = connection.publisherBuilder().queue(QUEUE).build()) {
                for (int n = 0; ; n++) {
                    String id = round + "-" + publisher + "-" + n;
                    sent.add(id);
                    out.publish(out.message(body(id)).durable(true), context -> {
                        if (context.status() == Publisher.Status.ACCEPTED) {
                            confirmed.add(id);
                        }
                    });
                }
            } catch (RuntimeException e) {
                // the broker is gone: this publisher is done
            }
        }

        /** Persistent messages with publisher confirms, at most 1,000 unconfirmed, until the broker is killed. */
        private void publish091(ChildBroker broker, int publisher) {
            com.rabbitmq.client.ConnectionFactory factory = new com.rabbitmq.client.ConnectionFactory();
            factory.setHost("127.0.0.1");
            factory.setPort(broker.port);
            factory.setAutomaticRecoveryEnabled(false);
            java.util.concurrent.ConcurrentNavigableMap<Long, String> unconfirmed =
                new java.util.concurrent.ConcurrentSkipListMap<>();
            java.util.concurrent.Semaphore inFlight = new java.util.concurrent.Semaphore(1000);
            try (com.rabbitmq.client.Connection connection = factory.newConnection()) {
                com.rabbitmq.client.Channel channel = connection.createChannel();
                channel.confirmSelect();
                channel.addConfirmListener((tag, multiple) -> settle(unconfirmed, inFlight, tag, multiple, true),
                    (tag, multiple) -> settle(unconfirmed, inFlight, tag, multiple, false));
                for (int n = 0; ; n++) {
                    String id = round + "-" + publisher + "-" + n;
                    while (!inFlight.tryAcquire(100, TimeUnit.MILLISECONDS)) {
                        if (!connection.isOpen()) {
                            return; // killed while we waited for confirms
                        }
                    }
                    sent.add(id);
                    unconfirmed.put(channel.getNextPublishSeqNo(), id);
                    channel.basicPublish("", QUEUE, com.rabbitmq.client.MessageProperties.PERSISTENT_BASIC, body(id));
                }
            } catch (Exception e) {
                // the broker is gone: this publisher is done
            }
        }

        private void settle(java.util.concurrent.ConcurrentNavigableMap<Long, String> unconfirmed,
                java.util.concurrent.Semaphore inFlight, long tag, boolean multiple, boolean ack) {
            java.util.Map<Long, String> done = multiple ? unconfirmed.headMap(tag, true)
                : unconfirmed.subMap(tag, true, tag, true);
            for (String id : List.copyOf(done.values())) {
                if (ack) {
                    confirmed.add(id);
                }
                inFlight.release();
            }
            done.clear();
        }

        void drainAndCheck(ChildBroker broker) throws Exception {
            Set<String> received = ConcurrentHashMap.newKeySet();
            List<String> duplicates = new ArrayList<>();
            List<String> problems = new ArrayList<>();
            try (Environment environment = environment(broker)) {
                Connection connection = connect(environment);
                long count = connection.management().queueInfo(QUEUE).messageCount();
                CountDownLatch all = new CountDownLatch((int) count);
                // ample credit, accepted in batches: with one disposition per message the client drained about
                // 5,000 a second (the broker mostly idle), and the drains took most of the test
                java.util.concurrent.atomic.AtomicReference<Consumer.BatchContext> batch =
                    new java.util.concurrent.atomic.AtomicReference<>();
                Consumer consumer = connection.consumerBuilder().queue(QUEUE).initialCredits(1000)
                    .messageHandler((context, message) -> {
                    String id = check(message);
                    if (id == null) {
                        problems.add("corrupt body");
                    } else {
                        if (!received.add(id)) {
                            synchronized (duplicates) {
                                duplicates.add(id);
                            }
                        }
                        if (message.firstAcquirer()) {
                            problems.add(id + " recovered but marked first-acquirer");
                        }
                        if (message.deliveryCount() > 0 && !requeued.contains(id)) {
                            problems.add(id + " has delivery-count " + message.deliveryCount() + " but was never requeued");
                        }
                    }
                    if (batch.get() == null) {
                        batch.set(context.batch(100));
                    }
                    batch.get().add(context);
                    if (batch.get().size() == 100) {
                        batch.getAndSet(null).accept();
                    }
                    all.countDown();
                }).build();
                assertThat(all.await(120, TimeUnit.SECONDS)).as("round %d: the %d recovered messages arrive", round,
                    count).isTrue();
                if (batch.get() != null) {
                    batch.get().accept();
                }
                consumer.close();
                assertThat(connection.management().queueInfo(QUEUE).messageCount()).isZero();
            }
            assertThat(problems).as("round %d", round).isEmpty();
            assertThat(duplicates).as("round %d: nothing comes back twice", round).isEmpty();
            assertThat(Missing.from(sent, received)).as("round %d: came back, never sent", round).isEmpty();
            Set<String> lost = ConcurrentHashMap.newKeySet();
            for (String id : confirmed) {
                if (!accepted.contains(id) && !received.contains(id)) {
                    lost.add(id);
                }
            }
            assertThat(lost).as("round %d: confirmed and never accepted, yet lost", round).isEmpty();
            System.out.printf("round %d: %d recovered%n", round, received.size());
        }
    }

    private static Environment environment(ChildBroker broker) {
        return new AmqpEnvironmentBuilder().connectionSettings().host("127.0.0.1").port(broker.port)
            .username("guest").password("guest").environmentBuilder().build();
    }

    private static Connection connect(Environment environment) {
        Connection connection = environment.connectionBuilder().recovery().activated(false).connectionBuilder().build();
        connection.management().queue(QUEUE).declare();
        return connection;
    }

    /** {@code id:checksum}, so a damaged body is caught. */
    private static byte[] body(String id) {
        return (id + ":" + crc(id)).getBytes(StandardCharsets.UTF_8);
    }

    /** The id of an intact body, null for a damaged one. */
    private static String check(Message message) {
        String body = new String(message.body(), StandardCharsets.UTF_8);
        int colon = body.lastIndexOf(':');
        if (colon < 0 || !body.substring(colon + 1).equals(crc(body.substring(0, colon)))) {
            return null;
        }
        return body.substring(0, colon);
    }

    private static String crc(String id) {
        CRC32 crc = new CRC32();
        crc.update(id.getBytes(StandardCharsets.UTF_8));
        return Long.toHexString(crc.getValue());
    }

    /** The broker in a JVM of its own (this JVM's classpath and module flags), on an ephemeral port. */
}
