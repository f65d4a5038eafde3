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
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A new leader builds its live queue from its replica's entries a few thousand at a time ({@link QueueReplica#restore}),
 * as an index, and reads each message from the replica as it delivers it: every message, in order, with its exchange
 * and routing key, which are decoded once while they repeat.
 */
class ReplicaGoLiveTest {
    private static final QueueCommands.Key KEY = new QueueCommands.Key("/", "qq", 7);

    private static byte[] enqueue(long sequence, String exchange, String routingKey) throws Exception {
        ByteBuf properties = Unpooled.buffer();
        BasicProperties.EMPTY.encode(properties);
        Message m = Amqp091Message.of(properties,
            Unpooled.wrappedBuffer(("m" + sequence).getBytes(StandardCharsets.UTF_8)), exchange, routingKey);
        try {
            return QueueCommands.enqueue(KEY, sequence, 0, 0, -1, m);
        } finally {
            m.release();
        }
    }

    @Test
    void everyMessageIsRestoredInOrderWithItsExchangeAndRoutingKey() throws Exception {
        QueueReplica replica = new QueueReplica();
        int count = 10_000; // over two chunks and a part
        for (long sequence = 1; sequence <= count; sequence++) {
            String exchange = sequence <= count / 2 ? "" : "amq.direct";
            ByteBuffer command = ByteBuffer.wrap(enqueue(sequence, exchange, "k" + sequence / 3_000));
            byte kind = command.get();
            QueueCommands.key(command);
            replica.apply(kind, command);
        }
        ClassicQueue live = QuietGroup.liveQueue(KEY, replica);
        assertThat(live.readyCount()).isEqualTo(count);
        // an index: each message is read from the replica as it goes out, so one the replica lost (it cannot,
        // while this node leads) is dropped, loudly, rather than delivered from a copy in the queue
        ByteBuffer settle = ByteBuffer.wrap(QueueCommands.settle(KEY, 7));
        byte settleKind = settle.get();
        QueueCommands.key(settle);
        replica.apply(settleKind, settle);

        List<Message> served = new ArrayList<>();
        QueueConsumer consumer = live.subscribe(new ConsumerSink() {
            @Override
            public void deliver(QueueDelivery delivery) {
                served.add(delivery.message().retain());
            }

            @Override
            public void creditState(long deliveryCount, long linkCredit, long available, boolean drain) {
            }

            @Override
            public void queueDeleted() {
            }
        }, ConsumerFlow.credit(), false);
        live.flow(consumer, 0, count, false, false);
        assertThat(served).hasSize(count - 1);
        for (int i = 0; i < count - 1; i++) {
            Message m = served.get(i);
            long sequence = i < 6 ? i + 1 : i + 2; // 7 was not in the replica any more
            assertThat(((Amqp091Message) m).body().toString(StandardCharsets.UTF_8)).isEqualTo("m" + sequence);
            assertThat(m.exchange()).isEqualTo(sequence <= count / 2 ? "" : "amq.direct");
            assertThat(m.routingKey()).isEqualTo("k" + sequence / 3_000);
        }
        assertThat(served.get(1).routingKey()).as("decoded once while it repeats").isSameAs(served.get(0).routingKey());
        assertThat(served.get(count - 2).exchange()).isSameAs(served.get(count / 2).exchange());
        served.forEach(Message::release);
        live.close();
    }
}
