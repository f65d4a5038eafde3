package io.skiffmq.store;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.skiffmq.codec.testing.LeakDetection;
import io.skiffmq.core.message.Message;
import io.skiffmq.core.message.MessageFormat;
import io.skiffmq.core.queue.QueueExecutor;
import io.skiffmq.core.queue.QueueLog;
import io.skiffmq.core.queue.StoredMessage;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/** Acks gathered into one record per turn of the queue; journals of one ack record each still recover. */
@ExtendWith(LeakDetection.class)
class AckRecordTest {
    /**
     * Records written by JournalRecord as of commit a957149 (version 2, one record per ack): queue 7, publishes of
     * sequences 0, 1, 2 (AMQP 1.0 data sections "m0", "m1", "m2"), an ack of 1, a requeue of 2 to delivery count 3.
     */
    private static final String[] V2_JOURNAL = {
        "0201010100000000000000070000000000000000000000000000000ce22fe9860000000171005375a0026d30",
        "0201010100000000000000070000000000000001000000000000000c1d4e17680000000171005375a0026d31",
        "0201010100000000000000070000000000000002000000000000000c190062ab0000000171005375a0026d32",
        "02020000000000000000000700000000000000010000000000000000641f3794",
        "020300000000000000000007000000000000000200000003000000006bbd19e9",
    };

    @TempDir
    Path dir;

    /** A queue's thread, stepped by the test: what it runs after the current task waits in {@link #tasks}. */
    private final Queue<Runnable> tasks = new ArrayDeque<>();
    private final QueueExecutor stepped = new QueueExecutor() {
        @Override
        public boolean inExecutor() {
            return true;
        }

        @Override
        public void execute(Runnable task) {
            tasks.add(task);
        }
    };

    private static Message message(long sequence) throws Exception {
        byte[] data = {0x00, 0x53, 0x75, (byte) 0xa0, 2, 'm', (byte) ('0' + sequence)};
        return Message.readStored(MessageFormat.AMQP_1_0, Unpooled.wrappedBuffer(data), true, "", "q");
    }

    private static QueueLog log(MessageStore store, long queueId, QueueExecutor executor) {
        return store.log(queueId, executor, sequence -> CompletableFuture.completedFuture(0));
    }

    private List<Long> sequences(List<StoredMessage> messages) {
        List<Long> sequences = new ArrayList<>();
        messages.forEach(m -> sequences.add(m.sequence()));
        return sequences;
    }

    @Test
    void aJournalOfOneRecordPerAckRecovers() throws Exception {
        CountDownLatch written = new CountDownLatch(V2_JOURNAL.length);
        try (Journal journal = new Journal(dir, Journal.SyncPolicy.OS).start()) {
            for (String record : V2_JOURNAL) {
                journal.append(Unpooled.wrappedBuffer(ByteBufUtil.decodeHexDump(record)), written::countDown);
            }
            assertThat(written.await(10, TimeUnit.SECONDS)).isTrue();
        }
        try (MessageStore store = new MessageStore(dir, Journal.SyncPolicy.OS, Journal.DEFAULT_SEGMENT_BYTES)) {
            log(store, 7, QueueExecutor.CALLER_THREAD);
            List<StoredMessage> recovered = store.recover().get(7L);
            store.start();
            assertThat(sequences(recovered)).containsExactly(0L, 2L);
            assertThat(recovered.get(1).deliveryCount()).isEqualTo(3);
        }
    }

    @Test
    void theAcksOfOneTurnBecomeOneRecordOfRangesAndRecover() throws Exception {
        try (MessageStore store = new MessageStore(dir, Journal.SyncPolicy.OS, Journal.DEFAULT_SEGMENT_BYTES)) {
            QueueLog log = log(store, 4, stepped);
            store.recover();
            store.start();
            long[] locations = new long[10];
            for (int s = 0; s < 10; s++) {
                Message m = message(s);
                locations[s] = log.publish(s, m, 0, Long.MAX_VALUE, null);
                m.release();
            }
            for (int s : new int[] {0, 1, 2, 3, 4, 7}) {
                log.remove(s, locations[s]);
            }
            assertThat(tasks).as("one write for the whole turn").hasSize(1);
            tasks.poll().run();
            log.remove(9, locations[9]); // a later turn: a record of its own
            tasks.poll().run();
        }
        List<String> acks = new ArrayList<>();
        try (Journal journal = new Journal(dir, Journal.SyncPolicy.OS)) {
            journal.replay((r, location) -> {
                assertThat(r.type()).isNotEqualTo(RecordType.ACK);
                if (r.type() == RecordType.ACKS) {
                    StringBuilder ranges = new StringBuilder();
                    for (int i = 0; i < r.rangeCount(); i++) {
                        ranges.append(r.rangeFirst(i)).append('+').append(r.rangeLength(i)).append(' ');
                    }
                    acks.add(ranges.toString().trim());
                }
            });
        }
        assertThat(acks).containsExactly("0+5 7+1", "9+1");
        try (MessageStore store = new MessageStore(dir, Journal.SyncPolicy.OS, Journal.DEFAULT_SEGMENT_BYTES)) {
            log(store, 4, stepped);
            List<StoredMessage> recovered = store.recover().get(4L);
            store.start();
            assertThat(sequences(recovered)).containsExactly(5L, 6L, 8L);
        }
    }

    @Test
    void acksGatheredButNotYetWrittenAreWrittenWhenTheStoreCloses() throws Exception {
        try (MessageStore store = new MessageStore(dir, Journal.SyncPolicy.OS, Journal.DEFAULT_SEGMENT_BYTES)) {
            QueueLog log = log(store, 4, stepped);
            store.recover();
            store.start();
            long[] locations = new long[3];
            for (int s = 0; s < 3; s++) {
                Message m = message(s);
                locations[s] = log.publish(s, m, 0, Long.MAX_VALUE, null);
                m.release();
            }
            log.remove(0, locations[0]);
            assertThat(tasks).as("the write is queued, not run").hasSize(1);
        }
        try (MessageStore store = new MessageStore(dir, Journal.SyncPolicy.OS, Journal.DEFAULT_SEGMENT_BYTES)) {
            log(store, 4, stepped);
            List<StoredMessage> recovered = store.recover().get(4L);
            store.start();
            assertThat(sequences(recovered)).containsExactly(1L, 2L);
        }
    }
}
