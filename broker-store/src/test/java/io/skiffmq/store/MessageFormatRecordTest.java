package io.skiffmq.store;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.skiffmq.codec.amqp091.BasicProperties;
import io.skiffmq.codec.testing.LeakDetection;
import io.skiffmq.core.message.Amqp091Message;
import io.skiffmq.core.message.Amqp10Message;
import io.skiffmq.core.message.Message;
import io.skiffmq.core.message.MessageFormat;
import io.skiffmq.core.queue.QueueExecutor;
import io.skiffmq.core.queue.QueueLog;
import io.skiffmq.core.queue.StoredMessage;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/** Publish records name their message's format; records from before formats recover as AMQP 1.0. */
@ExtendWith(LeakDetection.class)
class MessageFormatRecordTest {
    /**
     * A version 1 publish record, written by JournalRecord as of commit 784b69c (before message formats): queue 7,
     * sequence 11, durable, delivery count 2, exchange amq.direct, key rk, holding {@link #V1_MESSAGE}.
     */
    private static final String V1_RECORD = "010100010000000000000007000000000000000b0000000200000042c9b36bb5"
        + "000a616d712e6469726563740002726b"
        + "005370c0020141005373c00501a1026d31005374c10702a1016ba10176005375a00568656c6c6f005378c10602a301665301";
    /** header(durable), properties(message-id "m1"), application-properties {k: v}, data "hello", footer {f: 1}. */
    private static final String V1_MESSAGE = "005370c0020141005373c00501a1026d31005374c10702a1016ba10176"
        + "005375a00568656c6c6f005378c10602a301665301";

    @TempDir
    Path dir;

    private static Amqp091Message amqp091() throws Exception {
        ByteBuf properties = Unpooled.buffer();
        new BasicProperties("text/plain", null, Map.of("k", "v", "n", 5L), 2, 3, "corr", "replies", "60000", "id",
            Instant.ofEpochSecond(1_700_000_000L), "t", "guest", "app", null).encode(properties);
        ByteBuf body = Unpooled.compositeBuffer().addComponents(true, Unpooled.copiedBuffer("two ".getBytes()),
            Unpooled.copiedBuffer("frames".getBytes()));
        return Amqp091Message.of(properties, body, "amq.topic", "a.b");
    }

    private static byte[] stored(Message m) {
        ByteBuf out = Unpooled.buffer();
        m.writeStored(out);
        byte[] bytes = ByteBufUtil.getBytes(out);
        out.release();
        return bytes;
    }

    private static QueueLog log(MessageStore store, long queueId) {
        return store.log(queueId, QueueExecutor.CALLER_THREAD, sequence -> CompletableFuture.completedFuture(0));
    }

    @Test
    void aVersion1RecordReadsAsAmqp10() throws Exception {
        ByteBuf in = Unpooled.wrappedBuffer(ByteBufUtil.decodeHexDump(V1_RECORD));
        JournalRecord.Read r = JournalRecord.read(in);
        assertThat(r.format()).isEqualTo(MessageFormat.AMQP_1_0.tag());
        assertThat(r.flags()).isEqualTo(RecordDescriptor.FLAG_DURABLE);
        assertThat(ByteBufUtil.hexDump(r.message())).isEqualTo(V1_MESSAGE);
    }

    @Test
    void aRecordNamesItsMessagesFormat() throws Exception {
        Message m = amqp091();
        try {
            ByteBuf out = Unpooled.buffer();
            JournalRecord.writePublish(out, 1, 2, RecordDescriptor.FLAG_DURABLE, 0, JournalRecord.NO_EXPIRY, m);
            assertThat(out.getByte(RecordDescriptor.VERSION_OFFSET)).isEqualTo(RecordDescriptor.VERSION);
            assertThat(out.getByte(RecordDescriptor.FLAGS_OFFSET)).as("the flags' high byte")
                .isEqualTo(MessageFormat.AMQP_0_9_1.tag());
            JournalRecord.Read r = JournalRecord.read(out);
            assertThat(r.format()).isEqualTo(MessageFormat.AMQP_0_9_1.tag());
            assertThat(r.flags()).isEqualTo(RecordDescriptor.FLAG_DURABLE);
            assertThat(ByteBufUtil.getBytes(r.message())).isEqualTo(stored(m));
            out.release();
        } finally {
            m.release();
        }
    }

