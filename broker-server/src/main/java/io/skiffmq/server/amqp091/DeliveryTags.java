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
 * settled before is skipped by the queue).
 *
 * <p>In a transaction an ack, nack or reject {@link #hold holds} its deliveries: they are no longer outstanding (a
 * second ack of one is an unknown tag, {@code basic.recover} leaves them), and wait in place until the commit settles
 * them ({@link #settleHeld}) or the rollback makes them outstanding again ({@link #unholdAll}), as RabbitMQ's
 * {@code rabbit_channel} takes them out of its unacked queue into the transaction. A range never spans a delivery
 * that is not being settled, since the queue would settle it too.
 *
 * <p>Owned by the channel's event loop; nothing is allocated per delivery.
 */
final class DeliveryTags {
    /** Where a delivery came from: a consumer, or a channel's {@code basic.get} on one queue. */
    interface Source {
        /** Settles the source's deliveries with queue tags {@code first..last}; {@code count} of them were ours. */
        void settle(long first, long last, Outcome outcome, int count);

        /** The queue its deliveries come from. */
        io.skiffmq.core.queue.Queue queue();
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
    /** Per slot, when it was delivered ({@link System#nanoTime}), for the consumer timeout. */
    private long[] deliveredAt = new long[16];
    /** Per slot, the outcome a transaction holds it with; null when it is not held. */
    private Outcome[] held = new Outcome[16];
    private int head;
    private int size;
    /** The tag of the slot at {@link #head}. */
    private long firstTag = 1;
    private long nextTag = 1;
    private int outstanding;
    private int heldCount;
    // per-source ranges gathered by one settle; a channel has few consumers, so a linear search is fine
    private Source[] batchSources = new Source[4];
    private long[] batchFirst = new long[4];
    private long[] batchLast = new long[4];
    private int[] batchCount = new int[4];
    private Outcome[] batchOutcome = new Outcome[4];
    /** False once a delivery of its source that is not settled with it came after the range: it cannot grow. */
    private boolean[] batchOpen = new boolean[4];

    /**
     * Takes the next tag for a delivery; it is outstanding unless {@code source} is null (pre-settled).
     *
     * @param now {@link System#nanoTime} as it is delivered
     */
    long add(Source source, long queueTag, long now) {
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
        deliveredAt[slot] = now;
        size++;
        if (source != null) {
            outstanding++;
        }
        return tag;
    }

    /** Deliveries the client may still settle: unsettled and not held by a transaction. */
    int outstanding() {
        return outstanding;
    }

    /**
     * Settles {@code tag}, or with {@code multiple} every outstanding tag up to it ({@code 0} with {@code multiple}:
     * all of them), as RabbitMQ does: the tag itself must be outstanding.
     */
    void settle(long tag, boolean multiple, Outcome outcome) throws UnknownTagException {
        if (multiple && tag == 0) {
            settleAll(outcome);
            return;
        }
        int slot = slotOf(tag);
        if (slot < 0) {
            throw new UnknownTagException(tag);
        }
        if (multiple) {
            settleThrough(tag, false, outcome);
            return;
        }
        Source source = sources[slot];
        long queueTag = queueTags[slot];
        sources[slot] = null;
        outstanding--;
        dropSettledFront();
        source.settle(queueTag, queueTag, outcome, 1);
    }

    /** Settles every outstanding delivery ({@code basic.recover}, {@code nack} of all); held ones stay held. */
    void settleAll(Outcome outcome) {
        if (size > 0) {
            settleThrough(firstTag + size - 1, false, outcome);
        }
    }

    /**
     * A transaction's ack, nack or reject: {@code tag} (or with {@code multiple}, as {@link #settle} reads it, every
     * outstanding tag up to it) is held with {@code outcome} until the commit or the rollback.
     */
    void hold(long tag, boolean multiple, Outcome outcome) throws UnknownTagException {
        long last = firstTag + size - 1;
        if (!(multiple && tag == 0)) {
            int slot = slotOf(tag);
            if (slot < 0) {
                throw new UnknownTagException(tag);
            }
            if (!multiple) {
                hold(slot, outcome);
                return;
            }
            last = tag;
        }
        int count = (int) Math.min(size, last - firstTag + 1);
        for (int i = 0; i < count; i++) {
            int slot = (head + i) & (sources.length - 1);
            if (sources[slot] != null && held[slot] == null) {
                hold(slot, outcome);
            }
        }
    }

    private void hold(int slot, Outcome outcome) {
        held[slot] = outcome;
        outstanding--;
        heldCount++;
    }

    /** The commit: every held delivery is settled with the outcome it was held with. */
    void settleHeld() {
        if (heldCount > 0) {
            settleThrough(firstTag + size - 1, true, null);
        }
    }

    /** The rollback: every held delivery is outstanding again, to be acked anew. */
    void unholdAll() {
        for (int i = 0; heldCount > 0 && i < size; i++) {
            int slot = (head + i) & (sources.length - 1);
            if (held[slot] != null) {
                held[slot] = null;
                heldCount--;
                outstanding++;
            }
        }
    }

    boolean isOutstanding(long tag) {
        return slotOf(tag) >= 0;
    }

    /** The tag of the oldest delivery the client may still settle (outstanding, not held), or -1 when none is. */
    long oldest() {
        for (int i = 0; i < size; i++) {
            int slot = (head + i) & (sources.length - 1);
            if (sources[slot] != null && held[slot] == null) {
                return firstTag + i;
            }
        }
        return -1;
    }

    /** Where the outstanding delivery {@code tag} came from. */
    Source source(long tag) {
        return sources[slotOfOutstanding(tag)];
    }

    /** When the outstanding delivery {@code tag} was delivered ({@link System#nanoTime}). */
    long deliveredAt(long tag) {
        return deliveredAt[slotOfOutstanding(tag)];
    }

    private int slotOfOutstanding(long tag) {
        int slot = slotOf(tag);
        if (slot < 0) {
            throw new IllegalArgumentException("delivery tag " + tag + " is not outstanding");
        }
        return slot;
    }

    /** The slot of an outstanding tag (neither settled nor held), or -1. */
    private int slotOf(long tag) {
        if (tag < firstTag || tag >= firstTag + size) {
            return -1;
        }
        int slot = (int) ((head + (tag - firstTag)) & (sources.length - 1));
        return sources[slot] == null || held[slot] != null ? -1 : slot;
    }

    /**
     * Settles the deliveries up to {@code lastTag} that are outstanding (with {@code outcome}) or, with
     * {@code heldOnes}, those held (each with its own), gathering each source's into ranges of queue tags.
     */
    private void settleThrough(long lastTag, boolean heldOnes, Outcome outcome) {
        boolean anyHeld = heldCount > 0; // without a transaction, none: a source's range never breaks
        int batch = 0;
        int b = -1; // the previous delivery's range: usually the next one's too
        int count = (int) Math.min(size, lastTag - firstTag + 1);
        for (int i = 0; i < count; i++) {
            int slot = (head + i) & (sources.length - 1);
            Source source = sources[slot];
            if (source == null) {
                continue;
            }
            if (b < 0 || batchSources[b] != source) {
                b = batch - 1;
                while (b >= 0 && batchSources[b] != source) {
                    b--;
                }
            }
            Outcome heldWith = anyHeld ? held[slot] : null;
            boolean stays = (heldWith != null) != heldOnes;
            Outcome settleWith = heldOnes ? heldWith : outcome;
            if (b >= 0 && (!batchOpen[b] || stays || batchOutcome[b] != settleWith)) {
                batchOpen[b] = false; // a longer range would settle this delivery too, or with the wrong outcome
                b = -1;
            }
            if (stays) {
                continue;
            }
            if (b < 0) {
                if (batch == batchSources.length) {
                    growBatch();
                }
                b = batch++;
                batchSources[b] = source;
                batchFirst[b] = queueTags[slot];
                batchCount[b] = 0;
                batchOutcome[b] = settleWith;
                batchOpen[b] = true;
            }
            batchLast[b] = queueTags[slot];
            batchCount[b]++;
            sources[slot] = null;
            if (heldWith != null) {
                held[slot] = null;
                heldCount--;
            } else {
                outstanding--;
            }
        }
        dropSettledFront();
        for (int r = 0; r < batch; r++) {
            Source source = batchSources[r];
            batchSources[r] = null;
            source.settle(batchFirst[r], batchLast[r], batchOutcome[r], batchCount[r]);
            batchOutcome[r] = null;
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
        long[] at = new long[capacity];
        Outcome[] h = new Outcome[capacity];
        for (int i = 0; i < size; i++) {
            int slot = (head + i) & (sources.length - 1);
            s[i] = sources[slot];
            t[i] = queueTags[slot];
            at[i] = deliveredAt[slot];
            h[i] = held[slot];
        }
        sources = s;
        queueTags = t;
        deliveredAt = at;
        held = h;
        head = 0;
    }

    private void growBatch() {
        int capacity = batchSources.length * 2;
        batchSources = Arrays.copyOf(batchSources, capacity);
        batchFirst = Arrays.copyOf(batchFirst, capacity);
        batchLast = Arrays.copyOf(batchLast, capacity);
        batchCount = Arrays.copyOf(batchCount, capacity);
        batchOutcome = Arrays.copyOf(batchOutcome, capacity);
        batchOpen = Arrays.copyOf(batchOpen, capacity);
    }
}
