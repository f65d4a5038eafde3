package io.skiffmq.store.stream;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.time.Instant;
import java.util.concurrent.atomic.AtomicInteger;
import net.openhft.chronicle.bytes.SyncMode;
import net.openhft.chronicle.core.time.SetTimeProvider;
import net.openhft.chronicle.queue.impl.single.SingleChronicleQueue;
import net.openhft.chronicle.queue.impl.single.SingleChronicleQueueBuilder;

/**
 * One segment of a stream log: a directory {@code segment-NNNNNNNNN} holding a Chronicle queue of one cycle (its
 * chunks, one excerpt each), the chunk {@link SegmentIndex} and, once no chunk will be added, a seal.
 *
 * <p>Reference counted: the log holds one reference while the segment is part of it, and each reader, mapped
 * buffer and file region one more; the index and file mappings are undone when the last goes. So retention can
 * delete a segment's files at once while a consumer still sends from it (the open file keeps its blocks until
 * then). Threads: any.
 */
final class Segment {
    static final String PREFIX = "segment-";
    /**
     * Four times the largest chunk: Chronicle keeps an excerpt to a quarter of its block, and one over the block left
     * the next write failing its assertion (two 4 MiB messages in a row broke a stream with 4 MiB blocks).
     */
    static final long BLOCK_SIZE = 4L * ChunkDescriptor.MAX_CHUNK_LENGTH;
    /** Segments whose mappings are still in place, for tests that check nothing is left behind. */
    static final AtomicInteger OPEN = new AtomicInteger();

    final long number;
    final Path directory;
    final SegmentIndex index;
    /** The offset of its first chunk (the log's next offset when it was made). */
    final long firstChunkId;
    private final AtomicInteger refs = new AtomicInteger(1);
    private volatile SegmentFile file;
    /** Bytes of its file in use: the end of its last chunk. Written by the log's writer. */
    volatile long bytes;

    /** @param file its chunk data if already open, else null (opened on first use) */
    Segment(long number, Path directory, SegmentIndex index, long firstChunkId, SegmentFile file) {
        this.number = number;
        this.directory = directory;
        this.index = index;
        this.firstChunkId = firstChunkId;
        this.file = file;
        int n = index.count();
        this.bytes = n == 0 ? 0 : index.position(n - 1) + index.length(n - 1);
        OPEN.incrementAndGet();
    }

    static Path path(Path logDirectory, long number) {
        return logDirectory.resolve(String.format("%s%09d", PREFIX, number));
    }

    /**
     * Opens the segment's Chronicle queue: one cycle, its clock frozen when opened, so the file never rolls and the
     * n-th excerpt is the n-th chunk. Syncing is the log's (a force of the file), never Chronicle's. The file grows
     * {@link #BLOCK_SIZE} bytes at a time, sparse: a small stream's file takes the disk its chunks take.
     */
    static SingleChronicleQueue queue(Path directory) {
        return builder(directory).build();
    }

    /** As {@link #queue(Path)}, giving up after {@code timeoutMs} on a header that stays unreadable. */
    static SingleChronicleQueue queue(Path directory, long timeoutMs) {
        return builder(directory).timeoutMS(timeoutMs).build();
    }

    private static SingleChronicleQueueBuilder builder(Path directory) {
        return SingleChronicleQueueBuilder.binary(directory).syncMode(SyncMode.NONE).blockSize(BLOCK_SIZE)
            .timeProvider(new SetTimeProvider(Instant.now()));
    }

    /** The segment's chunk data, opened on first use. */
    SegmentFile file() {
        SegmentFile f = file;
        if (f == null) {
            synchronized (this) {
                f = file;
                if (f == null) {
                    try {
                        f = SegmentFile.open(directory);
                    } catch (IOException e) {
                        throw new UncheckedIOException("cannot open stream segment " + directory, e);
                    }
                    if (f == null) {
                        throw new IllegalStateException("stream segment " + directory + " has no file");
                    }
                    file = f;
                }
            }
        }
        return f;
    }

    /** The offset after its last chunk. */
    long nextOffset() {
        int n = index.count();
        return n == 0 ? firstChunkId : index.nextOffset(n - 1);
    }

    /** The timestamp of its last chunk, or {@code Long.MIN_VALUE} when it has none. */
    long lastTimestamp() {
        int n = index.count();
        return n == 0 ? Long.MIN_VALUE : index.timestamp(n - 1);
    }

    /** The segment numbered {@code number} in {@code all}, retained for the caller, or null when it is gone. */
    static Segment retained(Segment[] all, long number) {
        for (int s = all.length - 1; s >= 0; s--) {
            if (all[s].number == number) {
                return all[s].tryRetain() ? all[s] : null;
            }
        }
        return null;
    }

    /** Takes a reference unless the segment is already gone. */
    boolean tryRetain() {
        for (int r = refs.get(); r > 0; r = refs.get()) {
            if (refs.compareAndSet(r, r + 1)) {
                return true;
            }
        }
        return false;
    }

    void retain() {
        if (!tryRetain()) {
            throw new IllegalStateException("stream segment " + number + " is released");
        }
    }

    void release() {
        int r = refs.decrementAndGet();
        if (r == 0) {
            index.close();
            SegmentFile f;
            synchronized (this) {
                f = file;
            }
            if (f != null) {
                f.close();
            }
            OPEN.decrementAndGet();
        } else if (r < 0) {
            throw new IllegalStateException("stream segment " + number + " released once too often");
        }
    }

    @Override
    public String toString() {
        return directory.getFileName().toString();
    }
}
