package io.skiffmq.server.cluster;

import java.util.Arrays;
import java.util.function.LongUnaryOperator;

/**
 * A replica's messages by sequence ({@link QueueReplica}): parallel arrays in sequence order, the sequences, where
 * each message's bytes are ({@link ReplicaSlabs}) and its counts (null for a message as published, and the whole array
 * until one has any). A settled message's slot is emptied ({@link ReplicaSlabs#NONE}) and the arrays compacted once
 * most slots are empty. A queue's sequences only grow, so an enqueue is an append and a lookup a binary search; a
 * settle is usually near the head, which moves past the empty slots. A message costs 16 bytes here (20 once any has
 * counts) and no object of its own, so a replica of millions is a few arrays to the collector, and a snapshot is read
 * back in one pass. Not thread-safe: guarded by its replica.
 */
final class ReplicaEntries {
    private static final int INITIAL = 16;
    /** Empty slots past which the arrays are compacted, beside those making up more than half of them. */
    private static final int SLACK = 1024;
    private static final long EMPTY = ReplicaSlabs.NONE;

    private long[] sequences;
    private long[] locations;
    private QueueReplica.Counts[] counts;
    /** The first slot that may be full, and the one past the last used. */
    private int head;
    private int tail;
    private int size;

    ReplicaEntries() {
        this(INITIAL);
    }

    /** Room for {@code capacity} messages before the arrays grow (a snapshot says how many it holds). */
    ReplicaEntries(int capacity) {
        sequences = new long[Math.max(INITIAL, capacity)];
        locations = new long[sequences.length];
    }

    int size() {
        return size;
    }

    /** The slot holding {@code sequence}, or -1. */
    int slot(long sequence) {
        int at = find(sequence);
        return at >= 0 && locations[at] != EMPTY ? at : -1;
    }

    long location(int slot) {
        return locations[slot];
    }

    QueueReplica.Counts counts(int slot) {
        return counts == null ? null : counts[slot];
    }

    void counts(int slot, QueueReplica.Counts changed) {
        if (changed != null && counts == null) {
            counts = new QueueReplica.Counts[sequences.length];
        }
        if (counts != null) {
            counts[slot] = changed;
        }
    }

    /** Adds {@code sequence} at {@code location}, or replaces the one held: the location replaced, or NONE. */
    long put(long sequence, long location, QueueReplica.Counts counted) {
        if (tail == head || sequence > sequences[tail - 1]) {
            room();
            sequences[tail] = sequence;
            locations[tail] = location;
            counts(tail++, counted);
            size++;
            return EMPTY;
        }
        int at = find(sequence);
        if (at >= 0) {
            long replaced = locations[at];
            if (replaced == EMPTY) {
                size++;
            }
            locations[at] = location;
            counts(at, counted);
            return replaced;
        }
        // below the last: an adoption's part after messages of the same queue (rare), put in its place
        room(); // which may move the slots: the place is found after it
        int to = -find(sequence) - 1;
        System.arraycopy(sequences, to, sequences, to + 1, tail - to);
        System.arraycopy(locations, to, locations, to + 1, tail - to);
        if (counts != null) {
            System.arraycopy(counts, to, counts, to + 1, tail - to);
        }
        sequences[to] = sequence;
        locations[to] = location;
        counts(to, counted);
        tail++;
        size++;
        return EMPTY;
    }

    /** Removes {@code sequence}: the location it was at, or NONE when it was not held. */
    long remove(long sequence) {
        int at = slot(sequence);
        if (at < 0) {
            return EMPTY;
        }
        long removed = locations[at];
        locations[at] = EMPTY;
        counts(at, null);
        size--;
        while (head < tail && locations[head] == EMPTY) {
            head++;
        }
        if (head == tail) {
            head = 0;
            tail = 0;
        }
        return removed;
    }

    /** Replaces each message's location by what {@code move} makes of it (a compaction of the slabs). */
    void relocate(LongUnaryOperator move) {
        for (int i = head; i < tail; i++) {
            if (locations[i] != EMPTY) {
                locations[i] = move.applyAsLong(locations[i]);
            }
        }
    }

    /** The messages held now, over {@code slabs} (which must hold them where they are now). */
    HeldMessages held(byte[][] slabs) {
        long[] heldSequences = new long[size];
        long[] heldLocations = new long[size];
        QueueReplica.Counts[] heldCounts = counts == null ? null : new QueueReplica.Counts[size];
        copyHeld(heldSequences, heldLocations, heldCounts);
        return new HeldMessages(heldSequences, heldLocations, heldCounts, slabs);
    }

    /**
     * Copies the held slots, in order, to the start of the arrays given (which may be these: a slot only moves
     * down); {@code toCounts} is null when {@link #counts} is. Returns how many.
     */
    private int copyHeld(long[] toSequences, long[] toLocations, QueueReplica.Counts[] toCounts) {
        int n = 0;
        for (int i = head; i < tail; i++) {
            if (locations[i] != EMPTY) {
                toSequences[n] = sequences[i];
                toLocations[n] = locations[i];
                if (toCounts != null) {
                    toCounts[n] = counts[i];
                }
                n++;
            }
        }
        return n;
    }

    /** The slot of {@code sequence}, or {@code -(insertion point) - 1}. */
    private int find(long sequence) {
        return Arrays.binarySearch(sequences, head, tail, sequence);
    }

    /** Makes room for one more at the tail: compacts when most slots are empty, else grows. */
    private void room() {
        if (tail < sequences.length) {
            return;
        }
        int used = tail - head;
        if (used - size > SLACK + size || head > 0 && used < sequences.length / 2) {
            compact(sequences.length);
        } else {
            compact(Math.max(INITIAL, sequences.length + (sequences.length >> 1)));
        }
    }

    /** Moves the full slots to the start of arrays of {@code capacity}. */
    private void compact(int capacity) {
        boolean grown = capacity != sequences.length;
        if (grown && head == 0 && size == tail) { // nothing settled: copied whole, as the appends of a restart find it
            sequences = Arrays.copyOf(sequences, capacity);
            locations = Arrays.copyOf(locations, capacity);
            if (counts != null) {
                counts = Arrays.copyOf(counts, capacity);
            }
            return;
        }
        long[] movedSequences = grown ? new long[capacity] : sequences;
        long[] movedLocations = grown ? new long[capacity] : locations;
        QueueReplica.Counts[] movedCounts = counts == null ? null : grown ? new QueueReplica.Counts[capacity] : counts;
        int n = copyHeld(movedSequences, movedLocations, movedCounts);
        if (movedCounts != null && !grown) {
            Arrays.fill(movedCounts, n, tail, null);
        }
        sequences = movedSequences;
        locations = movedLocations;
        counts = movedCounts;
        head = 0;
        tail = n;
    }
}
