package io.skiffmq.benchmarks;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.skiffmq.store.Journal;
import io.skiffmq.store.stream.ChunkBuilder;
import io.skiffmq.store.stream.StreamLog;
import io.skiffmq.store.stream.StreamLogConfig;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;

/**
 * How long a stream log takes to open, by what it must read: a log of {@code messages} 12-byte messages, {@code
 * per-chunk} to a chunk, in RabbitMQ's 500 MB segments (or {@code segment-bytes}), opened
 *
 * <ol>
 *   <li>after a clean close: every segment sealed, two index records read per segment;</li>
 *   <li>after a crash: the newest segment unsealed, each of its chunks checked (CRC included);</li>
 *   <li>with every index file and seal gone: every chunk found again through Chronicle and checked.</li>
 * </ol>
 *
 * <pre>
 * java -cp benchmarks/target/benchmarks.jar $(cat broker-server/target/jvm.options) \
 *     io.skiffmq.benchmarks.StreamRecovery [messages] [per-chunk] [segment-bytes]
 * </pre>
 */
public final class StreamRecovery {
    private StreamRecovery() {
    }

    public static void main(String[] args) throws IOException {
        long messages = args.length > 0 ? Long.parseLong(args[0]) : 3_000_000;
        int perChunk = args.length > 1 ? Integer.parseInt(args[1]) : 1;
        long segmentBytes = args.length > 2 ? Long.parseLong(args[2]) : StreamLogConfig.DEFAULT_MAX_SEGMENT_BYTES;
        StreamLogConfig config = StreamLogConfig.defaults(Journal.SyncPolicy.OS).withMaxSegmentBytes(segmentBytes);
        Path dir = Files.createTempDirectory("skiffmq-stream-recovery");
        ByteBuf body = Unpooled.directBuffer(12).writeZero(12);
        long began = System.nanoTime();
        try (StreamLog log = StreamLog.open(dir, config)) {
            ChunkBuilder builder = log.chunkBuilder();
            for (long m = 0; m < messages; m++) {
                builder.addMessage(body, null, null, 0);
                if (builder.entries() == perChunk) {
                    builder.commit();
                }
            }
            builder.commit();
            System.out.printf("wrote %,d messages in %,d chunks, %,d segments, %,d bytes, in %,d ms%n", messages,
                (messages + perChunk - 1) / perChunk, log.segmentCount(), log.bytes(),
                (System.nanoTime() - began) / 1_000_000);
        } finally {
            body.release();
        }
        try {
            time("clean close (all sealed)", dir, config);
            // the segment being written when the broker was killed: the last one holding messages (each open
            // adds a segment holding a snapshot alone)
            List<Path> segments = segments(dir);
            Path written = segments.stream().filter(s -> size(s.resolve("index")) > 0 && chunks(s) > 1)
                .reduce((a, b) -> b).orElseThrow();
            long chunks = chunks(written);
            Files.delete(written.resolve("sealed"));
            time("after a crash (" + written.getFileName() + " unsealed: " + chunks + " chunks)", dir, config);
            for (Path segment : segments(dir)) {
                Files.deleteIfExists(segment.resolve("sealed"));
                Files.deleteIfExists(segment.resolve("index"));
            }
            time("no index, no seal (rebuilt)", dir, config);
        } finally {
            try (Stream<Path> files = Files.walk(dir)) {
                for (Path p : files.sorted(Comparator.reverseOrder()).toList()) {
                    Files.delete(p);
                }
            }
        }
    }

    private static void time(String what, Path dir, StreamLogConfig config) {
        long began = System.nanoTime();
        try (StreamLog log = StreamLog.open(dir, config)) {
            System.out.printf("open, %s: %,d ms (offsets %,d to %,d)%n", what, (System.nanoTime() - began) / 1_000_000,
                log.firstOffset(), log.nextOffset() - 1);
        }
    }

    private static long size(Path file) {
        try {
            return Files.size(file);
        } catch (IOException e) {
            return 0;
        }
    }

    /** The chunk count a segment's seal records. */
    private static long chunks(Path segment) {
        try {
            return java.nio.ByteBuffer.wrap(Files.readAllBytes(segment.resolve("sealed"))).getInt(4);
        } catch (IOException e) {
            return 0;
        }
    }

    private static List<Path> segments(Path dir) throws IOException {
        try (Stream<Path> files = Files.list(dir)) {
            return files.filter(p -> p.getFileName().toString().startsWith("segment-")).sorted().toList();
        }
    }
}
