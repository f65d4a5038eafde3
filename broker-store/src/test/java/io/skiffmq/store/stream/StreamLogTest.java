package io.skiffmq.store.stream;

import static io.skiffmq.store.stream.StreamLogs.*;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.FileRegion;
import io.skiffmq.codec.testing.LeakDetection;
import io.skiffmq.core.stream.StreamOffset;
import io.skiffmq.store.Journal;
import java.io.ByteArrayOutputStream;
import java.nio.channels.Channels;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/** The stream log: offsets, chunks as stored, readers and their offset specs, tracking, filters, retention. */
@ExtendWith({LeakDetection.class, SegmentsReleased.class})
class StreamLogTest {
    /** Small segments: Chronicle's file header takes about 66 KB, so each holds some 20 chunks of 100 messages. */
    private static final long SMALL_SEGMENT = 100_000;

    @TempDir
    Path dir;
    private final AtomicLong clock = new AtomicLong(1_700_000_000_000L);
    private StreamLogConfig config() {
        return StreamLogConfig.defaults(Journal.SyncPolicy.OS).withClock(clock::get);
    }

    @Test
    void offsetsStayDenseAcrossSegmentRollsAndEveryChunkOnDiskHasAGoodCrc() throws Exception {
        try (StreamLog log = StreamLog.open(dir, config().withMaxSegmentBytes(SMALL_SEGMENT))) {
            for (int chunk = 0; chunk < 120; chunk++) {
                long id = writeChunk(log, 100);
                assertThat(id).isEqualTo(chunk * 100L);
                if (chunk % 10 == 9) {
                    log.storeOffset("consumer", id); // tracking chunks between user chunks take no offset
                }
            }
            assertThat(log.nextOffset()).isEqualTo(12_000);
            assertThat(log.committedOffset()).isEqualTo(11_999);
            assertThat(log.committedChunkId()).isEqualTo(11_900);
            assertThat(log.segmentCount()).as("rolled at least twice").isGreaterThanOrEqualTo(3);
            try (StreamReader reader = log.reader(StreamOffset.first(), null)) {
                assertThat(denseMessages(drain(reader), 0))
                    .containsExactlyElementsOf(LongStream.range(0, 12_000).mapToObj(StreamLogs::body).toList());
            }
        }
        List<DecodedChunk> stored = onDisk(dir);
        assertThat(stored.stream().filter(c -> c.type() == 2)).as("a snapshot begins every segment")
            .hasSize(segmentDirectories(dir).size());
        assertThat(denseMessages(stored, 0)).hasSize(12_000);

        try (StreamLog reopened = StreamLog.open(dir, config().withMaxSegmentBytes(SMALL_SEGMENT))) {
            assertThat(reopened.nextOffset()).isEqualTo(12_000);
            assertThat(writeChunk(reopened, 100)).isEqualTo(12_000);
            try (StreamReader reader = reopened.reader(StreamOffset.offset(11_950), null)) {
                List<DecodedChunk> chunks = drain(reader);
                assertThat(chunks).extracting(DecodedChunk::chunkId).containsExactly(11_900L, 12_000L);
            }
        }
    }

    @Test
    @org.junit.jupiter.api.Timeout(30)
    void aSegmentSmallerThanItsFileHeaderStillTakesOneChunkEach() throws Exception {
        // x-stream-max-segment-size-bytes is the client's: one below Chronicle's header must not roll for ever
        try (StreamLog log = StreamLog.open(dir, config().withMaxSegmentBytes(1_000))) {
            for (int chunk = 0; chunk < 3; chunk++) {
                assertThat(writeChunk(log, 10)).isEqualTo(chunk * 10L);
            }
            assertThat(log.segmentCount()).as("a segment per chunk: " + segmentDirectories(dir)).isEqualTo(3);
            try (StreamReader reader = log.reader(StreamOffset.first(), null)) {
                assertThat(denseMessages(drain(reader), 0)).hasSize(30);
            }
        }
    }

