package io.skiffmq.server.cluster;

import java.util.Arrays;
import java.util.function.Consumer;

/**
 * A replica's entries by sequence ({@link QueueReplica}): two parallel arrays in sequence order, the sequences and the
 * entries, a settled entry's slot emptied (null) and the arrays compacted once most slots are empty. A queue's
 * sequences only grow, so an enqueue is an append and a lookup a binary search; a settle is usually near the head,
 * which moves past the empty slots. What an entry costs here is 12 bytes (its sequence and its reference), against a
 * {@code TreeMap}'s node and boxed key (56 bytes), and a snapshot is read back in one pass without rebalancing a tree.
 * Not thread-safe: guarded by its replica.
 */
final class ReplicaEntries {
    private static final int INITIAL = 16;
    /** Empty slots past which the arrays are compacted, beside those making up more than half of them. */
    private static final int SLACK = 1024;

    private long[] sequences = new long[INITIAL];
    private QueueReplica.Entry[] entries = new QueueReplica.Entry[INITIAL];
    /** The first slot that may be full, and the one past the last used. */
    private int head;
    private int tail;
    private int size;

    int size() {
        return size;
    }

    /** The entry of {@code sequence}, or null. */
    QueueReplica.Entry get(long sequence) {
        int at = find(sequence);
        return at >= 0 ? entries[at] : null;
    }

    /** Adds the entry of its sequence, or replaces the one there. */
    void put(QueueReplica.Entry entry) {
        long sequence = entry.sequence();
        if (tail == head || sequence > sequences[tail - 1]) {
            room();
            sequences[tail] = sequence;
            entries[tail++] = entry;
            size++;
            return;
        }
        int at = find(sequence);
        if (at >= 0) {
            if (entries[at] == null) {
                size++;
            }
            entries[at] = entry;
            return;
        }
        // below the last: an adoption's part after entries of the same queue (rare), put in its place
        room(); // which may move the slots: the place is found after it
        int to = -find(sequence) - 1;
        System.arraycopy(sequences, to, sequences, to + 1, tail - to);
        System.arraycopy(entries, to, entries, to + 1, tail - to);
        sequences[to] = sequence;
        entries[to] = entry;
        tail++;
        size++;
    }

    /** Removes the entry of {@code sequence}, if held. */
    void remove(long sequence) {
        int at = find(sequence);
        if (at < 0 || entries[at] == null) {
            return;
        }
        entries[at] = null;
        size--;
        while (head < tail && entries[head] == null) {
            head++;
        }
        if (head == tail) {
            head = 0;
            tail = 0;
        }
    }

    /** Each entry, in sequence order. */
    void forEach(Consumer<QueueReplica.Entry> action) {
        for (int i = head; i < tail; i++) {
            if (entries[i] != null) {
                action.accept(entries[i]);
            }
        }
    }

    QueueReplica.Entry[] toArray() {
        QueueReplica.Entry[] out = new QueueReplica.Entry[size];
        int n = 0;
        for (int i = head; i < tail; i++) {
            if (entries[i] != null) {
                out[n++] = entries[i];
            }
        }
        return out;
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
        long[] movedSequences = capacity == sequences.length ? sequences : new long[capacity];
        QueueReplica.Entry[] movedEntries = capacity == entries.length ? entries : new QueueReplica.Entry[capacity];
        int n = 0;
        for (int i = head; i < tail; i++) {
            if (entries[i] != null) {
                movedSequences[n] = sequences[i];
                movedEntries[n++] = entries[i];
            }
        }
        if (movedEntries == entries) {
            Arrays.fill(entries, n, tail, null);
        }
        sequences = movedSequences;
        entries = movedEntries;
        head = 0;
        tail = n;
    }
}
