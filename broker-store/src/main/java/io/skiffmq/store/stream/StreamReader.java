package io.skiffmq.store.stream;

import static io.skiffmq.store.stream.ChunkDescriptor.*;

import io.skiffmq.core.stream.StreamOffset;

/**
 * Reads a stream's user chunks in order from a {@link StreamOffset}, skipping tracking chunks and the chunks a
 * {@link StreamFilter} rules out, up to the last committed chunk. It tails the log: {@link #next} returns null when
 * nothing more is committed yet, and a {@link StreamLog.CommitListener} says when to try again (a poll is cheap: a
 * volatile read and a comparison). A reader goes on through segments that retention deletes under it, to their
 * end, and then to the oldest segment left.
 *
 * <p>Threads: one at a time (a consumer's event loop); not thread-safe. Close it to let go of its segment.
 */
public final class StreamReader implements AutoCloseable {
    private final StreamLog log;
    private final StreamFilter filter;
    private final StreamChunk chunk = new StreamChunk();
    /** Retained while the reader is in it; null once closed. */
    private Segment segment;
    /** The next chunk to look at, in {@link #segment}. */
    private int ordinal;

    StreamReader(StreamLog log, StreamOffset spec, StreamFilter filter) {
        this.log = log;
        this.filter = filter;
        while (segment == null) {
            Segment[] all = log.segments();
            if (all.length == 0) {
                throw new IllegalStateException("stream log " + log.directory() + " is closed");
            }
            // hold them all while reading their indexes: retention may be releasing the oldest
            int held = 0;
            while (held < all.length && all[held].tryRetain()) {
                held++;
            }
            try {
                if (held == all.length) {
                    long start = start(all, log.committedLocation(), spec);
                    segment = all[(int) (start >>> 32)];
                    segment.retain();
                    ordinal = (int) start;
                } // else one was deleted meanwhile: look again
            } finally {
                for (int i = 0; i < held; i++) {
                    all[i].release();
                }
            }
        }
    }

    /**
     * Where a reader from {@code spec} starts.
     *
     * @return the index of the segment in {@code all} in the high 32 bits, the ordinal of the chunk in the low
     */
    private static long start(Segment[] all, long committed, StreamOffset spec) {
        int last = all.length - 1;
        while (last > 0 && all[last].number > committed >>> 32) {
            last--;
        }
        int lastOrdinal = committed < 0 ? -1 : all[last].number == committed >>> 32 ? (int) committed : -1;
        long next = (long) last << 32 | (lastOrdinal + 1);
        switch (spec.kind()) {
            case FIRST:
                return 0;
            case NEXT:
                return next;
            case LAST:
                for (int s = last; s >= 0; s--) {
                    SegmentIndex index = all[s].index;
                    for (int i = s == last ? lastOrdinal : index.count() - 1; i >= 0; i--) {
                        if (index.type(i) == TYPE_USER) {
                            return (long) s << 32 | i;
                        }
                    }
                }
                return next;
            case OFFSET:
                for (int s = last; s >= 0; s--) {
                    SegmentIndex index = all[s].index;
                    int count = s == last ? lastOrdinal + 1 : index.count();
                    if (count > 0 && index.chunkId(0) <= spec.value()) {
                        int i = Math.min(index.floor(spec.value()), count - 1);
                        if (spec.value() >= index.nextOffset(i)) {
                            i++; // past its end: the log's end, or a gap a damaged segment left
                        }
                        return (long) s << 32 | i;
                    }
                }
                return 0; // below the first offset: from the first chunk
            case TIMESTAMP:
                for (int s = 0; s <= last; s++) {
                    SegmentIndex index = all[s].index;
                    int count = s == last ? lastOrdinal + 1 : index.count();
                    if (count > 0 && index.timestamp(count - 1) >= spec.value()) {
                        return (long) s << 32 | index.ceilingTimestamp(spec.value(), count);
                    }
                }
                return next;
            default:
                throw new IllegalArgumentException(spec.toString());
        }
    }

    /**
     * The next committed user chunk that passes the filter, or null when there is none yet. The chunk is a view
     * that this reader reuses: read it, or take retained buffers from it, before calling again.
     *
     * @throws IllegalStateException when the reader is closed
     * @throws java.io.UncheckedIOException when the segment's file cannot be mapped
     */
    public StreamChunk next() {
        if (segment == null) {
            throw new IllegalStateException("reader closed");
        }
        while (true) {
            long committed = log.committedLocation();
            SegmentIndex index = segment.index;
            if (ordinal < index.count()) {
                if (StreamLog.location(segment.number, ordinal) > committed) {
                    return null;
                }
                int i = ordinal++;
                if (index.type(i) == TYPE_USER && (filter == null || passes(index, i))) {
                    chunk.wrap(segment, i);
                    return chunk;
                }
                continue;
            }
            Segment after = log.segmentAfter(segment.number);
            if (after == null) {
                return null;
            }
            if (ordinal < index.count()) {
                after.release(); // written before the roll, seen only now: read it first
                continue;
            }
            segment.release();
            segment = after;
            ordinal = 0;
        }
    }

    private boolean passes(SegmentIndex index, int i) {
        int bloomSize = index.bloomSize(i);
        if (bloomSize == 0) {
            return filter.matchUnfiltered();
        }
        long position = index.position(i);
        return filter.matches(segment.file().window(position, HEADER_LENGTH + bloomSize),
            SegmentFile.offsetIn(position) + HEADER_LENGTH, bloomSize);
    }

    /** The offset of the next chunk this reader looks at (the log's next offset when it is at the end). */
    public long position() {
        if (segment == null) {
            throw new IllegalStateException("reader closed");
        }
        SegmentIndex index = segment.index;
        return ordinal < index.count() ? index.chunkId(ordinal) : segment.nextOffset();
    }

    @Override
    public void close() {
        if (segment != null) {
            segment.release();
            segment = null;
        }
    }
}