    @Test
    void eachOffsetSpecStartsWhereRabbitMqWould() {
        try (StreamLog log = StreamLog.open(dir, config())) {
            long t0 = clock.get();
            writeChunk(log, 10); // 0..9 at t0
            clock.addAndGet(10);
            writeChunk(log, 10); // 10..19 at t0 + 10
            clock.addAndGet(10);
            log.storeOffset("c", 5); // a tracking chunk with id 20 at t0 + 20
            clock.addAndGet(10);
            writeChunk(log, 10); // 20..29 at t0 + 30

            assertThat(firstChunk(log, StreamOffset.first())).isEqualTo(0);
            assertThat(firstChunk(log, StreamOffset.last())).isEqualTo(20);
            assertThat(firstChunk(log, StreamOffset.offset(0))).isEqualTo(0);
            assertThat(firstChunk(log, StreamOffset.offset(15))).isEqualTo(10);
            assertThat(firstChunk(log, StreamOffset.offset(20))).isEqualTo(20);
            assertThat(firstChunk(log, StreamOffset.timestamp(t0 - 1000))).isEqualTo(0);
            assertThat(firstChunk(log, StreamOffset.timestamp(t0 + 5))).isEqualTo(10);
            assertThat(firstChunk(log, StreamOffset.timestamp(t0 + 30))).isEqualTo(20);

            // next, an offset past the end and a time after the last chunk: the next chunk written
            try (StreamReader next = log.reader(StreamOffset.next(), null);
                 StreamReader beyond = log.reader(StreamOffset.offset(1000), null);
                 StreamReader later = log.reader(StreamOffset.timestamp(t0 + 31), null)) {
                assertThat(next.next()).isNull();
                assertThat(beyond.next()).isNull();
                assertThat(later.next()).isNull();
                assertThat(next.position()).isEqualTo(30);
                clock.addAndGet(10);
                writeChunk(log, 5);
                assertThat(next.next().chunkId()).isEqualTo(30);
                assertThat(beyond.next().chunkId()).isEqualTo(30);
                assertThat(later.next().chunkId()).isEqualTo(30);
            }
        }
    }

    private static long firstChunk(StreamLog log, StreamOffset spec) {
        try (StreamReader reader = log.reader(spec, null)) {
            return reader.next().chunkId();
        }
    }

    @Test
    void lastFallsBackToNextWhenTheLogHasNoMessages() {
        try (StreamLog log = StreamLog.open(dir, config())) {
            log.storeOffset("c", 0);
            try (StreamReader reader = log.reader(StreamOffset.last(), null)) {
                assertThat(reader.next()).isNull();
                writeChunk(log, 3);
                assertThat(reader.next().chunkId()).isZero();
            }
        }
    }

    @Test
    void readersTailTheLogAndListenersHearEachCommit() {
        List<Long> heard = new CopyOnWriteArrayList<>();
        try (StreamLog log = StreamLog.open(dir, config())) {
            log.addListener(heard::add);
            try (StreamReader reader = log.reader(StreamOffset.next(), null)) {
                assertThat(reader.next()).isNull();
                writeChunk(log, 3);
                assertThat(heard).containsExactly(2L);
                StreamChunk chunk = reader.next();
                assertThat(chunk.chunkId()).isZero();
                assertThat(chunk.records()).isEqualTo(3);
                assertThat(reader.next()).isNull();
                log.storeOffset("c", 1);
                assertThat(heard).as("a tracking chunk commits no new offset").containsExactly(2L);
                assertThat(reader.next()).isNull();
            }
        }
    }

    @Test
    void underSyncChunksAreCommittedOnceTheSyncerForcedThem() {
        List<String> threads = new CopyOnWriteArrayList<>();
        StreamLogConfig synced = StreamLogConfig.defaults(Journal.SyncPolicy.SYNC).withMaxSegmentBytes(SMALL_SEGMENT);
        try (StreamSyncer syncer = new StreamSyncer("test-stream-syncer");
             StreamLog log = StreamLog.open(dir, synced.withSyncer(syncer))) {
            log.addListener(offset -> threads.add(Thread.currentThread().getName()));
            try (StreamReader reader = log.reader(StreamOffset.first(), null)) {
                for (int i = 0; i < 100; i++) {
                    writeChunk(log, 100);
                }
                assertThat(log.segmentCount()).as("rolled, forcing the segments left").isGreaterThan(2);
                await().atMost(Duration.ofSeconds(30)).until(() -> log.committedOffset() == 9_999);
                assertThat(denseMessages(drain(reader), 0)).hasSize(10_000);
            }
            assertThat(threads).isNotEmpty().allMatch("test-stream-syncer"::equals);
        }
    }

