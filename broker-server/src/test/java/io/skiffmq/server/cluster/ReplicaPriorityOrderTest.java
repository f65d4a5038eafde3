package io.skiffmq.server.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.skiffmq.codec.amqp091.BasicProperties;
import io.skiffmq.core.message.Amqp091Message;
import io.skiffmq.core.message.Message;
import io.skiffmq.core.queue.ClassicQueue;
import io.skiffmq.core.queue.ConsumerFlow;
import io.skiffmq.core.queue.ConsumerSink;
import io.skiffmq.core.queue.QueueConsumer;
import io.skiffmq.core.queue.QueueDelivery;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The live queue a new leader builds from its replica serves in RabbitMQ 4.0's priority order, the same on every
 * member, whether its replica was built by applying the commands or restored from a snapshot: messages returned
 * before first (in sequence order), then the high lane (priority above 4) and the normal one 2:1, the count of takes
 * starting at 0.
 */
class ReplicaPriorityOrderTest {
    private static final String GROUP = "g";
    private static final QueueCommands.Key KEY = new QueueCommands.Key("/", "qq", 7);

    private static byte[] enqueue(long sequence, Integer priority, String body) throws Exception {
        ByteBuf properties = Unpooled.buffer();
        new BasicProperties(null, null, null, 2, priority, null, null, null, null, null, null, null, null, null)
            .encode(properties);
        Message m = Amqp091Message.of(properties, Unpooled.wrappedBuffer(body.getBytes(StandardCharsets.UTF_8)), "",
            "qq");
        try {
            return QueueCommands.enqueue(KEY, sequence, 0, 0, -1, m);
        } finally {
            m.release();
        }
    }

    private static void apply(ReplicatedQueues queues, long index, byte[]... commands) {
        queues.apply(GROUP, index, ByteBuffer.wrap(QueueCommands.batch(List.of(commands))));
    }

    /** What a live queue built from {@code queues}' replica, as a new leader builds it, delivers, in order. */
    private static List<String> served(ReplicatedQueues queues) {
        ClassicQueue live = QuietGroup.liveQueue(KEY, queues.replica(GROUP, KEY)); // as a new leader builds it
        List<String> bodies = new ArrayList<>();
        QueueConsumer consumer = live.subscribe(new ConsumerSink() {
            @Override
            public void deliver(QueueDelivery delivery) {
                bodies.add(((Amqp091Message) delivery.message()).body().toString(StandardCharsets.UTF_8));
            }

            @Override
            public void creditState(long deliveryCount, long linkCredit, long available, boolean drain) {
            }

            @Override
            public void queueDeleted() {
            }
        }, ConsumerFlow.credit(), false); // left unsettled: a settlement would go to the leader's log
        live.flow(consumer, 0, 100, false, false);
        live.close();
        return bodies;
    }

    @Test
    void everyMemberBuildsTheLiveQueueInTheSameOrder() throws Exception {
        ReplicatedQueues member = new ReplicatedQueues(Duration.ofSeconds(1));
        apply(member, 1, enqueue(1, null, "n1"), enqueue(2, 5, "h1"), enqueue(3, 4, "n2"), enqueue(4, 9, "h2"),
            enqueue(5, 6, "h3"), enqueue(6, 0, "n3"), enqueue(7, 7, "h4"), enqueue(8, 5, "gone"));
        apply(member, 2, QueueCommands.returned(KEY, 3, 0, 1), QueueCommands.returned(KEY, 5, 1, 2),
            QueueCommands.settle(KEY, 8));
        List<String> expected = List.of("n2", "h3", "h1", "h2", "n1", "h4", "n3");
        assertThat(served(member)).as("returned first, then h1 h2, n1 (older than h4), h4, n3").isEqualTo(expected);

        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (DataOutputStream out = new DataOutputStream(bytes)) {
            member.snapshot(GROUP).write(out);
        }
        ReplicatedQueues restored = new ReplicatedQueues(Duration.ofSeconds(1));
        restored.restore(GROUP, new DataInputStream(new ByteArrayInputStream(bytes.toByteArray())));
        assertThat(served(restored)).as("from a snapshot").isEqualTo(expected);
    }
}
