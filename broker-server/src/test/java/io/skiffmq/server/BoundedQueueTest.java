package io.skiffmq.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 12: an unpaced publisher with no consumer must not exhaust the heap. A broker in a child JVM with a heap far
 * too small to hold the backlog (held in memory, {@value #MESSAGES} small messages take about 150 MB) takes them
 * all, transient (0-9-1, publisher confirms a window at a time), with no consumer; then a consumer gets every one,
 * in order. {@code -XX:+ExitOnOutOfMemoryError}
 * makes running out of heap a dead broker, not a slow one. Count: {@code -Dskiffmq.bounded.messages}.
 */
class BoundedQueueTest {
    private static final int MESSAGES = 600_000;
    private static final String QUEUE = "bounded";

    @TempDir
    Path dataDir;

    @Test
    void aBacklogFarLargerThanTheHeapIsTakenAndDeliveredInOrder() throws Exception {
        int count = Integer.getInteger("skiffmq.bounded.messages", MESSAGES);
        // a 4 MiB head: with the default 16 MiB the head and the broker's own heap would pass the memory alarm's
        // watermark (0.4 of 64 MB), which, with no consumer to drain the queue, would hold the publisher for good
        try (ChildBroker broker = ChildBroker.start(dataDir, "bounded", List.of("-Xmx64m",
                "-XX:+ExitOnOutOfMemoryError"), List.of("--queue-memory-limit=4194304"))) {
            ConnectionFactory factory = new ConnectionFactory();
            factory.setHost("127.0.0.1");
            factory.setPort(broker.port);
            try (Connection connection = factory.newConnection()) {
                Channel channel = connection.createChannel();
                channel.queueDeclare(QUEUE, true, false, false, null);
                // publisher confirms, a window at a time: the publisher runs as fast as the broker takes messages
                channel.confirmSelect();
                long started = System.nanoTime();
                for (int i = 0; i < count; i++) {
                    channel.basicPublish("", QUEUE, null, Integer.toString(i).getBytes(StandardCharsets.US_ASCII));
                    if (i % 5000 == 4999) {
                        channel.waitForConfirmsOrDie(60_000);
                    }
                }
                channel.waitForConfirmsOrDie(60_000);
                long publishedAt = System.nanoTime();
                assertThat(broker.process.isAlive()).as("the broker is still up").isTrue();
                assertThat(channel.queueDeclarePassive(QUEUE).getMessageCount()).isEqualTo(count);

                Channel consuming = connection.createChannel();
                consuming.basicQos(2000);
                AtomicInteger next = new AtomicInteger();
                AtomicReference<String> wrong = new AtomicReference<>();
                CountDownLatch all = new CountDownLatch(count);
                consuming.basicConsume(QUEUE, false, (tag, delivery) -> {
                    String body = new String(delivery.getBody(), StandardCharsets.US_ASCII);
                    int expected = next.getAndIncrement();
                    if (!body.equals(Integer.toString(expected))) {
                        wrong.compareAndSet(null, "got " + body + " where " + expected + " was due");
                    }
                    if (expected % 500 == 499 || expected == count - 1) {
                        consuming.basicAck(delivery.getEnvelope().getDeliveryTag(), true);
                    }
                    all.countDown();
                }, tag -> { });
                assertThat(all.await(120, TimeUnit.SECONDS)).as("every message delivered (%d of %d)",
                    count - all.getCount(), count).isTrue();
                assertThat(wrong.get()).as("in order, nothing lost").isNull();
                assertThat(channel.queueDeclarePassive(QUEUE).getMessageCount()).isZero();
                System.out.printf("BoundedQueueTest: %,d messages published in %d ms, drained in %d ms%n", count,
                    TimeUnit.NANOSECONDS.toMillis(publishedAt - started),
                    TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - publishedAt));
            }
            broker.stop();
        }
    }
}
