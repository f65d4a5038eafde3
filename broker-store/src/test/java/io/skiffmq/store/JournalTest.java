package io.skiffmq.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.skiffmq.codec.testing.LeakDetection;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongConsumer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** Group commit and replay on Chronicle Queue. */
@ExtendWith(LeakDetection.class)
class JournalTest {
    @TempDir
    Path dir;

    private static ByteBuf publish(long queue, long sequence) {
        ByteBuf out = Unpooled.buffer();
        JournalRecord.writePublish(out, queue, sequence, RecordDescriptor.FLAG_DURABLE, 0, "", "q" + queue,
            RecordDescriptor.FORMAT_AMQP_1_0, Unpooled.wrappedBuffer(("message " + queue + "/" + sequence).getBytes()));
        return out;
    }

    @ParameterizedTest
    @EnumSource(Journal.SyncPolicy.class)
    void concurrentAppendsShareSyncsAndReplayInOrder(Journal.SyncPolicy policy) throws Exception {
        int threads = 4;
        int perThread = 2500;
        CountDownLatch durable = new CountDownLatch(threads * perThread);
        try (Journal journal = new Journal(dir, policy).start()) {
            List<Thread> publishers = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                long queue = t;
                publishers.add(new Thread(() -> {
                    for (long s = 0; s < perThread; s++) {
                        journal.append(publish(queue, s), durable::countDown);
                    }
                }));
            }
            publishers.forEach(Thread::start);
            for (Thread p : publishers) {
                p.join();
            }
            assertThat(durable.await(60, TimeUnit.SECONDS)).as("every record confirmed").isTrue();
            if (policy == Journal.SyncPolicy.SYNC) {
                assertThat(journal.syncs()).as("group commit: fewer syncs than records").isPositive()
                    .isLessThan(threads * perThread);
            } else {
                assertThat(journal.syncs()).isZero();
            }
        }
        long[] next = new long[threads];
        try (Journal reopened = new Journal(dir, policy)) {
            long count = reopened.replay((r, segment) -> {
                int queue = (int) r.queueId();
                assertThat(r.sequence()).as("per-publisher order").isEqualTo(next[queue]++);
                assertThat(new String(ByteBufUtil.getBytes(r.message()))).isEqualTo("message " + queue + "/" + r.sequence());
            });
            assertThat(count).isEqualTo(threads * perThread);
        }
    }

    @Test
    void aRecordThatFailsItsChecksumEndsTheReplayWithoutFailingIt() throws Exception {
        try (Journal journal = new Journal(dir, Journal.SyncPolicy.OS).start()) {
            CountDownLatch done = new CountDownLatch(3);
            journal.append(publish(1, 0), done::countDown);
            ByteBuf damaged = publish(1, 1);
            damaged.setByte(damaged.writerIndex() - 1, damaged.getByte(damaged.writerIndex() - 1) ^ 1);
            journal.append(damaged, done::countDown);
            journal.append(publish(1, 2), done::countDown);
            assertThat(done.await(10, TimeUnit.SECONDS)).isTrue();
        }
        try (Journal reopened = new Journal(dir, Journal.SyncPolicy.OS)) {
            List<Long> read = new ArrayList<>();
            assertThat(reopened.replay((r, segment) -> read.add(r.sequence()))).isEqualTo(1);
            assertThat(read).containsExactly(0L);
        }
    }

    @Test
    void aRecordAsLargeAsTheLargestMessageIsWrittenAndReadBack() throws Exception {
        // issue 30: a 16 MiB durable message outgrew Chronicle's largest excerpt (a quarter of its 64 MiB block),
        // and the journal failed for the whole virtual host
        int size = 20 << 20;
        byte[] body = new byte[size];
        for (int i = 0; i < size; i++) {
            body[i] = (byte) (i * 7);
        }
        ByteBuf record = Unpooled.buffer(size + 128);
        JournalRecord.writePublish(record, 1, 0, RecordDescriptor.FLAG_DURABLE, 0, "", "q",
            RecordDescriptor.FORMAT_AMQP_1_0, Unpooled.wrappedBuffer(body));
        try (Journal journal = new Journal(dir, Journal.SyncPolicy.OS, Journal.DEFAULT_SEGMENT_BYTES, size).start()) {
            CountDownLatch durable = new CountDownLatch(1);
            long location = journal.append(record, durable::countDown);
            assertThat(durable.await(30, TimeUnit.SECONDS)).as("written and confirmed").isTrue();
            assertThat(ByteBufUtil.getBytes(JournalRecord.read(journal.read(location)).message())).isEqualTo(body);
        }
    }

    @Test
    void writingMovesToNewSegmentsAndEveryStartBeginsOne() throws Exception {
        int records = 200;
        List<Long> segments = new ArrayList<>();
        try (Journal journal = new Journal(dir, Journal.SyncPolicy.OS, 1024).start()) {
            for (long s = 0; s < records; s++) {
                segments.add(Journal.segmentOf(journal.append(publish(1, s), null)));
            }
            journal.flush().get(10, TimeUnit.SECONDS);
            assertThat(segments).isSorted();
            assertThat(journal.segments()).hasSizeGreaterThan(5).last().isEqualTo(segments.get(records - 1));
            long first = journal.segments().get(0);
            journal.deleteSegment(first);
            assertThat(journal.segments()).doesNotContain(first);
        }
        List<Long> read = new ArrayList<>();
        try (Journal reopened = new Journal(dir, Journal.SyncPolicy.OS, 1024)) {
            reopened.replay((r, segment) -> read.add(r.sequence()));
            long last = reopened.segments().get(reopened.segments().size() - 1);
            reopened.start();
            assertThat(reopened.writerSegment()).as("a restart never appends to an old segment").isEqualTo(last + 1);
        }
        assertThat(read).as("records of the deleted segment are gone, the rest in order").isNotEmpty()
            .doesNotContain(0L).isSorted().endsWith((long) records - 1);
    }

    @Test
    void theNextSegmentIsReadyBeforeTheWriterGetsThereAndGoesAtClose() throws Exception {
        JournalSegments files = new JournalSegments(dir, Journal.SyncPolicy.SYNC, JournalSegments.DEFAULT_BLOCK_SIZE);
        List<Long> written = new ArrayList<>();
        try (Journal journal = new Journal(dir, Journal.SyncPolicy.SYNC, 1024).start()) {
            long first = journal.writerSegment();
            await("the next segment made ready, its cycle file too").atMost(Duration.ofSeconds(10))
                .until(() -> files.list().contains(first + 1) && hasDataFile(files, first + 1));
            assertThat(journal.segments()).as("the one made ready holds nothing yet").containsExactly(first);
            for (long s = 0; s < 100; s++) {
                written.add(journal.append(publish(3, s), null));
            }
            journal.flush().get(10, TimeUnit.SECONDS);
            long last = Journal.segmentOf(written.get(written.size() - 1));
            assertThat(last).isGreaterThan(first + 2);
            await("the one after the last made ready").atMost(Duration.ofSeconds(10))
                .until(() -> files.list().contains(last + 1));
            assertThat(journal.segments()).last().isEqualTo(last);
        }
        assertThat(files.list()).as("the spare, which holds nothing, is removed at close").doesNotContain(
            Journal.segmentOf(written.get(written.size() - 1)) + 1);
        List<Long> replayed = new ArrayList<>();
        try (Journal reopened = new Journal(dir, Journal.SyncPolicy.SYNC, 1024)) {
            reopened.replay((r, location) -> replayed.add(location));
        }
        assertThat(replayed).isEqualTo(written);
    }

    private static boolean hasDataFile(JournalSegments files, long segment) {
        try {
            return java.nio.file.Files.exists(files.dataFile(segment));
        } catch (IllegalStateException | java.io.UncheckedIOException e) {
            return false;
        }
    }

    @Test
    void aSegmentDeletedAStepAtATimeGoesWholeAndAnInterruptOnlyEndsThePacing() throws Exception {
        JournalSegments files = new JournalSegments(dir, Journal.SyncPolicy.OS, JournalSegments.DEFAULT_BLOCK_SIZE);
        files.prepare(1).close();
        files.prepare(2).close();
        files.delete(1, true);
        assertThat(files.list()).containsExactly(2L);
        CompletableFuture<Boolean> interruptKept = CompletableFuture.supplyAsync(() -> {
            Thread.currentThread().interrupt();
            files.delete(2, true);
            return Thread.interrupted();
        });
        assertThat(interruptKept.get(10, TimeUnit.SECONDS)).isTrue();
        assertThat(files.list()).isEmpty();
        assertThat(java.nio.file.Files.list(dir).toList()).isEmpty();
    }

    @Test
    void onlyTheWrittenPartOfASegmentsFileIsFreedAStepAtATime() throws Exception {
        Path file = dir.resolve("segment.cq4");
        long step = JournalSegments.SHRINK_STEP;
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.CREATE_NEW, StandardOpenOption.READ,
                StandardOpenOption.WRITE)) {
            channel.write(ByteBuffer.wrap(new byte[] {7}), 85 * step - 1);
            assertThat(JournalSegments.writtenEnd(channel)).as("a last byte").isEqualTo(85 * step);
            channel.truncate(0);
            channel.write(ByteBuffer.wrap(new byte[] {1, 2, 3}), 0);
            channel.write(ByteBuffer.wrap(new byte[] {4}), 2 * step + 5);
            channel.write(ByteBuffer.wrap(new byte[] {0}), 85 * step - 1); // the sparse rest of the block
            assertThat(JournalSegments.writtenEnd(channel)).as("to the step after the last written byte")
                .isEqualTo(3 * step);
            channel.truncate(0);
            channel.write(ByteBuffer.wrap(new byte[] {0}), 10 * step + 17);
            assertThat(JournalSegments.writtenEnd(channel)).as("nothing but zeros").isZero();
            channel.truncate(0);
            assertThat(JournalSegments.writtenEnd(channel)).as("empty").isZero();
        }
    }

    @Test
    void aWrittenRecordIsReadBackFromItsLocationInAnySegment() throws Exception {
        List<Long> locations = new ArrayList<>();
        try (Journal journal = new Journal(dir, Journal.SyncPolicy.OS, 1024).start()) {
            for (long s = 0; s < 100; s++) {
                locations.add(journal.append(publish(7, s), null));
            }
            journal.flush().get(10, TimeUnit.SECONDS);
            assertThat(journal.isWritten(locations.get(99))).isTrue();
            for (int s = 99; s >= 0; s -= 7) {
                JournalRecord.Read r = JournalRecord.read(journal.read(locations.get(s)));
                assertThat(r.sequence()).isEqualTo(s);
                assertThat(new String(ByteBufUtil.getBytes(r.message()))).isEqualTo("message 7/" + s);
            }
        }
        List<Long> replayed = new ArrayList<>();
        try (Journal reopened = new Journal(dir, Journal.SyncPolicy.OS, 1024)) {
            reopened.replay((r, location) -> replayed.add(location));
            assertThat(replayed).as("replay reports the locations append returned").isEqualTo(locations);
            reopened.start();
            assertThat(JournalRecord.read(reopened.read(locations.get(42))).sequence()).isEqualTo(42);
        }
    }

    @ParameterizedTest
    @EnumSource(Journal.SyncPolicy.class)
    void aWriterThatFailsConfirmsNothingMoreAndRefusesAppends(Journal.SyncPolicy policy) throws Exception {
        // with SYNC the callback fails the sync thread, which fails the writer
        try (Journal journal = new Journal(dir, policy).start()) {
            CountDownLatch first = new CountDownLatch(1);
            journal.append(publish(1, 0), () -> {
                first.countDown();
                throw new OutOfMemoryError("simulated: the writer cannot go on");
            });
            assertThat(first.await(10, TimeUnit.SECONDS)).isTrue();
            await("appends refused once the writer failed").atMost(Duration.ofSeconds(10)).until(() -> {
                try {
                    journal.append(publish(1, 1), () -> {
                        throw new AssertionError("confirmed after the writer failed");
                    });
                    return false;
                } catch (IllegalStateException e) {
                    assertThat(e).hasMessageContaining("journal failed");
                    return true;
                }
            });
            assertThat(journal.flush()).as("a flush fails instead of hanging").isCompletedExceptionally();
        }
    }

    @Test
    void appendersRacingThroughAFullRingAndSegmentRollsEachGetTheLocationOfTheirOwnRecord() throws Exception {
        int threads = 4;
        int perThread = 500;
        long[][] locations = new long[threads][perThread];
        CountDownLatch durable = new CountDownLatch(threads * perThread);
        // 8 slots: appenders wait for room all the time; 2 KiB segments: rolls race appends
        try (Journal journal = new Journal(dir, Journal.SyncPolicy.OS, 2048, Journal.DEFAULT_MAX_MESSAGE_BYTES, 8).start()) {
            List<Thread> publishers = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                int queue = t;
                publishers.add(new Thread(() -> {
                    for (int s = 0; s < perThread; s++) {
                        locations[queue][s] = journal.append(publish(queue, s), true, durable::countDown);
                    }
                }));
            }
            publishers.forEach(Thread::start);
            for (Thread p : publishers) {
                p.join();
            }
            assertThat(durable.await(60, TimeUnit.SECONDS)).as("every record confirmed").isTrue();
            long segments = 0;
            for (int t = 0; t < threads; t++) {
                assertThat(locations[t]).as("one publisher's locations rise").isSorted();
                for (int s = 0; s < perThread; s += 37) {
                    JournalRecord.Read r = JournalRecord.read(journal.read(locations[t][s]));
                    assertThat(r.queueId()).isEqualTo(t);
                    assertThat(r.sequence()).isEqualTo(s);
                }
                segments = Math.max(segments, Journal.segmentOf(locations[t][perThread - 1]));
            }
            long written = 0;
            for (long segment = 1; segment <= segments; segment++) {
                written += journal.written(segment);
            }
            assertThat(written).as("every message counted in its segment").isEqualTo(threads * perThread);
            assertThat(journal.segments()).as("rolled many times").hasSizeGreaterThan(20);
        }
    }

    @Test
    void aDeadSegmentIsLeftForANewOneEvenWithNothingMoreAppended() throws Exception {
        try (Journal journal = new Journal(dir, Journal.SyncPolicy.OS).start()) {
            long location = journal.append(publish(1, 0), true, null);
            journal.flush().get(10, TimeUnit.SECONDS);
            assertThat(journal.rollIfDead(1)).as("a live message keeps the segment").isFalse();
            journal.release(location, 1);
            assertThat(journal.rollIfDead(1)).isTrue();
            await("the writer opens the new segment").atMost(Duration.ofSeconds(10))
                .until(() -> journal.writerSegment() == Journal.segmentOf(location) + 1);
            journal.deleteSegment(Journal.segmentOf(location));
            assertThat(Journal.segmentOf(journal.append(publish(1, 1), null))).isEqualTo(journal.writerSegment());
            journal.flush().get(10, TimeUnit.SECONDS);
        }
    }

    @Test
    void closingWhileAppendersRunWritesOrReleasesEveryRecord() throws Exception {
        Journal journal = new Journal(dir, Journal.SyncPolicy.OS, Journal.DEFAULT_SEGMENT_BYTES, Journal.DEFAULT_MAX_MESSAGE_BYTES, 16).start();
        CountDownLatch running = new CountDownLatch(2);
        List<Thread> publishers = new ArrayList<>();
        long[] accepted = new long[2];
        for (int t = 0; t < 2; t++) {
            int queue = t;
            publishers.add(new Thread(() -> {
                running.countDown();
                try {
                    for (long s = 0; ; s++) {
                        journal.append(publish(queue, s), null);
                        accepted[queue]++;
                    }
                } catch (IllegalStateException e) {
                    assertThat(e).hasMessageContaining("journal is closed");
                }
            }));
        }
        publishers.forEach(Thread::start);
        running.await();
        journal.close();
        for (Thread p : publishers) {
            p.join();
        }
        try (Journal reopened = new Journal(dir, Journal.SyncPolicy.OS)) {
            assertThat(reopened.replay((r, location) -> { })).as("every accepted record was written")
                .isEqualTo(accepted[0] + accepted[1]);
        }
    }

    @ParameterizedTest
    @EnumSource(Journal.SyncPolicy.class)
    void anAppendToAnIdleWriterIsNeverMissed(Journal.SyncPolicy policy) throws Exception {
        // one record at a time, each after the last is durable: every append meets a writer (and with SYNC a sync
        // thread) parking or parked, and both park with no timeout, so a lost wake-up would hang here
        try (Journal journal = new Journal(dir, policy).start()) {
            for (long s = 0; s < 2000; s++) {
                CountDownLatch durable = new CountDownLatch(1);
                journal.append(publish(1, s), durable::countDown);
                assertThat(durable.await(10, TimeUnit.SECONDS)).as("record %d written", s).isTrue();
            }
        }
    }

    @Test
    void aConfirmWaitsForASyncThatCoversItsRecordWhileTheWriterWritesOn() throws Exception {
        int records = 100;
        CountDownLatch firstSyncBegun = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        AtomicLong syncing = new AtomicLong(); // the ring sequence the sync under way covers (records below it)
        AtomicLong covered = new AtomicLong(); // the same, once that sync is done
        LongConsumer beforeSync = through -> {
            syncing.set(through);
            firstSyncBegun.countDown();
            try {
                release.await(); // the first sync is held until the test lets it go
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        };
        List<Long> early = new CopyOnWriteArrayList<>();
        CountDownLatch confirmed = new CountDownLatch(records);
        try (Journal journal = new Journal(dir, Journal.SyncPolicy.SYNC, Journal.DEFAULT_SEGMENT_BYTES,
                Journal.DEFAULT_MAX_MESSAGE_BYTES, 1024, beforeSync).start()) {
            journal.counters().onSync(nanos -> covered.set(syncing.get()));
            long[] locations = new long[records];
            for (int i = 0; i < records; i++) {
                long sequence = i; // one segment from ring sequence 0: a record's sequence is its ordinal
                locations[i] = journal.append(publish(1, i), () -> {
                    if (sequence >= covered.get()) {
                        early.add(sequence);
                    }
                    confirmed.countDown();
                });
                if (i == 0 && !firstSyncBegun.await(10, TimeUnit.SECONDS)) {
                    release.countDown();
                    throw new AssertionError("no sync began");
                }
            }
            CompletableFuture<Void> flushed = journal.flush();
            try {
                await("the writer writes on while a sync is held").atMost(Duration.ofSeconds(10))
                    .until(() -> journal.isWritten(locations[records - 1]));
                assertThat(confirmed.getCount()).as("no confirm while its sync is held").isEqualTo(records);
                assertThat(flushed).as("no flush either").isNotDone();
            } finally {
                release.countDown(); // else a failure here would hang in close, which drains
            }
            assertThat(confirmed.await(10, TimeUnit.SECONDS)).as("every record confirmed").isTrue();
            flushed.get(10, TimeUnit.SECONDS);
            assertThat(early).as("records confirmed before a sync covered them").isEmpty();
            assertThat(journal.syncs()).as("the held sync covered the first record only").isGreaterThanOrEqualTo(2);
        }
    }

    @Test
    void aSegmentIsSyncedWholeBeforeWritingMovesOnEvenWhenASyncIsUnderWay() throws Exception {
        int records = 200;
        CountDownLatch firstSyncBegun = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        LongConsumer beforeSync = through -> {
            firstSyncBegun.countDown();
            try {
                release.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        };
        CountDownLatch confirmed = new CountDownLatch(records);
        // tiny segments: the records appended while the first sync is held fill several
        try (Journal journal = new Journal(dir, Journal.SyncPolicy.SYNC, 2048, Journal.DEFAULT_MAX_MESSAGE_BYTES,
                1024, beforeSync).start()) {
            long first = journal.writerSegment();
            for (int i = 0; i < records; i++) {
                journal.append(publish(1, i), confirmed::countDown);
                if (i == 0 && !firstSyncBegun.await(10, TimeUnit.SECONDS)) {
                    release.countDown();
                    throw new AssertionError("no sync began");
                }
            }
            try {
                assertThat(journal.writerSegment()).as("no roll while the old segment's sync is held")
                    .isEqualTo(first);
            } finally {
                release.countDown();
            }
            assertThat(confirmed.await(10, TimeUnit.SECONDS)).as("every record confirmed").isTrue();
            assertThat(journal.writerSegment()).isGreaterThan(first + 1);
        }
        try (Journal reopened = new Journal(dir, Journal.SyncPolicy.SYNC)) {
            long[] next = {0};
            assertThat(reopened.replay((r, location) -> assertThat(r.sequence()).isEqualTo(next[0]++)))
                .isEqualTo(records);
        }
    }
}
