package io.skiffmq.core.queue;

/**
 * The paged tail of one priority lane: the messages that arrived while the queue was over its memory limit (or
 * after others that did), oldest first, in a {@link PageFile}. Nothing is kept in memory per message: only how
 * many there are, their body bytes ({@code x-max-length-bytes}), how many of them the log holds too, and the lowest
 * such location (so journal compaction knows whether it must look at the tail at all). Owned by the queue's thread.
 */
final class PagedTail {
    private final PageFile file;
    private int count;
    private long bodyBytes;
    /** Messages of the tail that the queue's log holds too (durable ones). */
    private int logged;
    /** No logged message of the tail lies before this location (it may be lower than the lowest one). */
    private long lowestLocation = Long.MAX_VALUE;

    PagedTail(PageFile file) {
        this.file = file;
    }

    int count() {
        return count;
    }

    long bodyBytes() {
        return bodyBytes;
    }

    /**
     * Writes the entry's message to the tail and releases it; the entry itself is let go by the caller.
     *
     * @throws java.io.UncheckedIOException when it could not be written: nothing changed, the message is the caller's
     */
    void append(QueueEntry entry) {
        file.append(entry.sequence, entry.message, entry.deliveryCount, entry.acquiredBefore, entry.location(),
            entry.expiresAt(), entry.bodySize);
        entry.message.release();
        entry.message = null;
        count++;
        bodyBytes += entry.bodySize;
        if (entry.location() >= 0) {
            logged++;
            lowestLocation = Math.min(lowestLocation, entry.location());
        }
    }

    /**
     * The oldest message of the tail as an entry of lane {@code priority}, removed from the tail; null when the tail
     * is empty.
     *
     * @throws RuntimeException when it could not be read (see {@link PageFile#read}); the tail is then unchanged
     */
    QueueEntry next(int priority) {
        if (count == 0) {
            return null;
        }
        PagedMessage paged = file.read();
        if (paged == null) {
            throw new IllegalStateException("page file ended with " + count + " messages unread");
        }
        QueueEntry entry = QueueEntry.of(paged.sequence(), paged.message(), priority, paged.bodySize(),
            paged.expiresAt(), null, paged.location() >= 0, false);
        entry.carried(paged.deliveryCount()); // an arrival, never delivered here: only what it carried in
        entry.acquiredBefore = paged.acquiredBefore();
        entry.location(paged.location());
        count--;
        bodyBytes -= paged.bodySize();
        if (paged.location() >= 0) {
            logged--;
        }
        if (count == 0) {
            file.clear(null); // all read: the file may start over
            reset();
        }
        return entry;
    }

    /** Copies the logged messages before {@code before} forward in {@code log}; returns how many. */
    int relocate(long before, QueueLog log) {
        if (logged == 0 || lowestLocation >= before) {
            return 0;
        }
        int copied = file.relocate(before, log);
        lowestLocation = before; // what was lower went forward, past the writer's position when it was asked
        return copied;
    }

    /**
     * Drops the whole tail; {@code removed} (may be null) hears each message the log holds, so the queue can record
     * that it left. Returns how many messages were dropped.
     */
    int clear(PageFile.Removed removed) {
        int dropped = count;
        if (count > 0) {
            file.clear(logged > 0 ? removed : null);
        }
        reset();
        return dropped;
    }

    private void reset() {
        count = 0;
        bodyBytes = 0;
        logged = 0;
        lowestLocation = Long.MAX_VALUE;
    }

    void delete() {
        file.delete();
    }
}
