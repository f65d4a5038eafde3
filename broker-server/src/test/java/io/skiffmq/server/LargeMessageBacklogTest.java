package io.skiffmq.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import com.rabbitmq.client.MessageProperties;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 30: a backlog of large messages larger than the heap is paged, and drains in order. A broker in a child JVM
 * at {@code -Xmx96m} takes {@value #MESSAGES} persistent 1 MiB messages (0-9-1, confirms) with no consumer; then a
 * consumer gets every one, in order, its bytes intact. Reading a paged tail back 256 messages at a time, whatever
 * their size, put 150 MiB on that heap at the first delivery ({@code -XX:+ExitOnOutOfMemoryError}: a dead broker).
 * The 2 GiB run at {@code -Xmx512m} is {@code benchmarks/large-backlog}.
 */
@OneAtATime
class LargeMessageBacklogTest {
    private static final int MESSAGES = 150;
    private static final int SIZE = 1 << 20;
    private static final String QUEUE = "large";

    @TempDir
    Path dataDir;

    @Test
    void aBacklogOfLargeMessagesPastTheHeapIsPagedAndDrainsInOrder() throws Exception {
        // a 4 MiB head: the default 16 MiB and the broker's own heap would reach the memory alarm's watermark
        try (ChildBroker broker = ChildBroker.start(dataDir, "large", List.of("-Xmx96m",
                "-XX:+ExitOnOutOfMemoryError"), List.of("--queue-memory-limit=4194304"))) {
            ConnectionFactory factory = new ConnectionFactory();
            factory.setHost("127.0.0.1");
            factory.setPort(broker.port);
            try (Connection connection = factory.newConnection()) {
                Channel channel = connection.createChannel();
                channel.queueDeclare(QUEUE, true, false, false, null);
                channel.confirmSelect();
                byte[] body = new byte[SIZE];
                for (int i = 0; i < MESSAGES; i++) {
                    fill(body, i);
                    channel.basicPublish("", QUEUE, MessageProperties.PERSISTENT_BASIC, body);
                    if (i % 8 == 7) {
                        channel.waitForConfirmsOrDie(60_000);
                    }
                }
                channel.waitForConfirmsOrDie(60_000);
                assertThat(channel.queueDeclarePassive(QUEUE).getMessageCount()).isEqualTo(MESSAGES);

                Channel consuming = connection.createChannel();
                consuming.basicQos(4);
                AtomicInteger next = new AtomicInteger();
                AtomicReference<String> wrong = new AtomicReference<>();
                CountDownLatch all = new CountDownLatch(MESSAGES);
                consuming.basicConsume(QUEUE, false, (tag, delivery) -> {
                    int expected = next.getAndIncrement();
                    String problem = check(delivery.getBody(), expected);
                    if (problem != null) {
                        wrong.compareAndSet(null, problem);
                    }
                    consuming.basicAck(delivery.getEnvelope().getDeliveryTag(), false);
                    all.countDown();
                }, tag -> { });
                assertThat(all.await(120, TimeUnit.SECONDS)).as("every message delivered (%d of %d); broker alive: "
                    + "%s", MESSAGES - all.getCount(), MESSAGES, broker.process.isAlive()).isTrue();
                assertThat(wrong.get()).as("in order and intact").isNull();
            }
            assertThat(broker.process.isAlive()).isTrue();
            broker.stop();
        }
    }

    /** Message {@code seq}: its number, then bytes that depend on it and on their position. */
    private static void fill(byte[] body, int seq) {
        ByteBuffer.wrap(body).putInt(0, seq);
        for (int i = 4; i < body.length; i++) {
            body[i] = (byte) (seq * 31 + i);
        }
    }

    private static String check(byte[] body, int expected) {
        if (body.length != SIZE) {
            return "message " + expected + " has " + body.length + " bytes";
        }
        int seq = ByteBuffer.wrap(body).getInt(0);
        if (seq != expected) {
            return "message " + seq + " came where " + expected + " was due";
        }
        for (int i = 4; i < body.length; i++) {
            if (body[i] != (byte) (seq * 31 + i)) {
                return "message " + seq + " is damaged at byte " + i;
            }
        }
        return null;
    }
}
