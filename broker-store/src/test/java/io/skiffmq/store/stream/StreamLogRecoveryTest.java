package io.skiffmq.store.stream;

import static io.skiffmq.store.stream.StreamLogs.*;
import static org.assertj.core.api.Assertions.assertThat;

import io.skiffmq.codec.testing.LeakDetection;
import io.skiffmq.core.stream.StreamOffset;
import io.skiffmq.store.Journal;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Random;
import java.util.stream.LongStream;
import java.util.stream.Stream;
import net.openhft.chronicle.queue.ExcerptTailer;
import net.openhft.chronicle.queue.impl.single.SingleChronicleQueue;
import net.openhft.chronicle.queue.impl.single.SingleChronicleQueueBuilder;
import net.openhft.chronicle.wire.DocumentContext;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Opening a stream log whose files a crash (or worse) left damaged: the damage is found by length and CRC, the log
 * is cut after its last whole chunk, and writing goes on from there with dense offsets.
 */
@ExtendWith({LeakDetection.class, SegmentsReleased.class})
class StreamLogRecoveryTest {
    private static final int CHUNKS = 30;
    private static final int PER_CHUNK = 10;

    @TempDir
    Path dir;
    private static StreamLogConfig config() {
        return StreamLogConfig.defaults(Journal.SyncPolicy.OS).withMaxSegmentBytes(70_000);
    }

    /** What is done to the newest segment's files after the broker stopped without closing the log. */
    enum Damage {
        /** A flipped bit in the last chunk's data (power loss under {@code os}, a bad disk). */
        LAST_CHUNK_CRC(true),
        /**
         * Kill -9 in the middle of a write: the last excerpt's Chronicle header still says "being written", and
         * its index record was never written.
         */
        LAST_CHUNK_TORN(true),
        /** The file ends in the middle of the last chunk. */
        FILE_CUT_SHORT(true),
        /** The chunk index is garbage: it is rebuilt from the log. */
        INDEX_GARBAGE(false),
        /** The chunk index is gone: it is rebuilt from the log. */
        INDEX_MISSING(false),
        /** The last chunk's index record was never written: the chunk is found past the index. */
        INDEX_BEHIND(false),
        /** The seal is garbage: the segment is checked as if it had none. */
        SEAL_GARBAGE(false),
        /** The whole Chronicle file is zeros: the segment holds nothing any more. */
        FILE_ZEROED(false),
        /** The Chronicle file cannot be opened at all: the segment is set aside, not deleted. */
        FILE_UNREADABLE(false);

        final boolean losesLastChunk;

        Damage(boolean losesLastChunk) {
            this.losesLastChunk = losesLastChunk;
        }
    }

    @ParameterizedTest
    @EnumSource(Damage.class)
    void theLogIsCutAfterItsLastWholeChunkAndWritingGoesOn(Damage damage) throws Exception {
        try (StreamLog log = StreamLog.open(dir, config())) {
            for (int i = 0; i < CHUNKS; i++) {
                writeChunk(log, PER_CHUNK);
            }
            assertThat(log.segmentCount()).isGreaterThan(1);
        }
        List<Path> segments = segmentDirectories(dir);
        Path newest = segments.get(segments.size() - 1);
        long newestFirst = firstChunkId(newest);
        if (damage != Damage.SEAL_GARBAGE) {
            Files.delete(newest.resolve(SegmentIndex.SEAL_FILE)); // as after a kill -9: never closed
        }
        damage(newest, damage);

        long expectedNext = switch (damage) {
            case FILE_ZEROED, FILE_UNREADABLE -> newestFirst;
            default -> damage.losesLastChunk ? (CHUNKS - 1) * PER_CHUNK : CHUNKS * PER_CHUNK;
        };
        try (StreamLog log = StreamLog.open(dir, config())) {
            assertThat(log.nextOffset()).isEqualTo(expectedNext);
            assertThat(writeChunk(log, PER_CHUNK)).isEqualTo(expectedNext);
            try (StreamReader reader = log.reader(StreamOffset.first(), null)) {
                List<String> messages = denseMessages(drain(reader), 0);
                List<String> expected = LongStream.range(0, expectedNext + PER_CHUNK).mapToObj(StreamLogs::body)
                    .toList();
                assertThat(messages).containsExactlyElementsOf(expected);
            }
        }
        // and once more: the cut is remembered (sealed), nothing is found again or lost
        try (StreamLog log = StreamLog.open(dir, config())) {
            assertThat(log.nextOffset()).isEqualTo(expectedNext + PER_CHUNK);
        }
        assertThat(dir.resolve("damaged-" + newest.getFileName())).as("set aside for an operator")
            .matches(p -> Files.isDirectory(p) == (damage == Damage.FILE_UNREADABLE));
    }

