package io.skiffmq.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.rabbitmq.client.amqp.Connection;
import com.rabbitmq.client.amqp.Consumer;
import com.rabbitmq.client.amqp.Environment;
import com.rabbitmq.client.amqp.Publisher;
import com.rabbitmq.client.amqp.impl.AmqpEnvironmentBuilder;
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
 * all, transient, with no consumer; then a consumer gets every one, in order. {@code -XX:+ExitOnOutOfMemoryError}
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
        try (ChildBroker broker = ChildBroker.start(dataDir, "bounded", List.of("-Xmx64m",
                "-XX:+ExitOnOutOfMemoryError"), List.of());
                Environment environment = new AmqpEnvironmentBuilder().connectionSettings().host("127.0.0.1")
                    .port(broker.port).username("guest").password("guest").environmentBuilder().build()) {
            Connection connection = environment.connectionBuilder().recovery().activated(false).connectionBuilder()
                .build();
            connection.management().queue(QUEUE).declare();
            long started = System.nanoTime();
            AtomicInteger accepted = new AtomicInteger();
            CountDownLatch published = new CountDownLatch(count);
            try (Publisher publisher = connection.publisherBuilder().queue(QUEUE).build()) {
                for (int i = 0; i < count; i++) {
                    publisher.publish(publisher.message(Integer.toString(i).getBytes(StandardCharsets.US_ASCII))
                        .durable(false), context -> {
                            if (context.status() == Publisher.Status.ACCEPTED) {
                                accepted.incrementAndGet();
                            }
                            published.countDown();
                        });
                }
                assertThat(published.await(120, TimeUnit.SECONDS)).as("every publish settled").isTrue();
            }
            long publishedAt = System.nanoTime();
            assertThat(accepted.get()).isEqualTo(count);
            assertThat(broker.process.isAlive()).as("the broker is still up").isTrue();
            assertThat(connection.management().queueInfo(QUEUE).messageCount()).isEqualTo(count);

            AtomicInteger next = new AtomicInteger();
            AtomicReference<String> wrong = new AtomicReference<>();
            CountDownLatch all = new CountDownLatch(count);
            Consumer consumer = connection.consumerBuilder().queue(QUEUE).initialCredits(1000)
                .messageHandler((context, message) -> {
                    String body = new String(message.body(), StandardCharsets.US_ASCII);
                    int expected = next.getAndIncrement();
                    if (!body.equals(Integer.toString(expected))) {
                        wrong.compareAndSet(null, "got " + body + " where " + expected + " was due");
                    }
                    context.accept();
                    all.countDown();
                }).build();
            assertThat(all.await(120, TimeUnit.SECONDS)).as("every message delivered (%d of %d)",
                count - all.getCount(), count).isTrue();
            consumer.close();
            assertThat(wrong.get()).as("in order, nothing lost").isNull();
            assertThat(connection.management().queueInfo(QUEUE).messageCount()).isZero();
            System.out.printf("BoundedQueueTest: %,d messages published in %d ms, drained in %d ms%n", count,
                TimeUnit.NANOSECONDS.toMillis(publishedAt - started),
                TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - publishedAt));
            connection.close();
            broker.stop();
        }
    }
}
