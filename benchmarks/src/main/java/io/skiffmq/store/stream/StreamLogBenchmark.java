package io.skiffmq.store.stream;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.skiffmq.benchmarks.AbstractMicrobenchmark;
import io.skiffmq.core.stream.StreamOffset;
import io.skiffmq.store.Journal;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.stream.Stream;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.TearDown;

/**
 * The stream log alone, one operation per chunk of {@code batch} messages of {@code size} bytes (stream-perf-test's
 * default run: 12 B, batches of 100): messages/s = batch × 10^9 / (ns/op).
 *
 * <ul>
 *   <li>{@code append}: build and commit a chunk (copy, CRC-32, Chronicle excerpt, index record), under {@code OS}
 *       (committed on return; {@code SYNC} moves the fsync to the syncer thread, off this path);</li>
 *   <li>{@code readCopy}: a reader's next chunk copied, header and data, into a frame buffer, as a consumer gets
 *       it;</li>
 *   <li>{@code readSlices}: the same as retained buffers over the mapped file, released at once (the zero-copy
 *       path; the socket write is not measured).</li>
 * </ul>
 *
 * <pre>
 * java -jar benchmarks/target/benchmarks.jar StreamLogBenchmark -prof gc
 * </pre>
 */
public class StreamLogBenchmark extends AbstractMicrobenchmark {
    /** Chunks written before the read benchmarks start; readers go round them again and again. */
    private static final int PREFILLED = 20_000;

    @Param({"100"})
    int batch;

    @Param({"12"})
    int size;

    private Path directory;
    private StreamLog log;
    private ByteBuf body;
    private StreamReader reader;
    private ByteBuf frame;

    @Setup(Level.Trial)
    public void open() throws IOException {
        directory = Files.createTempDirectory("skiffmq-stream-bench");
        // keep the disk bounded while append runs for seconds: 1 GB, in segments of RabbitMQ's default size
        log = StreamLog.open(directory, StreamLogConfig.defaults(Journal.SyncPolicy.OS).withRetention(1L << 30, 0));
        body = Unpooled.directBuffer(size).writeZero(size);
        for (int i = 0; i < PREFILLED; i++) {
            append();
        }
        reader = log.reader(StreamOffset.first(), null);
        frame = PooledByteBufAllocator.DEFAULT.directBuffer(64 * 1024);
    }

    @TearDown(Level.Trial)
    public void close() throws IOException {
        reader.close();
        log.close();
        body.release();
        frame.release();
        try (Stream<Path> files = Files.walk(directory)) {
            for (Path p : files.sorted(Comparator.reverseOrder()).toList()) {
                Files.delete(p);
            }
        }
    }

    @Benchmark
    public long append() {
        ChunkBuilder builder = log.chunkBuilder();
        for (int i = 0; i < batch; i++) {
            builder.addMessage(body, null, null, 0);
        }
        return builder.commit();
    }

    private StreamChunk nextChunk() {
        StreamChunk chunk = reader.next();
        if (chunk == null) {
            reader.close();
            reader = log.reader(StreamOffset.first(), null);
            chunk = reader.next();
        }
        return chunk;
    }

    @Benchmark
    public int readCopy() {
        StreamChunk chunk = nextChunk();
        frame.clear();
        chunk.writeHeaderAndData(frame);
        return frame.readableBytes();
    }

    @Benchmark
    public long readSlices() {
        StreamChunk chunk = nextChunk();
        ByteBuf header = chunk.retainedHeader();
        ByteBuf data = chunk.retainedData();
        long length = header.readableBytes() + data.readableBytes();
        header.release();
        data.release();
        return length;
    }
}
