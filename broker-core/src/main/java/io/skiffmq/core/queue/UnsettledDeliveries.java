package io.skiffmq.core.queue;

import java.util.function.Consumer;

/**
 * A consumer's unsettled deliveries by delivery tag. Tags are handed out in order (0, 1, 2, …), so the deliveries
 * sit in a ring indexed by tag; a settled one leaves a hole that the head skips once it reaches it. Adding,
 * settling one and settling a range allocate nothing once the ring has grown to the consumer's window.
 *
 * <p>Owned by the queue's thread.
 */
final class UnsettledDeliveries {
    private QueueEntry[] ring = new QueueEntry[16];
    /** Tag of the slot at {@link #head}. */
    private long headTag;
    private int head;
    /** Slots in use from the head, holes included. */
    private int span;
    private int count;

    int size() {
        return count;
    }

    /** Adds the delivery with the next tag: {@code tag} follows every tag added before. */
    void add(long tag, QueueEntry entry) {
        if (span == 0) {
            headTag = tag;
            head = 0;
        } else if (tag != headTag + span) {
            throw new IllegalArgumentException("tag " + tag + " out of order (expected " + (headTag + span) + ")");
        }
        if (span == ring.length) {
            grow();
        }
        ring[(head + span) & (ring.length - 1)] = entry;
        span++;
        count++;
    }

    /** Removes and returns the delivery with {@code tag}; null when it is not unsettled. */
    QueueEntry remove(long tag) {
        long offset = tag - headTag;
        if (offset < 0 || offset >= span) {
            return null;
        }
        int index = (int) (head + offset) & (ring.length - 1);
        QueueEntry entry = ring[index];
        if (entry != null) {
            ring[index] = null;
            count--;
            trim();
        }
        return entry;
    }

    /** Removes every unsettled delivery with a tag in {@code first..last}, handing each to {@code action}, in order. */
    void removeRange(long first, long last, Consumer<QueueEntry> action) {
        long from = Math.max(first, headTag);
        long to = Math.min(last, headTag + span - 1);
        for (long tag = from; tag <= to; tag++) {
            int index = (int) (head + (tag - headTag)) & (ring.length - 1);
            QueueEntry entry = ring[index];
            if (entry != null) {
                ring[index] = null;
                count--;
                action.accept(entry);
            }
        }
        trim();
    }

    /** Removes every delivery, handing each to {@code action}, in tag order. */
    void removeAll(Consumer<QueueEntry> action) {
        if (span > 0) {
            removeRange(headTag, headTag + span - 1, action);
        }
    }

    /** Every unsettled delivery, in tag order, left in place. */
    void forEach(Consumer<QueueEntry> action) {
        for (int i = 0; i < span; i++) {
            QueueEntry entry = ring[(head + i) & (ring.length - 1)];
            if (entry != null) {
                action.accept(entry);
            }
        }
    }

    /** Advances the head past settled slots. */
    private void trim() {
        while (span > 0 && ring[head] == null) {
            head = (head + 1) & (ring.length - 1);
            headTag++;
            span--;
        }
        if (span == 0) {
            head = 0;
        }
    }

    private void grow() {
        QueueEntry[] bigger = new QueueEntry[ring.length * 2];
        for (int i = 0; i < span; i++) {
            bigger[i] = ring[(head + i) & (ring.length - 1)];
        }
        ring = bigger;
        head = 0;
    }
}