    private static long firstChunkId(Path segment) throws IOException {
        try (SingleChronicleQueue queue = SingleChronicleQueueBuilder.binary(segment).build();
             ExcerptTailer tailer = queue.createTailer();
             DocumentContext document = tailer.readingDocument()) {
            return DecodedChunk.stored(document.wire().bytes().toByteArray()).chunkId();
        }
    }

    /** Where the segment's last excerpt is: {@code {position, length}} in its Chronicle file. */
    private static long[] lastExcerpt(Path segment) {
        long[] last = null;
        try (SingleChronicleQueue queue = SingleChronicleQueueBuilder.binary(segment).build();
             ExcerptTailer tailer = queue.createTailer()) {
            while (true) {
                try (DocumentContext document = tailer.readingDocument()) {
                    if (!document.isPresent()) {
                        return last;
                    }
                    last = new long[] {document.wire().bytes().readPosition(), document.wire().bytes().readRemaining()};
                }
            }
        }
    }

    private static Path chronicleFile(Path segment) throws IOException {
        try (Stream<Path> files = Files.list(segment)) {
            return files.filter(p -> p.toString().endsWith(".cq4")).findFirst().orElseThrow();
        }
    }

    private static void dropLastIndexRecord(Path segment) throws IOException {
        try (SegmentIndex records = SegmentIndex.open(segment, 1)) {
            records.recovered(records.validPrefix() - 1);
        }
    }

    private static void damage(Path segment, Damage damage) throws IOException {
        long[] last = lastExcerpt(segment);
        Path file = chronicleFile(segment);
        Path index = segment.resolve(SegmentIndex.FILE);
        switch (damage) {
            case LAST_CHUNK_CRC -> {
                try (RandomAccessFile raf = new RandomAccessFile(file.toFile(), "rw")) {
                    long at = last[0] + last[1] - 3; // a data byte: the chunk has no trailer
                    raf.seek(at);
                    int b = raf.read();
                    raf.seek(at);
                    raf.write(b ^ 0x10);
                }
            }
            case LAST_CHUNK_TORN -> {
                try (RandomAccessFile raf = new RandomAccessFile(file.toFile(), "rw")) {
                    // Chronicle's excerpt header, little-endian, before the excerpt: its top bit says "not complete"
                    byte[] header = new byte[4];
                    raf.seek(last[0] - 4);
                    raf.readFully(header);
                    ByteBuffer h = ByteBuffer.wrap(header).order(ByteOrder.LITTLE_ENDIAN);
                    h.putInt(0, h.getInt(0) | 0x8000_0000);
                    raf.seek(last[0] - 4);
                    raf.write(header);
                }
                dropLastIndexRecord(segment);
            }
            case FILE_CUT_SHORT -> {
                try (RandomAccessFile raf = new RandomAccessFile(file.toFile(), "rw")) {
                    raf.setLength(last[0] + last[1] / 2);
                }
            }
            case INDEX_GARBAGE -> {
                byte[] garbage = new byte[(int) Files.size(index)];
                new Random(42).nextBytes(garbage);
                Files.write(index, garbage);
            }
            case INDEX_MISSING -> Files.delete(index);
            case INDEX_BEHIND -> dropLastIndexRecord(segment);
            case SEAL_GARBAGE -> Files.write(segment.resolve(SegmentIndex.SEAL_FILE), new byte[] {1, 2, 3});
            case FILE_ZEROED -> {
                try (RandomAccessFile raf = new RandomAccessFile(file.toFile(), "rw")) {
                    byte[] zeros = new byte[1 << 16];
                    for (long at = 0; at < raf.length(); at += zeros.length) {
                        raf.seek(at);
                        raf.write(zeros, 0, (int) Math.min(zeros.length, raf.length() - at));
                    }
                }
            }
            case FILE_UNREADABLE -> {
                Files.delete(file);
                Files.createDirectory(file);
            }
            default -> throw new IllegalArgumentException(damage.name());
        }
    }
}
