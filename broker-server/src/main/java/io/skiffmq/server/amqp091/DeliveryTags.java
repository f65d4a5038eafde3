package io.skiffmq.server.amqp091;

import io.skiffmq.core.queue.Outcome;
import java.util.Arrays;

/**
 * A channel's deliveries waiting for an ack, by delivery tag. Tags are the channel's (1, 2, 3, … across all its
 * consumers and {@code basic.get}s); each maps to the consumer it went to and that consumer's own queue tag, so an
 * ack becomes {@link Source#settle} calls on queue tags.
 *
 * <p>A ring indexed by tag: the first slot holds the oldest outstanding tag, settled slots are emptied and dropped
 * once they reach the front. An {@code ack multiple} settles, per consumer, one range of its queue tags: queue tags
 * rise with channel tags, so everything it acks of one consumer lies inside one range (and what in the range was
 * settled before is skipped by the queue). Owned by the channel's event loop; nothing is allocated per delivery.
 */
final class DeliveryTags {
    /** Where a delivery came from: a consumer, or a channel's {@code basic.get} on one queue. */
    interface Source {
        /** Settles the source's deliveries with queue tags {@code first..last}; {@code count} of them were ours. */
        void settle(long first, long last, Outcome outcome, int count);
    }

    /** Thrown for a tag that is not outstanding. */
    static final class UnknownTagException extends Exception {
        private static final long serialVersionUID = 1L;

        UnknownTagException(long tag) {
            super("unknown delivery tag " + tag, null, false, false);
        }
    }

    private Source[] sources = new Source[16];
    private long[] queueTags = new long[16];
    private int head;
    private int size;
    /** The tag of the slot at {@link #head}. */
    private long firstTag = 1;
    private long nextTag = 1;
    private int outstanding;
    // per-source ranges gathered by one multiple settle; a channel has few consumers, so a linear search is fine
    private Source[] batchSources = new Source[4];
    private long[] batchFirst = new long[4];
    private long[] batchLast = new long[4];
    private int[] batchCount = new int[4];

    /** Takes the next tag for a delivery; it is outstanding unless {@code source} is null (pre-settled). */
    long add(Source source, long queueTag) {
        long tag = nextTag++;
        if (source == null && size == 0) {
            firstTag = nextTag; // nothing to keep
            return tag;
        }
        if (size == sources.length) {
            grow();
        }
        int slot = (head + size) & (sources.length - 1);
        sources[slot] = source;
        queueTags[slot] = queueTag;
        size++;
        if (source != null) {
            outstanding++;
        }
        return tag;
    }

    /** Deliveries not settled yet. */
    int outstanding() {
        return outstanding;
    }

    /**
     * Settles {@code tag}, or with {@code multiple} every outstanding tag up to it ({@code 0} with {@code multiple}:
     * all of them), as RabbitMQ does: the tag itself must be outstanding.
     */
    void settle(long tag, boolean multiple, Outcome outcome) throws UnknownTagException {
        if (multiple && tag == 0) {
            settleThrough(firstTag + size - 1, outcome);
            return;
        }
        int slot = slotOf(tag);
        if (slot < 0) {
            throw new UnknownTagException(tag);
        }
        if (multiple) {
            settleThrough(tag, outcome);
            return;
        }
        Source source = sources[slot];
        long queueTag = queueTags[slot];
        sources[slot] = null;
        outstanding--;
        dropSettledFront();
        source.settle(queueTag, queueTag, outcome, 1);
    }

    /** Settles every outstanding delivery ({@code basic.recover}, {@code nack} of all). */
    void settleAll(Outcome outcome) {
        if (size > 0) {
            settleThrough(firstTag + size - 1, outcome);
        }
    }

    boolean isOutstanding(long tag) {
        return slotOf(tag) >= 0;
    }

    /** The slot of an outstanding tag, or -1. */
    private int slotOf(long tag) {
        if (tag < firstTag || tag >= firstTag + size) {
            return -1;
        }
        int slot = (int) ((head + (tag - firstTag)) & (sources.length - 1));
        return sources[slot] == null ? -1 : slot;
    }

    private void settleThrough(long lastTag, Outcome outcome) {
        int batch = 0;
        int count = (int) Math.min(size, lastTag - firstTag + 1);
        for (int i = 0; i < count; i++) {
            int slot = (head + i) & (sources.length - 1);
            Source source = sources[slot];
            if (source == null) {
                continue;
            }
            long queueTag = queueTags[slot];
            sources[slot] = null;
            outstanding--;
            int b = 0;
            while (b < batch && batchSources[b] != source) {
                b++;
            }
            if (b == batch) {
                if (batch == batchSources.length) {
                    growBatch();
                }
                batchSources[b] = source;
                batchFirst[b] = queueTag;
                batchCount[b] = 0;
                batch++;
            }
            batchLast[b] = queueTag;
            batchCount[b]++;
        }
        dropSettledFront();
        for (int b = 0; b < batch; b++) {
            Source source = batchSources[b];
            batchSources[b] = null;
            source.settle(batchFirst[b], batchLast[b], outcome, batchCount[b]);
        }
    }

    private void dropSettledFront() {
        while (size > 0 && sources[head] == null) {
            head = (head + 1) & (sources.length - 1);
            size--;
            firstTag++;
        }
        if (size == 0) {
            head = 0;
            firstTag = nextTag;
        }
    }

    private void grow() {
        int capacity = sources.length * 2;
        Source[] s = new Source[capacity];
        long[] t = new long[capacity];
        for (int i = 0; i < size; i++) {
            int slot = (head + i) & (sources.length - 1);
            s[i] = sources[slot];
            t[i] = queueTags[slot];
        }
        sources = s;
        queueTags = t;
        head = 0;
    }

    private void growBatch() {
        int capacity = batchSources.length * 2;
        batchSources = Arrays.copyOf(batchSources, capacity);
        batchFirst = Arrays.copyOf(batchFirst, capacity);
        batchLast = Arrays.copyOf(batchLast, capacity);
        batchCount = Arrays.copyOf(batchCount, capacity);
    }
}
