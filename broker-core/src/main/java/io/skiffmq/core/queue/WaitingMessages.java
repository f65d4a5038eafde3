package io.skiffmq.core.queue;

import java.util.ArrayDeque;
import java.util.Comparator;
import java.util.PriorityQueue;
import java.util.function.Consumer;

/**
 * A queue's messages waiting for a consumer, in the order they go out: by priority lane, highest first (one lane
 * unless the queue has {@code x-max-priority}), and within a lane arrivals in order, with messages given back
 * (released, modified) at their original position, ahead of later arrivals. Keeps the bytes of those held in memory
 * (a paged-out entry has no message and counts nothing) and the body bytes of all of them ({@code x-max-length-bytes}).
 * Owned by the queue's thread.
 */
final class WaitingMessages {
    /** By priority: lane {@code i} holds the entries of priority {@code i}. */
    private final Lane[] lanes;
    private int size;
    private long bytes;
    private long bodyBytes;

    /** @param maxPriority the highest priority told apart (0: a single lane) */
    WaitingMessages(int maxPriority) {
        lanes = new Lane[maxPriority + 1];
        for (int i = 0; i < lanes.length; i++) {
            lanes[i] = new Lane();
        }
    }

    int size() {
        return size;
    }

    boolean isEmpty() {
        return size == 0;
    }

    /** Bytes of the waiting messages held in memory. */
    long bytes() {
        return bytes;
    }

    /** Body bytes of every waiting message, in memory or not. */
    long bodyBytes() {
        return bodyBytes;
    }

    /** A message held in memory by a waiting entry was read back ({@code delta} > 0) or let go (< 0). */
    void memoryChanged(long delta) {
        bytes += delta;
    }

    /** A new (or recovered) entry, after every other arrival of its priority. */
    void arrive(QueueEntry entry) {
        lanes[entry.priority].arrived.addLast(entry);
        count(entry, 1);
    }

    /** Takes back the last arrival (the log refused it). */
    void cancelArrival(QueueEntry entry) {
        lanes[entry.priority].arrived.removeLastOccurrence(entry);
        count(entry, -1);
    }

    /** A taken entry goes back among the waiting ones, at its position. */
    void putBack(QueueEntry entry) {
        lanes[entry.priority].returned.add(entry);
        count(entry, 1);
    }

    /** The entry that goes out next, left in place; null when none. */
    QueueEntry head() {
        for (int i = lanes.length - 1; i >= 0; i--) {
            QueueEntry head = lanes[i].oldest();
            if (head != null) {
                return head;
            }
        }
        return null;
    }

    /** Removes and returns {@link #head()}. */
    QueueEntry removeHead() {
        for (int i = lanes.length - 1; i >= 0; i--) {
            QueueEntry head = removeOldest(lanes[i]);
            if (head != null) {
                return head;
            }
        }
        return null;
    }

    /**
     * Removes the entries at the head of each lane that expired by {@code now} (RabbitMQ expires at the head only:
     * a message behind one that lives longer waits for it), handing each to {@code expired}.
     */
    void expireHeads(long now, Consumer<QueueEntry> expired) {
        for (Lane lane : lanes) {
            QueueEntry head;
            while ((head = lane.oldest()) != null && head.expiresAt <= now) {
                expired.accept(removeOldest(lane));
            }
        }
    }

    /** The earliest expiry among the lanes' heads, {@link Long#MAX_VALUE} when none expires. */
    long nextHeadExpiry() {
        long next = Long.MAX_VALUE;
        for (Lane lane : lanes) {
            QueueEntry head = lane.oldest();
            if (head != null) {
                next = Math.min(next, head.expiresAt);
            }
        }
        return next;
    }

    private QueueEntry removeOldest(Lane lane) {
        QueueEntry oldest = lane.oldest();
        if (oldest != null) {
            if (oldest == lane.returned.peek()) {
                lane.returned.poll();
            } else {
                lane.arrived.pollFirst();
            }
            count(oldest, -1);
        }
        return oldest;
    }

    /** Every waiting entry, left in place. */
    void forEach(Consumer<QueueEntry> action) {
        for (Lane lane : lanes) {
            lane.arrived.forEach(action);
            lane.returned.forEach(action);
        }
    }

    /** Removes every waiting entry, handing each to {@code action}; returns how many there were. */
    int removeAll(Consumer<QueueEntry> action) {
        int count = size;
        for (Lane lane : lanes) {
            lane.arrived.forEach(e -> e.queued = false);
            lane.returned.forEach(e -> e.queued = false);
        }
        for (Lane lane : lanes) {
            lane.arrived.forEach(action);
            lane.returned.forEach(action);
            lane.arrived.clear();
            lane.returned.clear();
        }
        size = 0;
        bytes = 0;
        bodyBytes = 0;
        return count;
    }

    private void count(QueueEntry entry, int sign) {
        entry.queued = sign > 0;
        size += sign;
        bodyBytes += sign * (long) entry.bodySize;
        if (entry.message != null) {
            bytes += sign * (long) entry.message.size();
        }
    }

    /** The entries of one priority. */
    private static final class Lane {
        final ArrayDeque<QueueEntry> arrived = new ArrayDeque<>();
        /** Messages given back, by original position; always older than the head of {@link #arrived}. */
        final PriorityQueue<QueueEntry> returned = new PriorityQueue<>(Comparator.comparingLong(e -> e.sequence));

        QueueEntry oldest() {
            QueueEntry back = returned.peek();
            QueueEntry next = arrived.peekFirst();
            return back != null && (next == null || back.sequence < next.sequence) ? back : next;
        }
    }
}
