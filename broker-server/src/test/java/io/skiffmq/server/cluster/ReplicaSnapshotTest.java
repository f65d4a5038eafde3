package io.skiffmq.server.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.skiffmq.cluster.QueueGroupApplier;
import io.skiffmq.codec.amqp091.BasicProperties;
import io.skiffmq.core.message.Amqp091Message;
import io.skiffmq.core.message.Message;
import io.skiffmq.core.queue.DeadLetters;
import io.skiffmq.core.queue.StoredMessage;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * A queue group's replicas through a snapshot: what {@link ReplicatedQueues#snapshot} writes,
 * {@link ReplicatedQueues#restore} reads back on another member exactly (sequences, counts, expiry, the
 * dead-lettering mark, the stored bytes, the numbers forwarding nodes sent), in place of what that member held; and a snapshot keeps the state it was
 * taken at while commands go on being applied.
 */
class ReplicaSnapshotTest {
    private static final String GROUP = "g";
    private static final QueueCommands.Key ONE = new QueueCommands.Key("/", "qq-1", 11);
    private static final QueueCommands.Key TWO = new QueueCommands.Key("vh", "qq-2", 22);
    private static final long ENQUEUER = 42;

    private static Message message(String body) throws Exception {
        ByteBuf properties = Unpooled.buffer();
        new BasicProperties("text/plain", null, Map.of("k", "v"), 2, 3, "corr", null, null, null, null, null, null,
            null, null).encode(properties);
        return Amqp091Message.of(properties, Unpooled.wrappedBuffer(body.getBytes(StandardCharsets.UTF_8)), "ex",
            "rk");
    }

    static byte[] enqueue(QueueCommands.Key key, long sequence, long expiresAt, String body)
            throws Exception {
        Message m = message(body);
        try {
            return QueueCommands.enqueue(key, sequence, 0, 0, expiresAt, m);
        } finally {
            m.release();
        }
    }

    /** An enqueue of a message another node forwarded with {@code number}. */
    static byte[] forwarded(QueueCommands.Key key, long sequence, long expiresAt, String body, long number)
            throws Exception {
        Message m = message(body);
        try {
            return QueueCommands.enqueue(key, sequence, 0, 0, expiresAt, m, ENQUEUER, number);
        } finally {
            m.release();
        }
    }

    static void apply(ReplicatedQueues queues, long index, byte[]... commands) {
        queues.apply(GROUP, index, ByteBuffer.wrap(QueueCommands.batch(List.of(commands))));
    }

    static byte[] written(ReplicatedQueues queues) throws Exception {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (DataOutputStream out = new DataOutputStream(bytes)) {
            queues.snapshot(GROUP).write(out);
        }
        return bytes.toByteArray();
    }

    /** The replica's messages as text: sequence, counts, expiry, mark, exchange, routing key, body. */
    static List<String> shown(ReplicatedQueues queues, QueueCommands.Key key) {
        List<StoredMessage> messages = queues.replica(GROUP, key).messages();
        try {
            return messages.stream().map(m -> m.sequence() + " " + m.deliveryCount() + " " + m.returns() + " "
                + m.expiresAt() + " " + m.deadLettering() + " " + m.message().exchange() + " "
                + m.message().routingKey() + " " + ByteBufUtil.hexDump(stored(m.message()))).toList();
        } finally {
            messages.forEach(m -> m.message().release());
        }
    }

    private static byte[] stored(Message message) {
        ByteBuf out = Unpooled.buffer();
        try {
            message.writeStored(out);
            return ByteBufUtil.getBytes(out);
        } finally {
            out.release();
        }
    }

    @Test
    void aSnapshotRestoresEveryReplicaExactlyAndKeepsTheStateItWasTakenAt() throws Exception {
        ReplicatedQueues leader = new ReplicatedQueues(Duration.ofSeconds(1));
        apply(leader, 1, enqueue(ONE, 1, -1, "first"), forwarded(ONE, 2, 1_700_000_000_000L, "second", 5),
            enqueue(ONE, 3, -1, "third"), enqueue(TWO, 7, -1, "other queue"));
        apply(leader, 2, QueueCommands.returned(ONE, 2, 3, 2), QueueCommands.settle(ONE, 1),
            QueueCommands.deadLettering(ONE, 3, DeadLetters.Reason.EXPIRED));
        List<String> one = shown(leader, ONE);
        List<String> two = shown(leader, TWO);
        assertThat(one).hasSize(2);
        assertThat(one.get(0)).startsWith("2 3 2 1700000000000 null ex rk ");
        assertThat(one.get(1)).startsWith("3 0 0 -1 EXPIRED ex rk ");

        QueueGroupApplier.Snapshot taken = leader.snapshot(GROUP);
        // applied after the snapshot was taken: not in it
        apply(leader, 3, QueueCommands.returned(ONE, 2, 9, 9), QueueCommands.settle(ONE, 3),
            forwarded(ONE, 4, -1, "later", 6));
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (DataOutputStream out = new DataOutputStream(bytes)) {
            taken.write(out);
        }

        ReplicatedQueues member = new ReplicatedQueues(Duration.ofSeconds(1));
        apply(member, 1, enqueue(ONE, 99, -1, "replaced by the snapshot"));
        member.restore(GROUP, new DataInputStream(new ByteArrayInputStream(bytes.toByteArray())));
        assertThat(shown(member, ONE)).isEqualTo(one);
        assertThat(shown(member, TWO)).isEqualTo(two);
        assertThat(written(member)).isEqualTo(bytes.toByteArray());
        assertThat(member.replica(GROUP, ONE).enqueuers().has(ENQUEUER, 5)).as("a forwarded number").isTrue();
        assertThat(member.replica(GROUP, ONE).enqueuers().has(ENQUEUER, 4)).isFalse();
        assertThat(member.replica(GROUP, ONE).enqueuers().has(ENQUEUER, 6)).as("taken after the snapshot").isFalse();

        // and the commands after the snapshot, applied on the restored member, leave what the leader has
        apply(member, 3, QueueCommands.returned(ONE, 2, 9, 9), QueueCommands.settle(ONE, 3),
            forwarded(ONE, 4, -1, "later", 6));
        assertThat(shown(member, ONE)).isEqualTo(shown(leader, ONE)).hasSize(2);
        assertThat(member.replica(GROUP, ONE).enqueuers().has(ENQUEUER, 6)).isTrue();
    }
}
