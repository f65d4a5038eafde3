package io.skiffmq.store.stream;

import java.nio.charset.StandardCharsets;

/**
 * A named producer of a stream (its publisher reference) and the highest publishing id the log holds for it:
 * what deduplication compares new publishing ids with. Obtained once per producer from
 * {@link StreamLog#publisher}, then handed to {@link ChunkBuilder#addEntry} with each message, so the hot path
 * looks nothing up.
 *
 * <p>Threads: {@link #sequence()} from any thread (the highest id in a committed-to-the-file chunk); the pending id
 * and chunk membership belong to the log's writer thread.
 */
public final class TrackedPublisher {
    private final String reference;
    final byte[] id;
    /** Highest publishing id in a chunk written to the log; -1 when none (0 is an id a producer may use). */
    private volatile long sequence = -1;
    /** The chunk id of the chunk that holds {@link #sequence}: snapshots keep the most recently active ones. */
    volatile long chunkId;
    /** Writer thread: the highest id added to the chunk being built, or {@link #sequence} when none. */
    long pending = -1;
    /** Writer thread: already listed in the chunk being built. */
    boolean inChunk;

    TrackedPublisher(String reference) {
        this.reference = reference;
        this.id = reference.getBytes(StandardCharsets.UTF_8);
        if (id.length == 0 || id.length > Tracking.MAX_ID_LENGTH) {
            throw new IllegalArgumentException("a publisher reference is 1 to " + Tracking.MAX_ID_LENGTH
                + " UTF-8 bytes, not " + id.length);
        }
    }

    public String reference() {
        return reference;
    }

    /** The highest publishing id stored for this producer, 0 when none (what "query publisher sequence" answers). */
    public long sequence() {
        return Math.max(0, sequence);
    }

    /** The id of the chunk that holds its highest publishing id (osiris' tracking keeps it beside the id). */
    public long chunkId() {
        return chunkId;
    }

    /** True once a message of this producer is in the log. */
    public boolean hasSequence() {
        return sequence >= 0;
    }

    /** Writer thread: true when {@code publishingId} is at or below an id already taken (a duplicate to drop). */
    boolean isDuplicate(long publishingId) {
        return Long.compareUnsigned(publishingId, pending) <= 0 && pending >= 0;
    }

    /** Writer thread: the chunk holding {@code sequence} is written. */
    void written(long sequence, long chunkId) {
        this.sequence = sequence;
        this.chunkId = chunkId;
        this.pending = sequence;
    }
}