    @Test
    void deduplicationAndStoredOffsetsSurviveAReopen() {
        try (StreamLog log = StreamLog.open(dir, config().withMaxSegmentBytes(SMALL_SEGMENT))) {
            TrackedPublisher producer = log.publisher("producer-1");
            ChunkBuilder builder = log.chunkBuilder();
            ByteBuf body = bytes("hello");
            try {
                assertThat(builder.addMessage(body, null, producer, 5)).isEqualTo(ChunkBuilder.ADDED);
                assertThat(builder.addMessage(body, null, producer, 3)).isEqualTo(ChunkBuilder.DUPLICATE);
                assertThat(builder.addMessage(body, null, producer, 6)).isEqualTo(ChunkBuilder.ADDED);
                assertThat(producer.sequence()).as("known once written").isZero();
                builder.commit();
                assertThat(producer.sequence()).isEqualTo(6);
            } finally {
                body.release();
            }
            log.storeOffset("consumer-1", 42);
            log.storeOffset("consumer-2", 7);
            log.storeOffset("consumer-1", 40); // backwards is allowed
            for (int i = 0; i < 60; i++) {
                writeChunk(log, 100); // rolls: the newest segment starts with a snapshot of all this
            }
            assertThat(log.segmentCount()).isGreaterThan(1);
        }
        try (StreamLog log = StreamLog.open(dir, config().withMaxSegmentBytes(SMALL_SEGMENT))) {
            assertThat(log.storedOffset("consumer-1")).isEqualTo(40);
            assertThat(log.storedOffset("consumer-2")).isEqualTo(7);
            assertThat(log.storedOffset("nobody")).isEqualTo(StreamLog.NO_OFFSET);
            assertThat(log.publisherSequence("producer-1")).isEqualTo(6);
            assertThat(log.publisherSequence("unknown")).isZero();
            TrackedPublisher producer = log.publisher("producer-1");
            ByteBuf body = bytes("again");
            try {
                assertThat(log.chunkBuilder().addMessage(body, null, producer, 6)).isEqualTo(ChunkBuilder.DUPLICATE);
                assertThat(log.chunkBuilder().addMessage(body, null, producer, 7)).isEqualTo(ChunkBuilder.ADDED);
                log.chunkBuilder().commit();
            } finally {
                body.release();
            }
            log.storeOffset("consumer-2", 8);
        }
        try (StreamLog log = StreamLog.open(dir, config().withMaxSegmentBytes(SMALL_SEGMENT))) {
            assertThat(log.publisherSequence("producer-1")).as("from a user chunk's trailer").isEqualTo(7);
            assertThat(log.storedOffset("consumer-2")).as("from a delta").isEqualTo(8);
            assertThat(log.storedOffset("consumer-1")).as("from the snapshot").isEqualTo(40);
        }
    }

    @Test
    void aFilteringReaderSkipsTheChunksItsBloomFilterRulesOut() throws Exception {
        try (StreamLog log = StreamLog.open(dir, config())) {
            writeFiltered(log, "apple", "apple");       // chunk 0
            writeFiltered(log, "banana", "banana");     // chunk 2
            writeFiltered(log, null, null);             // chunk 4: no filter value, no Bloom filter
            writeFiltered(log, "apple", null);          // chunk 6: both
            assertThat(chunkIds(log, null)).containsExactly(0L, 2L, 4L, 6L);
            assertThat(chunkIds(log, StreamFilter.of(List.of("apple"), false))).containsExactly(0L, 6L);
            assertThat(chunkIds(log, StreamFilter.of(List.of("banana"), false))).containsExactly(2L);
            assertThat(chunkIds(log, StreamFilter.of(List.of("apple"), true))).containsExactly(0L, 4L, 6L);
            assertThat(chunkIds(log, StreamFilter.of(List.of("banana", "apple"), false))).containsExactly(0L, 2L, 6L);
            assertThat(chunkIds(log, StreamFilter.of(List.of("cherry"), false))).isEmpty();
            assertThat(chunkIds(log, StreamFilter.of(List.of("cherry"), true))).containsExactly(4L, 6L);
        }
        List<DecodedChunk> user = onDisk(dir).stream().filter(c -> c.type() == 0).toList();
        assertThat(user).extracting(DecodedChunk::bloomSize).containsExactly(16, 16, 0, 16);
        assertThat(user.get(0).bloom()[0] & 0x80).as("bit 0: no unfiltered message").isZero();
        assertThat(user.get(3).bloom()[0] & 0x80).as("bit 0: unfiltered messages too").isNotZero();
    }

