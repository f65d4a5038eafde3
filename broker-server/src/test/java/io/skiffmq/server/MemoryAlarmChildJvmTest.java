package io.skiffmq.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.rabbitmq.client.BlockedListener;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import com.rabbitmq.client.MessageProperties;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentNavigableMap;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The memory alarm for real: a broker in a child JVM with a small heap, an unpaced AMQP 0-9-1 publisher of
 * transient messages (which stay in memory: the queue may keep a GiB) on one connection, a consumer on another. The
 * publisher must be blocked ({@code connection.blocked} "low on memory") before the broker runs out of memory; the
 * consumer, started once it is, keeps consuming during the alarm; draining clears the alarm, the publisher is
 * unblocked and finishes; every message is confirmed and consumed exactly once, and the broker's log has the alarm
 * set and cleared.
 */
@OneAtATime
class MemoryAlarmChildJvmTest {
    private static final String QUEUE = "memory-alarm";
    /**
     * 100 MB through a broker with a 96 MB heap and as much direct memory, whose watermark is 0.4 of the two:
     * without the alarm, the backlog would not fit.
     */
    private static final int MESSAGES = 25_000;
    private static final int BODY_SIZE = 4096;

    @TempDir
    Path dataDir;

    @Test
    void anUnpacedPublisherIsBlockedBeforeTheHeapRunsOutAndNothingIsLost() throws Exception {
        try (ChildBroker broker = ChildBroker.start(dataDir, "memory-alarm", List.of("-Xmx96m",
                "-XX:+HeapDumpOnOutOfMemoryError", "-XX:HeapDumpPath=" + Path.of("target").toAbsolutePath()),
                // the queue keeps its backlog in memory: paged past the default 16 MiB, it might never reach the
                // watermark (a slow publisher on a busy machine let the broker page it all)
                List.of("--queue-memory-limit=1073741824"))) {
            ConnectionFactory factory = new ConnectionFactory();
            factory.setHost("127.0.0.1");
            factory.setPort(broker.port);
            factory.setAutomaticRecoveryEnabled(false);
            List<String> events = new CopyOnWriteArrayList<>();
            AtomicBoolean blocked = new AtomicBoolean();
            CountDownLatch firstBlock = new CountDownLatch(1);
            CountDownLatch allConfirmed = new CountDownLatch(MESSAGES);
            ConcurrentNavigableMap<Long, Integer> unconfirmed = new ConcurrentSkipListMap<>();
            AtomicInteger nacked = new AtomicInteger();
            Connection publishing = factory.newConnection("publisher");
            Connection consuming = factory.newConnection("consumer");
            boolean passed = false;
            java.util.concurrent.ExecutorService publisherThread =
                java.util.concurrent.Executors.newSingleThreadExecutor();
            try {
                publishing.addBlockedListener(new BlockedListener() {
                    @Override
                    public void handleBlocked(String reason) {
                        events.add("blocked: " + reason);
                        blocked.set(true);
                        firstBlock.countDown();
                    }

                    @Override
                    public void handleUnblocked() {
                        events.add("unblocked");
                        blocked.set(false);
                    }
                });
                Channel publisher = publishing.createChannel();
                publisher.queueDeclare(QUEUE, false, false, false, null);
                publisher.confirmSelect();
                publisher.addConfirmListener((tag, multiple) -> confirm(unconfirmed, tag, multiple, allConfirmed),
                    (tag, multiple) -> {
                        nacked.incrementAndGet();
                        confirm(unconfirmed, tag, multiple, allConfirmed);
                    });
                // a thread of its own: the common pool has one thread on 2 cores, and a task an earlier test left
                // running there (CrashRecoveryTest's publishers) kept this one from starting
                CompletableFuture<Void> publishingDone = CompletableFuture.runAsync(() -> {
                    try {
                        byte[] body = new byte[BODY_SIZE];
                        for (int i = 0; i < MESSAGES; i++) {
                            unconfirmed.put(publisher.getNextPublishSeqNo(), i);
                            Arrays.fill(body, 0, 4, (byte) 0);
                            java.nio.ByteBuffer.wrap(body).putInt(i);
                            // unpaced: no waiting for confirms; the broker's blocking is the only brake
                            publisher.basicPublish("", QUEUE, MessageProperties.MINIMAL_BASIC, body);
                        }
                    } catch (IOException e) {
                        throw new java.io.UncheckedIOException(e);
                    }
                }, publisherThread);

                assertThat(firstBlock.await(30, TimeUnit.SECONDS)).as("blocked: %s", events).isTrue();
                assertThat(events.get(0)).isEqualTo("blocked: low on memory");
                assertThat(publishingDone).as("blocked before it could publish everything").isNotDone();

                Set<Integer> received = ConcurrentHashMap.newKeySet();
                AtomicInteger duplicates = new AtomicInteger();
                AtomicInteger consumedWhileBlocked = new AtomicInteger();
                CountDownLatch allReceived = new CountDownLatch(MESSAGES);
                Channel consumer = consuming.createChannel();
                consumer.basicQos(500);
                consumer.basicConsume(QUEUE, false, (tag, delivery) -> {
                    if (blocked.get()) {
                        consumedWhileBlocked.incrementAndGet();
                    }
                    if (received.add(java.nio.ByteBuffer.wrap(delivery.getBody()).getInt())) {
                        allReceived.countDown();
                    } else {
                        duplicates.incrementAndGet();
                    }
                    consumer.basicAck(delivery.getEnvelope().getDeliveryTag(), false);
                }, tag -> { });

                publishingDone.get(30, TimeUnit.SECONDS);
                assertThat(allConfirmed.await(30, TimeUnit.SECONDS)).as("every publish confirmed").isTrue();
                assertThat(allReceived.await(30, TimeUnit.SECONDS)).as("every message consumed, %d so far",
                    received.size()).isTrue();
                assertThat(nacked.get()).isZero();
                assertThat(duplicates.get()).isZero();
                assertThat(consumedWhileBlocked.get()).as("the consumer consumed during the alarm").isPositive();
                // the last publishes may have found the alarm up again: it clears now that the queue is empty
                Amqp091Support.await().atMost(java.time.Duration.ofSeconds(30)).until(() -> !blocked.get());
                assertThat(events).as("unblocked once the backlog drained").contains("unblocked");
                passed = true;
            } finally {
                if (!passed) {
                    broker.close(); // first: a publisher blocked in a socket write holds its connection's lock
                }
                publishing.abort(10_000);
                consuming.abort(10_000);
                publisherThread.shutdownNow();
            }
            broker.stop();
            String brokerLog = Files.readString(broker.log);
            assertThat(brokerLog).contains("memory resource limit alarm set on node")
                .contains("memory resource limit alarm cleared on node").doesNotContain("OutOfMemoryError");
        }
    }

    private static void confirm(ConcurrentNavigableMap<Long, Integer> unconfirmed, long tag, boolean multiple,
            CountDownLatch confirmed) {
        var done = multiple ? unconfirmed.headMap(tag, true) : unconfirmed.subMap(tag, true, tag, true);
        for (Long seq : List.copyOf(done.keySet())) {
            if (unconfirmed.remove(seq) != null) {
                confirmed.countDown();
            }
        }
    }
}