    @Test
    void aJournalWrittenBeforeFormatsRecoversItsMessagesAsAmqp10() throws Exception {
        CountDownLatch written = new CountDownLatch(1);
        try (Journal journal = new Journal(dir, Journal.SyncPolicy.OS).start()) {
            journal.append(Unpooled.wrappedBuffer(ByteBufUtil.decodeHexDump(V1_RECORD)), true, written::countDown);
            assertThat(written.await(10, TimeUnit.SECONDS)).isTrue();
        }
        try (MessageStore store = new MessageStore(dir, Journal.SyncPolicy.OS, Journal.DEFAULT_SEGMENT_BYTES)) {
            QueueLog log = log(store, 7);
            List<StoredMessage> recovered = store.recover().get(7L);
            store.start();
            assertThat(recovered).hasSize(1);
            StoredMessage stored = recovered.get(0);
            assertThat(stored.sequence()).isEqualTo(11);
            assertThat(stored.deliveryCount()).isEqualTo(2);
            Message m = log.read(stored.sequence(), stored.location());
            try {
                assertThat(m).isInstanceOf(Amqp10Message.class);
                assertThat(m.format()).isEqualTo(MessageFormat.AMQP_1_0);
                assertThat(ByteBufUtil.hexDump(((Amqp10Message) m).bytes())).isEqualTo(V1_MESSAGE);
                assertThat(m.exchange()).isEqualTo("amq.direct");
                assertThat(m.routingKey()).isEqualTo("rk");
                assertThat(m.durable()).isTrue();
                assertThat(m.header("k")).isEqualTo("v");
            } finally {
                m.release();
            }
        }
    }

    @Test
    void anAmqp091MessageRoundTripsThroughTheJournalExactly() throws Exception {
        Amqp091Message original = amqp091();
        byte[] expected = stored(original);
        byte[] properties = ByteBufUtil.getBytes(original.propertyBytes());
        CountDownLatch durable = new CountDownLatch(1);
        try (MessageStore store = new MessageStore(dir, Journal.SyncPolicy.OS, Journal.DEFAULT_SEGMENT_BYTES)) {
            QueueLog log = log(store, 3);
            store.recover();
            store.start();
            log.publish(1, original, 0, Long.MAX_VALUE, durable::countDown);
            assertThat(durable.await(10, TimeUnit.SECONDS)).isTrue();
        } finally {
            original.release();
        }
        try (MessageStore store = new MessageStore(dir, Journal.SyncPolicy.OS, Journal.DEFAULT_SEGMENT_BYTES)) {
            QueueLog log = log(store, 3);
            StoredMessage stored = store.recover().get(3L).get(0);
            store.start();
            Message m = log.read(stored.sequence(), stored.location());
            try {
                assertThat(m).isInstanceOf(Amqp091Message.class);
                Amqp091Message back = (Amqp091Message) m;
                assertThat(stored(back)).isEqualTo(expected);
                assertThat(ByteBufUtil.getBytes(back.propertyBytes())).isEqualTo(properties);
                assertThat(ByteBufUtil.getBytes(back.body())).isEqualTo("two frames".getBytes());
                assertThat(back.exchange()).isEqualTo("amq.topic");
                assertThat(back.routingKey()).isEqualTo("a.b");
                assertThat(back.durable()).isTrue();
                assertThat(back.priority()).isEqualTo(3);
                assertThat(back.ttl()).isEqualTo(60000);
                assertThat(back.headers()).isEqualTo(Map.of("k", "v", "n", 5L));
            } finally {
                m.release();
            }
        }
    }
}