    private void writeFiltered(StreamLog log, String first, String second) {
        ChunkBuilder builder = log.chunkBuilder();
        for (String value : new String[] {first, second}) {
            ByteBuf body = bytes("body");
            ByteBuf filter = value == null ? null : bytes(value);
            try {
                builder.addMessage(body, filter, null, 0);
            } finally {
                body.release();
                if (filter != null) {
                    filter.release();
                }
            }
        }
        builder.commit();
        log.storeOffset("between", 0); // a tracking chunk after each, which no reader returns
    }

    private static List<Long> chunkIds(StreamLog log, StreamFilter filter) {
        try (StreamReader reader = log.reader(StreamOffset.first(), filter)) {
            return drain(reader).stream().map(DecodedChunk::chunkId).toList();
        }
    }

    @Test
    void retentionBySizeDeletesOldSegmentsAndMovesTheFirstOffset() {
        StreamLogConfig retained = config().withMaxSegmentBytes(SMALL_SEGMENT).withRetention(3 * SMALL_SEGMENT, 0);
        try (StreamLog log = StreamLog.open(dir, retained)) {
            StreamReader early = log.reader(StreamOffset.first(), null);
            for (int i = 0; i < 200; i++) {
                writeChunk(log, 100);
            }
            assertThat(log.segmentCount()).isBetween(2, 4);
            assertThat(log.bytes()).isLessThanOrEqualTo(4 * SMALL_SEGMENT);
            long first = log.firstOffset();
            assertThat(first).isPositive();
            assertThat(firstChunk(log, StreamOffset.first())).isEqualTo(first);
            assertThat(firstChunk(log, StreamOffset.offset(0))).as("below the first offset: the first chunk")
                .isEqualTo(first);
            // a reader in a deleted segment reads it to its end, then goes on from the oldest segment left
            List<DecodedChunk> read = drain(early);
            early.close();
            assertThat(read.get(0).chunkId()).isZero();
            assertThat(read.get(read.size() - 1).chunkId()).isEqualTo(19_900);
        }
        try (StreamLog log = StreamLog.open(dir, retained)) {
            assertThat(log.firstOffset()).isPositive();
            assertThat(log.nextOffset()).isEqualTo(20_000);
        }
    }

    @Test
    void retentionByAgeKeepsAtLeastTheNewestSegment() {
        StreamLogConfig aged = config().withMaxSegmentBytes(SMALL_SEGMENT).withRetention(0, 60_000);
        try (StreamLog log = StreamLog.open(dir, aged)) {
            for (int i = 0; i < 60; i++) {
                writeChunk(log, 100);
            }
            int segments = log.segmentCount();
            assertThat(segments).isGreaterThan(2);
            assertThat(log.applyRetention()).as("nothing is old yet").isZero();
            clock.addAndGet(60_001);
            assertThat(log.applyRetention()).isEqualTo(segments - 1);
            assertThat(log.segmentCount()).isOne();
            assertThat(log.firstOffset()).isPositive();
            assertThat(firstChunk(log, StreamOffset.first())).isEqualTo(log.firstOffset());
        }
    }

    @Test
    void chunksGoOutAsStoredBytesBuffersOrFileRegions() throws Exception {
        try (StreamLog log = StreamLog.open(dir, config())) {
            writeChunk(log, 20);
            try (StreamReader reader = log.reader(StreamOffset.first(), null)) {
                StreamChunk chunk = reader.next();
                ByteBuf copied = Unpooled.buffer();
                ByteBuf header = chunk.retainedHeader();
                ByteBuf data = chunk.retainedData();
                ByteBuf stored = chunk.retainedChunk();
                FileRegion region = chunk.retainedDataRegion();
                try {
                    chunk.writeHeaderAndData(copied);
                    ByteBuf delivered = Unpooled.wrappedBuffer(header.retain(), data.retain());
                    assertThat(ByteBufUtil.getBytes(delivered)).isEqualTo(ByteBufUtil.getBytes(copied));
                    delivered.release();
                    ByteArrayOutputStream sent = new ByteArrayOutputStream();
                    region.transferTo(Channels.newChannel(sent), 0);
                    assertThat(sent.toByteArray()).isEqualTo(ByteBufUtil.getBytes(data));
                    DecodedChunk decoded = DecodedChunk.stored(ByteBufUtil.getBytes(stored));
                    assertThat(decoded.texts()).containsExactlyElementsOf(
                        LongStream.range(0, 20).mapToObj(StreamLogs::body).toList());
                    assertThat(decoded.epoch()).isEqualTo(1);
                    assertThat(decoded.timestamp()).isEqualTo(clock.get());
                } finally {
                    copied.release();
                    header.release();
                    data.release();
                    stored.release();
                    region.release();
                }
            }
        }
    }

