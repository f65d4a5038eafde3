package io.skiffmq.store;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.skiffmq.codec.amqp091.BasicProperties;
import io.skiffmq.codec.testing.LeakDetection;
import io.skiffmq.core.message.Amqp091Message;
import io.skiffmq.core.message.Death;
import io.skiffmq.core.message.Message;
import io.skiffmq.core.message.MessageFormat;
import io.skiffmq.core.queue.QueueExecutor;
import io.skiffmq.core.queue.QueueLog;
import io.skiffmq.core.queue.StoredMessage;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Instant;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * A dead-lettered AMQP 0-9-1 message through the journal: written now (record version 4), its death times come back
 * to the millisecond; written by a broker from before (record version 3, the message's bytes alone), to the second
 * its {@code x-death} header holds.
 */
@ExtendWith(LeakDetection.class)
class DeathHistoryRecordTest {
    private static final Instant FIRST = Instant.ofEpochMilli(1_700_000_000_123L);
    private static final Instant LAST = FIRST.plusMillis(1_500);

    @TempDir
    Path dir;

    /** Durable, published to "q" through the default exchange and rejected there at FIRST and at LAST. */
    private static Amqp091Message diedTwice() throws Exception {
        ByteBuf properties = Unpooled.buffer();
        new BasicProperties(null, null, null, 2, null, null, null, null, null, null, null, null, null, null)
            .encode(properties);
        Amqp091Message published = Amqp091Message.of(properties, Unpooled.copiedBuffer("twice".getBytes()), "",
            "q");
        Amqp091Message once = published.deadLettered("rejected", "q", FIRST, "", "q");
        published.release();
        Amqp091Message twice = once.deadLettered("rejected", "q", LAST, "", "q");
        once.release();
        return twice;
    }

    private static QueueLog log(MessageStore store) {
        return store.log(7, QueueExecutor.CALLER_THREAD, sequence -> CompletableFuture.completedFuture(0));
    }

    /** The one death recovered from queue 7's journal. */
    private Death recoveredDeath() throws Exception {
        try (MessageStore store = new MessageStore(dir, Journal.SyncPolicy.OS, Journal.DEFAULT_SEGMENT_BYTES)) {
            QueueLog log = log(store);
            StoredMessage stored = store.recover().get(7L).get(0);
            store.start();
            Message m = log.read(stored.sequence(), stored.location());
            try {
                assertThat(m).isInstanceOf(Amqp091Message.class);
                assertThat(m.durable()).isTrue();
                assertThat(m.deaths()).hasSize(1);
                return m.deaths().get(0);
            } finally {
                m.release();
            }
        }
    }

    @Test
    void aDeadLetteredMessageComesBackWithItsDeathTimesToTheMillisecond() throws Exception {
        Amqp091Message m = diedTwice();
        CountDownLatch durable = new CountDownLatch(1);
        try (MessageStore store = new MessageStore(dir, Journal.SyncPolicy.OS, Journal.DEFAULT_SEGMENT_BYTES)) {
            QueueLog log = log(store);
            store.recover();
            store.start();
            log.publish(1, m, 0, Long.MAX_VALUE, durable::countDown);
            assertThat(durable.await(10, TimeUnit.SECONDS)).isTrue();
        } finally {
            m.release();
        }
        Death d = recoveredDeath();
        assertThat(d.count()).isEqualTo(2);
        assertThat(d.firstTime()).isEqualTo(FIRST);
        assertThat(d.lastTime()).isEqualTo(LAST);
    }

    @Test
    void aVersion3RecordOfADeadLetteredMessageRecoversToTheSecond() throws Exception {
        Amqp091Message m = diedTwice();
        ByteBuf old = Unpooled.buffer(); // the stored form before record version 4: [u32 length | properties | body]
        old.writeInt(m.propertyBytes().readableBytes()).writeBytes(m.propertyBytes().duplicate())
            .writeBytes(m.body().duplicate());
        m.release();
        ByteBuf out = Unpooled.buffer();
        JournalRecord.writePublish(out, 7, 11, RecordDescriptor.FLAG_DURABLE, 0, "", "q",
            MessageFormat.AMQP_0_9_1.tag(), old);
        old.release();
        byte[] record = ByteBufUtil.getBytes(out);
        out.release();
        record[RecordDescriptor.VERSION_OFFSET] = 3;
        resign(record);
        CountDownLatch written = new CountDownLatch(1);
        try (Journal journal = new Journal(dir, Journal.SyncPolicy.OS).start()) {
            journal.append(Unpooled.wrappedBuffer(record), true, written::countDown);
            assertThat(written.await(10, TimeUnit.SECONDS)).isTrue();
        }
        Death d = recoveredDeath();
        Instant second = Instant.ofEpochSecond(FIRST.getEpochSecond());
        assertThat(d.count()).isEqualTo(2);
        assertThat(d.firstTime()).isEqualTo(second);
        assertThat(d.lastTime()).as("x-death holds the first time only").isEqualTo(second);
    }

    /** Sets a record's checksum to match its bytes, as the writer would have. */
    private static void resign(byte[] record) {
        CRC32C crc = new CRC32C();
        crc.update(record, 0, RecordDescriptor.CRC_OFFSET);
        crc.update(record, RecordDescriptor.HEADER_LENGTH, record.length - RecordDescriptor.HEADER_LENGTH);
        ByteBuffer.wrap(record).putInt(RecordDescriptor.CRC_OFFSET, (int) crc.getValue());
    }
}
