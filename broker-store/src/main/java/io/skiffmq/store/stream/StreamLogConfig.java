package io.skiffmq.store.stream;

import io.skiffmq.store.Journal;
import java.util.function.LongSupplier;

/**
 * A stream log's settings, with RabbitMQ's defaults and argument names.
 *
 * <table>
 *   <caption>Settings</caption>
 *   <tr><th>setting</th><th>RabbitMQ argument</th><th>default</th></tr>
 *   <tr><td>{@link #maxSegmentBytes}</td><td>{@code x-stream-max-segment-size-bytes}</td>
 *       <td>{@value #DEFAULT_MAX_SEGMENT_BYTES} (at most {@value #MAX_SEGMENT_BYTES_LIMIT}: chunk positions are
 *       32 bits)</td></tr>
 *   <tr><td>{@link #maxSegmentChunks}</td><td>(osiris' {@code max_segment_size_chunks})</td>
 *       <td>{@value #DEFAULT_MAX_SEGMENT_CHUNKS}</td></tr>
 *   <tr><td>{@link #filterSize}</td><td>{@code x-stream-filter-size-bytes}</td>
 *       <td>{@value ChunkDescriptor#DEFAULT_BLOOM_SIZE} (16 to 255)</td></tr>
 *   <tr><td>{@link #maxLengthBytes}</td><td>{@code x-max-length-bytes}</td><td>0: no limit</td></tr>
 *   <tr><td>{@link #maxAgeMillis}</td><td>{@code x-max-age}</td><td>0: no limit</td></tr>
 *   <tr><td>{@link #syncPolicy}</td><td>(our {@code sync-policy})</td><td>{@code SYNC}</td></tr>
 *   <tr><td>{@link #epoch}</td><td>(the leader's epoch)</td><td>1</td></tr>
 * </table>
 *
 * @param clock milliseconds since the epoch: chunk timestamps and age retention (tests step it)
 * @param syncer makes chunks durable under {@link Journal.SyncPolicy#SYNC}; null for one of the log's own
 */
public record StreamLogConfig(long maxSegmentBytes, int maxSegmentChunks, int filterSize, long maxLengthBytes,
        long maxAgeMillis, Journal.SyncPolicy syncPolicy, long epoch, LongSupplier clock, StreamSyncer syncer) {
    public static final long DEFAULT_MAX_SEGMENT_BYTES = 500_000_000L;
    public static final long MAX_SEGMENT_BYTES_LIMIT = 2L << 30;
    public static final int DEFAULT_MAX_SEGMENT_CHUNKS = 256_000;

    public StreamLogConfig {
        if (maxSegmentBytes <= 0 || maxSegmentBytes > MAX_SEGMENT_BYTES_LIMIT) {
            throw new IllegalArgumentException("segment size " + maxSegmentBytes + " is not in 1.."
                + MAX_SEGMENT_BYTES_LIMIT);
        }
        if (maxSegmentChunks < 2) {
            throw new IllegalArgumentException("a segment holds at least 2 chunks, not " + maxSegmentChunks);
        }
        if (filterSize < ChunkDescriptor.MIN_BLOOM_SIZE || filterSize > ChunkDescriptor.MAX_BLOOM_SIZE) {
            throw new IllegalArgumentException("filter size " + filterSize + " is not in 16..255");
        }
        if (maxLengthBytes < 0 || maxAgeMillis < 0 || epoch < 0) {
            throw new IllegalArgumentException("negative limit or epoch");
        }
    }

    /** RabbitMQ's defaults, syncing as {@code policy} says. */
    public static StreamLogConfig defaults(Journal.SyncPolicy policy) {
        return new StreamLogConfig(DEFAULT_MAX_SEGMENT_BYTES, DEFAULT_MAX_SEGMENT_CHUNKS,
            ChunkDescriptor.DEFAULT_BLOOM_SIZE, 0, 0, policy, 1, System::currentTimeMillis, null);
    }

    public StreamLogConfig withMaxSegmentBytes(long bytes) {
        return new StreamLogConfig(bytes, maxSegmentChunks, filterSize, maxLengthBytes, maxAgeMillis, syncPolicy,
            epoch, clock, syncer);
    }

    public StreamLogConfig withMaxSegmentChunks(int chunks) {
        return new StreamLogConfig(maxSegmentBytes, chunks, filterSize, maxLengthBytes, maxAgeMillis, syncPolicy,
            epoch, clock, syncer);
    }

    public StreamLogConfig withFilterSize(int bytes) {
        return new StreamLogConfig(maxSegmentBytes, maxSegmentChunks, bytes, maxLengthBytes, maxAgeMillis,
            syncPolicy, epoch, clock, syncer);
    }

    /** Retention: {@code maxLengthBytes} of segments at most (0: none), none older than {@code maxAgeMillis}. */
    public StreamLogConfig withRetention(long maxLengthBytes, long maxAgeMillis) {
        return new StreamLogConfig(maxSegmentBytes, maxSegmentChunks, filterSize, maxLengthBytes, maxAgeMillis,
            syncPolicy, epoch, clock, syncer);
    }

    public StreamLogConfig withEpoch(long epoch) {
        return new StreamLogConfig(maxSegmentBytes, maxSegmentChunks, filterSize, maxLengthBytes, maxAgeMillis,
            syncPolicy, epoch, clock, syncer);
    }

    public StreamLogConfig withClock(LongSupplier clock) {
        return new StreamLogConfig(maxSegmentBytes, maxSegmentChunks, filterSize, maxLengthBytes, maxAgeMillis,
            syncPolicy, epoch, clock, syncer);
    }

    public StreamLogConfig withSyncer(StreamSyncer syncer) {
        return new StreamLogConfig(maxSegmentBytes, maxSegmentChunks, filterSize, maxLengthBytes, maxAgeMillis,
            syncPolicy, epoch, clock, syncer);
    }
}