    @Test
    void aMappedBufferOutlivesItsReaderAndTheLog() {
        ByteBuf kept;
        int segmentsBefore = Segment.OPEN.get();
        try (StreamLog log = StreamLog.open(dir, config())) {
            writeChunk(log, 5);
            try (StreamReader reader = log.reader(StreamOffset.first(), null)) {
                kept = reader.next().retainedData();
            }
        }
        assertThat(Segment.OPEN.get()).as("the buffer holds its segment").isEqualTo(segmentsBefore + 1);
        assertThat(DecodedChunk.delivered(header(kept)).texts()).hasSize(5);
        kept.release();
    }

    /** Wraps data alone in a header a test decoder accepts: only the data length and CRC matter to it. */
    private static byte[] header(ByteBuf data) {
        java.util.zip.CRC32 crc = new java.util.zip.CRC32();
        byte[] bytes = ByteBufUtil.getBytes(data);
        crc.update(bytes);
        ByteBuf out = Unpooled.buffer().writeByte(0x50).writeByte(0).writeShort(5).writeInt(5).writeLong(0)
            .writeLong(0).writeLong(0).writeInt((int) crc.getValue()).writeInt(bytes.length).writeInt(0).writeInt(0)
            .writeBytes(bytes);
        try {
            return ByteBufUtil.getBytes(out);
        } finally {
            out.release();
        }
    }

