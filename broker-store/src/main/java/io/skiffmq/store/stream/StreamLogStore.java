package io.skiffmq.store.stream;

import io.netty.buffer.ByteBuf;
import io.skiffmq.core.stream.StreamCursor;
import io.skiffmq.core.stream.StreamFilterSpec;
import io.skiffmq.core.stream.StreamOffset;
import io.skiffmq.core.stream.StreamStore;
import java.nio.file.Path;
import java.util.function.LongConsumer;

/**
 * A stream queue's {@link StreamStore} on a {@link StreamLog}: the core's view of the log (messages in, messages
 * out by offset). The stream protocol reads and writes the log itself ({@link #log()}): whole chunks without a
 * copy, entries as its publish carries them, named producers and stored offsets, on the stream queue's thread for
 * writes.
 *
 * <p>Threads: as {@link StreamStore} says; {@link #log()}'s writes on the stream queue's thread.
 */
public final class StreamLogStore implements StreamStore {
    private final StreamLog log;
    private final ChunkBuilder builder;

    private StreamLogStore(StreamLog log) {
        this.log = log;
        this.builder = log.chunkBuilder();
    }

    /**
     * Opens (creating if need be) the log in {@code directory}, recovering what it holds.
     *
     * @throws java.io.UncheckedIOException when it cannot be made or read
     */
    public static StreamLogStore open(Path directory, StreamLogConfig config) {
        return new StreamLogStore(StreamLog.open(directory, config));
    }

    /** The log: for the stream protocol. */
    public StreamLog log() {
        return log;
    }

    @Override
    public long add(ByteBuf message, ByteBuf filterValue) {
        long offset = log.nextOffset() + builder.records();
        return builder.addMessage(message, filterValue, null, 0) == ChunkBuilder.ADDED ? offset : -1;
    }

    @Override
    public void retention(long maxLengthBytes, long maxAgeMillis, long maxSegmentBytes) {
        // 0: the log's default; RabbitMQ takes segments up to 3,000,000,000 bytes, ours are at most 2 GiB
        log.retention(maxLengthBytes, maxAgeMillis, maxSegmentBytes <= 0 ? StreamLogConfig.DEFAULT_MAX_SEGMENT_BYTES
            : Math.min(maxSegmentBytes, StreamLogConfig.MAX_SEGMENT_BYTES_LIMIT));
    }

    @Override
    public long commit() {
        return builder.commit();
    }

    @Override
    public long firstOffset() {
        return log.firstOffset();
    }

    @Override
    public long committedOffset() {
        return log.committedOffset();
    }

    @Override
    public int segmentCount() {
        return log.segmentCount();
    }

    @Override
    public long bytes() {
        return log.bytes();
    }

    @Override
    public int applyRetention() {
        return log.applyRetention();
    }

    @Override
    public void addCommitListener(LongConsumer committed) {
        log.addListener(committed::accept);
    }

    @Override
    public StreamCursor cursor(StreamOffset from, StreamFilterSpec filter) {
        StreamFilter chunks = filter == null ? null : StreamFilter.of(filter.values(), filter.matchUnfiltered());
        return new Cursor(log.reader(from, chunks));
    }

    @Override
    public void close() {
        log.close();
    }

    @Override
    public void delete() {
        log.close();
        LogRecovery.delete(log.directory());
    }

    /** A {@link StreamReader} as the core reads it: each chunk's data, retained over the mapped file. */
    private static final class Cursor implements StreamCursor {
        private final StreamReader reader;
        private long chunkId = -1;

        Cursor(StreamReader reader) {
            this.reader = reader;
        }

        @Override
        public ByteBuf next() {
            StreamChunk chunk = reader.next();
            if (chunk == null) {
                return null;
            }
            chunkId = chunk.chunkId();
            return chunk.retainedData();
        }

        @Override
        public long chunkId() {
            return chunkId;
        }

        @Override
        public long position() {
            return reader.position();
        }

        @Override
        public void close() {
            reader.close();
        }
    }
}
