package io.skiffmq.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.rabbitmq.client.BlockedListener;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import com.rabbitmq.client.MessageProperties;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
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
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The memory alarm for real: a broker in a child JVM with a small heap, an unpaced AMQP 0-9-1 publisher of
 * transient messages (which stay in memory: nothing pages them out) on one connection, a consumer on another. The
 * publisher must be blocked ({@code connection.blocked} "low on memory") before the broker runs out of memory; the
 * consumer, started once it is, keeps consuming during the alarm; draining clears the alarm, the publisher is
 * unblocked and finishes; every message is confirmed and consumed exactly once, and the broker's log has the alarm
 * set and cleared.
 */
class MemoryAlarmChildJvmTest {
    private static final Pattern LISTENING = Pattern.compile("listening for AMQP 1\\.0 on .*:(\\d+) ");
    private static final String QUEUE = "memory-alarm";
    /**
     * 100 MB through a broker with a 96 MB heap (and as much direct memory), whose watermark is 0.4 of that heap:
     * without the alarm, the backlog would not fit.
     */
    private static final int MESSAGES = 25_000;
    private static final int BODY_SIZE = 4096;

    @TempDir
    Path dataDir;

    @Test
    void anUnpacedPublisherIsBlockedBeforeTheHeapRunsOutAndNothingIsLost() throws Exception {
        Path log = Path.of("target", "memory-alarm-test", "broker.log");
        try (ChildBroker broker = ChildBroker.start(dataDir, log, "-Xmx96m")) {
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
                });

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
            }
            broker.stop();
            String brokerLog = Files.readString(log);
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

    /** The broker in a JVM of its own (this JVM's classpath and module flags), as {@link CrashRecoveryTest} runs it. */
    private static final class ChildBroker implements AutoCloseable {
        final Process process;
        final int port;

        private ChildBroker(Process process, int port) {
            this.process = process;
            this.port = port;
        }

        static ChildBroker start(Path dataDir, Path log, String heap) throws Exception {
            List<String> command = new ArrayList<>();
            command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
            for (String flag : ManagementFactory.getRuntimeMXBean().getInputArguments()) {
                if (flag.startsWith("--add-") || flag.startsWith("-Dchronicle")) {
                    command.add(flag);
                }
            }
            command.addAll(List.of(heap, "-XX:+HeapDumpOnOutOfMemoryError",
                "-XX:HeapDumpPath=" + log.getParent().toAbsolutePath(), "-cp", System.getProperty("java.class.path"),
                SkiffMq.class.getName(), "--port=0", "--bind=127.0.0.1", "--data-dir=" + dataDir.resolve("broker")));
            Files.createDirectories(log.getParent());
            Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
            CompletableFuture<Integer> port = new CompletableFuture<>();
            Thread pump = new Thread(() -> pump(process, log, port), "child-broker-log");
            pump.setDaemon(true);
            pump.start();
            try {
                return new ChildBroker(process, port.get(60, TimeUnit.SECONDS));
            } catch (Exception e) {
                process.destroyForcibly().waitFor();
                throw new AssertionError("the child broker did not start; see " + log.toAbsolutePath(), e);
            }
        }

        private static void pump(Process process, Path log, CompletableFuture<Integer> port) {
            try (BufferedReader in = new BufferedReader(new InputStreamReader(process.getInputStream(),
                    StandardCharsets.UTF_8)); var out = Files.newBufferedWriter(log)) {
                for (String line; (line = in.readLine()) != null; ) {
                    out.write(line);
                    out.newLine();
                    out.flush();
                    Matcher m = LISTENING.matcher(line);
                    if (m.find()) {
                        port.complete(Integer.parseInt(m.group(1)));
                    }
                }
            } catch (IOException e) {
                port.completeExceptionally(e);
            }
            port.completeExceptionally(new IllegalStateException("the child broker exited"));
        }

        /** SIGTERM: the broker shuts down cleanly (and its log is complete). */
        void stop() throws InterruptedException {
            process.destroy();
            assertThat(process.waitFor(60, TimeUnit.SECONDS)).as("clean stop").isTrue();
        }

        @Override
        public void close() throws InterruptedException {
            if (process.isAlive()) {
                process.destroyForcibly();
                process.waitFor();
            }
        }
    }
}
