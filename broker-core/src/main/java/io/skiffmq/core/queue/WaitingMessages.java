package io.skiffmq.core.queue;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.PriorityQueue;
import java.util.function.Consumer;

/**
 * A queue's messages waiting for a consumer, in the order they go out: arrivals in order, and messages given back
 * (released, modified) at their original position, ahead of later arrivals. Keeps the bytes of those held in memory
 * (a paged-out entry has no message and counts nothing). Owned by the queue's thread.
 */
final class WaitingMessages {
    private final ArrayDeque<QueueEntry> arrived = new ArrayDeque<>();
    /** Messages given back, by original position; always older than the head of {@link #arrived}. */
    private final PriorityQueue<QueueEntry> returned = new PriorityQueue<>(Comparator.comparingLong(e -> e.sequence));
    private long bytes;

    int size() {
        return arrived.size() + returned.size();
    }

    boolean isEmpty() {
        return arrived.isEmpty() && returned.isEmpty();
    }

    /** Bytes of the waiting messages held in memory. */
    long bytes() {
        return bytes;
    }

    /** A message held in memory by a waiting entry was read back ({@code delta} > 0) or let go (< 0). */
    void memoryChanged(long delta) {
        bytes += delta;
    }

    /** A new (or recovered) entry, after every other arrival. */
    void arrive(QueueEntry entry) {
        entry.queued = true;
        arrived.addLast(entry);
        count(entry, 1);
    }

    /** Takes back the last arrival (the log refused it). */
    void cancelArrival(QueueEntry entry) {
        arrived.pollLast();
        entry.queued = false;
        count(entry, -1);
    }

    /** A taken entry goes back among the waiting ones, at its position. */
    void putBack(QueueEntry entry) {
        entry.queued = true;
        returned.add(entry);
        count(entry, 1);
    }

    /** The oldest message {@code consumer} may have, removed; null when there is none. */
    QueueEntry take(QueueConsumer consumer) {
        QueueEntry head = oldest();
        if (head == null) {
            return null;
        }
        if (!head.excludes(consumer)) {
            return removeOldest();
        }
        // rare: settled undeliverable-here by this consumer; look past such messages without losing their place
        List<QueueEntry> skipped = new ArrayList<>();
        QueueEntry found = null;
        while ((head = removeOldest()) != null) {
            if (!head.excludes(consumer)) {
                found = head;
                break;
            }
            skipped.add(head);
        }
        skipped.forEach(this::putBack);
        return found;
    }

    private QueueEntry oldest() {
        QueueEntry back = returned.peek();
        QueueEntry next = arrived.peekFirst();
        return back != null && (next == null || back.sequence < next.sequence) ? back : next;
    }

    private QueueEntry removeOldest() {
        QueueEntry oldest = oldest();
        if (oldest != null) {
            if (oldest == returned.peek()) {
                returned.poll();
            } else {
                arrived.pollFirst();
            }
            oldest.queued = false;
            count(oldest, -1);
        }
        return oldest;
    }

    /** Every waiting entry, left in place. */
    void forEach(Consumer<QueueEntry> action) {
        arrived.forEach(action);
        returned.forEach(action);
    }

    /** Removes every waiting entry, handing each to {@code action}; returns how many there were. */
    int removeAll(Consumer<QueueEntry> action) {
        int count = size();
        forEach(action);
        arrived.clear();
        returned.clear();
        bytes = 0;
        return count;
    }

    private void count(QueueEntry entry, int sign) {
        if (entry.message != null) {
            bytes += sign * (long) entry.message.size();
        }
    }
}
