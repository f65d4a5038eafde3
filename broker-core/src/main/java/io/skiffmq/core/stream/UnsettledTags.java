package io.skiffmq.core.stream;

import java.util.Arrays;

/**
 * A stream consumer's delivery tags not settled yet: tags are handed out 0, 1, 2, …, so they are kept as bits
 * from the oldest unsettled tag on, a bit per delivery in the window between it and the newest, with no object per
 * delivery. Settling a range clears its bits and says how many were set: a stream consumer's settlement only returns
 * credit, so the count is all that matters.
 *
 * <p>Owned by the stream queue's thread; not thread-safe.
 */
final class UnsettledTags {
    /** Bit {@code i} of word {@code w} is tag {@code base + 64 * ((w - head) mod words) + i}. */
    private long[] words = new long[4];
    private int head;
    /** The tag of bit 0 of the head word: a multiple of 64. */
    private long base;
    /** Tags below this were all handed out. */
    private long next;
    private int count;

    /** Marks the next tag unsettled; tags must come in order, 0 first. */
    void add(long tag) {
        if (tag != next) {
            throw new IllegalArgumentException("tag " + tag + " after " + (next - 1));
        }
        long index = tag - base;
        int word = (int) (index >>> 6);
        if (word >= words.length) {
            grow(word + 1);
        }
        words[(head + word) % words.length] |= 1L << (index & 63);
        next++;
        count++;
    }

    /** Unsettled tags. */
    int count() {
        return count;
    }

    /** Settles the tags in {@code first..last} that were unsettled; how many there were. */
    int remove(long first, long last) {
        long from = Math.max(first, base);
        long to = Math.min(last, next - 1);
        int removed = 0;
        for (long tag = from; tag <= to; ) {
            long index = tag - base;
            int slot = (int) ((head + (index >>> 6)) % words.length);
            int bit = (int) (index & 63);
            int bits = (int) Math.min(64 - bit, to - tag + 1);
            long mask = (bits == 64 ? -1L : (1L << bits) - 1) << bit;
            removed += Long.bitCount(words[slot] & mask);
            words[slot] &= ~mask;
            tag += bits;
        }
        count -= removed;
        // the window's head moves past words that are all settled, while it is behind the newest tag
        while (words[head] == 0 && base + 64 <= next) {
            head = (head + 1) % words.length;
            base += 64;
        }
        if (count == 0) {
            base = next & ~63L;
            head = 0;
            Arrays.fill(words, 0);
        }
        return removed;
    }

    /** Settles every tag; how many were unsettled. */
    int clear() {
        int removed = count;
        Arrays.fill(words, 0);
        count = 0;
        head = 0;
        base = next & ~63L;
        return removed;
    }

    private void grow(int needed) {
        int size = words.length;
        while (size < needed) {
            size *= 2;
        }
        long[] grown = new long[size];
        for (int i = 0; i < words.length; i++) {
            grown[i] = words[(head + i) % words.length];
        }
        words = grown;
        head = 0;
    }
}