    @Test
    void aReplicaAppendsTheLeadersChunksByteForByte() throws Exception {
        Path leaderDir = dir.resolve("leader");
        Path replicaDir = dir.resolve("replica");
        try (StreamLog leader = StreamLog.open(leaderDir, config())) {
            writeChunk(leader, 10);
            leader.storeOffset("c", 3);
            TrackedPublisher p = leader.publisher("p");
            ByteBuf body = bytes("x");
            try {
                leader.chunkBuilder().addMessage(body, null, p, 9);
                leader.chunkBuilder().commit();
            } finally {
                body.release();
            }
        }
        List<byte[]> leaderChunks = storedChunks(leaderDir);
        try (StreamLog replica = StreamLog.open(replicaDir, config())) {
            for (byte[] chunk : leaderChunks) {
                ByteBuf buf = Unpooled.wrappedBuffer(chunk);
                replica.appendChunk(buf);
            }
            assertThat(replica.nextOffset()).isEqualTo(11);
            assertThat(replica.storedOffset("c")).isEqualTo(3);
            assertThat(replica.publisherSequence("p")).isEqualTo(9);

            byte[] again = leaderChunks.get(1);
            assertThatThrownBy(() -> replica.appendChunk(Unpooled.wrappedBuffer(again)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("next offset is 11");
            byte[] corrupt = leaderChunks.get(leaderChunks.size() - 1).clone();
            java.nio.ByteBuffer.wrap(corrupt).putLong(24, 11);
            corrupt[50] ^= 1; // a data byte (no Bloom filter: the data starts at 48)
            assertThatThrownBy(() -> replica.appendChunk(Unpooled.wrappedBuffer(corrupt)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("CRC");
            assertThatThrownBy(() -> replica.appendChunk(Unpooled.wrappedBuffer(new byte[47])))
                .isInstanceOf(IllegalArgumentException.class);
            assertThat(replica.nextOffset()).isEqualTo(11);
        }
        List<byte[]> replicaChunks = storedChunks(replicaDir);
        // the replica's own first snapshot, then the leader's chunks exactly
        assertThat(replicaChunks.subList(1, replicaChunks.size())).containsExactlyElementsOf(leaderChunks);
    }

    private static List<byte[]> storedChunks(Path directory) throws Exception {
        List<byte[]> chunks = new java.util.ArrayList<>();
        for (Path segment : segmentDirectories(directory)) {
            try (var queue = net.openhft.chronicle.queue.impl.single.SingleChronicleQueueBuilder.binary(segment).build();
                 var tailer = queue.createTailer()) {
                while (true) {
                    try (var document = tailer.readingDocument()) {
                        if (!document.isPresent()) {
                            break;
                        }
                        chunks.add(document.wire().bytes().toByteArray());
                    }
                }
            }
        }
        return chunks;
    }

    @Test
    void aChunkIsFullAt65535EntriesAndTheNextOneTakesTheRest() {
        try (StreamLog log = StreamLog.open(dir, config())) {
            ChunkBuilder builder = log.chunkBuilder();
            ByteBuf body = bytes("x");
            try {
                for (int i = 0; i < 65_535; i++) {
                    assertThat(builder.addMessage(body, null, null, 0)).isEqualTo(ChunkBuilder.ADDED);
                }
                assertThat(builder.addMessage(body, null, null, 0)).isEqualTo(ChunkBuilder.FULL);
                assertThat(builder.commit()).isZero();
                assertThat(builder.addMessage(body, null, null, 0)).isEqualTo(ChunkBuilder.ADDED);
                assertThat(builder.commit()).isEqualTo(65_535);
            } finally {
                body.release();
            }
            try (StreamReader reader = log.reader(StreamOffset.first(), null)) {
                assertThat(drain(reader)).extracting(DecodedChunk::entries).containsExactly(65_535, 1);
            }
        }
    }

    @Test
    void subEntryBatchesAreKeptOpaqueAndCountTheirRecords() throws Exception {
        byte[] compressed = {1, 2, 3, 4, 5, 6, 7};
        ByteBuf batch = Unpooled.buffer().writeByte(0x80 | 2 << 4).writeShort(50).writeInt(600)
            .writeInt(compressed.length).writeBytes(compressed);
        try (StreamLog log = StreamLog.open(dir, config())) {
            ChunkBuilder builder = log.chunkBuilder();
            assertThat(builder.addEntry(batch)).isEqualTo(ChunkBuilder.ADDED);
            ByteBuf simple = Unpooled.buffer().writeInt(3).writeBytes("abc".getBytes());
            assertThat(builder.addEntry(simple)).isEqualTo(ChunkBuilder.ADDED);
            ByteBuf cut = Unpooled.buffer().writeInt(30).writeBytes("abc".getBytes());
            assertThatThrownBy(() -> builder.addEntry(cut)).isInstanceOf(IllegalArgumentException.class);
            simple.release();
            cut.release();
            assertThat(builder.commit()).isZero();
            assertThat(log.nextOffset()).isEqualTo(51);
        } finally {
            batch.release();
        }
        DecodedChunk chunk = onDisk(dir).stream().filter(c -> c.type() == 0).findFirst().orElseThrow();
        assertThat(chunk.records()).isEqualTo(51);
        assertThat(chunk.bodies().get(0)).isEqualTo(compressed);
    }

    @Test
    void chunksOfAnySizeUpToTheLargestFollowEachOtherAndReadBack() throws Exception {
        // a chunk over Chronicle's block left the next write failing, and the stream with it (4 MiB blocks)
        int[] sizes = {4 << 20, 4 << 20, 30 << 20, 12};
        try (StreamLog log = StreamLog.open(dir, config())) {
            for (int i = 0; i < sizes.length; i++) {
                ChunkBuilder builder = log.chunkBuilder();
                ByteBuf body = Unpooled.buffer(sizes[i]);
                body.writeZero(sizes[i]).setByte(sizes[i] - 1, i);
                try {
                    assertThat(builder.addMessage(body, null, null, 0)).isEqualTo(ChunkBuilder.ADDED);
                } finally {
                    body.release();
                }
                assertThat(builder.commit()).isEqualTo(i);
            }
        }
        try (StreamLog reopened = StreamLog.open(dir, config());
                StreamReader reader = reopened.reader(StreamOffset.first(), null)) {
            List<DecodedChunk> chunks = drain(reader);
            assertThat(chunks).hasSize(sizes.length);
            for (int i = 0; i < sizes.length; i++) {
                byte[] body = chunks.get(i).bodies().get(0);
                assertThat(body).hasSize(sizes[i]);
                assertThat(body[sizes[i] - 1]).isEqualTo((byte) i);
            }
        }
    }
}
