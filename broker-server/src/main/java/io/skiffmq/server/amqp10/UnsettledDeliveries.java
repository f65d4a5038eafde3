package io.skiffmq.server.amqp10;

import io.skiffmq.codec.amqp10.AmqpDecodeException;
import io.skiffmq.codec.amqp10.AmqpError;
import io.skiffmq.codec.amqp10.DispositionPerformative;
import io.skiffmq.codec.amqp10.PerformativeCode;
import io.skiffmq.codec.amqp10.SerialNumber;
import io.skiffmq.core.queue.Outcome;
import java.util.LinkedHashMap;
import java.util.Map;
import org.apache.qpid.proton.amqp.Symbol;
import org.apache.qpid.proton.amqp.messaging.Modified;

/**
 * The deliveries a session sent unsettled, and the consumers' dispositions that settle them. Each unsettled
 * delivery's id, link and queue tag are appended to a ring, in delivery-id order (ids are handed out in order);
 * pre-settled deliveries take no room, so memory follows what is unsettled, not how far apart the ids are. A settled
 * delivery leaves a hole until the head passes it or the ring is compacted. Adding and settling allocate nothing once
 * the ring has grown.
 *
 * <p>A disposition's range is found by binary search and becomes one settlement per link: a link's tags rise with
 * the delivery-ids, so its deliveries within the range are the tags between the first and the last of them, and the
 * queue settles them in one task.
 *
 * <p>A disposition whose state is {@code transactional-state} takes its deliveries out of the ring all the same,
 * but hands their exact tag ranges to the session's {@link SessionTransactions}, which settles them at the commit.
 *
 * <p>Owned by the connection's event loop. Settlement is collected before any queue is told, so a queue on this
 * loop that redelivers at once (a release) never finds the ring half walked.
 */
final class UnsettledDeliveries {
    /** Who settles a delivery: its consumer link, which hands the tag range to its queue. */
    interface Settler {
        void settle(long firstTag, long lastTag, Outcome outcome);
    }

    private final AmqpSession session;
    private final DispositionPerformative out = new DispositionPerformative();
    private long[] ids = new long[64];
    private Settler[] links = new Settler[64];
    private long[] tags = new long[64];
    private int head;
    /** Slots in use from the head, holes included. */
    private int span;
    private int count;
    // one disposition's settlements per link, reused
    private Settler[] rangeLinks = new Settler[4];
    private long[] rangeFirst = new long[4];
    private long[] rangeLast = new long[4];
    private int ranges;
    /**
     * A transaction's ranges hold only its own deliveries: a link's range is cut where a tag is missing (settled
     * before, or held by another transaction), where plain settlement may span tags settled already.
     */
    private boolean exactRanges;

    UnsettledDeliveries(AmqpSession session) {
        this.session = session;
    }

    /** Deliveries awaiting settlement. */
    int size() {
        return count;
    }

    /** Slots the ring holds now: what it costs in memory. */
    int capacity() {
        return ids.length;
    }

    /** Adds a delivery; {@code deliveryId} comes after every id added before. */
    void add(long deliveryId, Settler link, long tag) {
        if (span > 0 && SerialNumber.diff(deliveryId, ids[slot(span - 1)]) <= 0) {
            throw new IllegalArgumentException("delivery-id " + deliveryId + " is not after the last one added");
        }
        if (span == ids.length) {
            if (count <= span / 2) {
                compact();
            } else {
                grow();
            }
        }
        int index = slot(span);
        ids[index] = deliveryId;
        links[index] = link;
        tags[index] = tag;
        span++;
        count++;
    }

    /** Forgets {@code link}'s deliveries: the link ended, and its queue takes them back. */
    void forget(Object link) {
        for (int i = 0; i < span; i++) {
            int index = slot(i);
            if (links[index] == link) {
                links[index] = null;
                count--;
            }
        }
        trim();
    }

    void clear() {
        java.util.Arrays.fill(links, null);
        span = 0;
        count = 0;
        head = 0;
    }

    private int slot(int offset) {
        return (head + offset) & (ids.length - 1);
    }

    void onDisposition(DispositionPerformative disposition) throws AmqpDecodeException {
        if (!disposition.receiverRole()) {
            // the publisher settling deliveries we settled already: nothing to do
            return;
        }
        Outcome outcome = outcomeOf(disposition);
        org.apache.qpid.proton.amqp.Binary txnId = null;
        if (outcome == null) {
            // [4.4.2] a transactional settlement: takes effect when its transaction commits
            org.apache.qpid.proton.amqp.transaction.TransactionalState txn = SessionTransactions.stateOf(disposition);
            outcome = txn == null ? null : outcomeOf(txn.getOutcome());
            if (outcome == null) {
                return;
            }
            txnId = txn.getTxnId();
            if (txnId == null || !session.transactions().isOpen(txnId)) {
                throw AmqpException.sessionError(AmqpError.TRANSACTION_UNKNOWN_ID,
                    "disposition in transaction %s, which is not open on this session",
                    txnId == null ? "(none)" : SessionTransactions.hex(txnId));
            }
        }
        long first = disposition.first();
        long last = disposition.last() < 0 ? first : disposition.last();
        if (SerialNumber.diff(last, first) < 0) {
            throw AmqpException.sessionError(AmqpError.INVALID_FIELD, "disposition last %d before first %d", last, first);
        }
        exactRanges = txnId != null;
        collect(first, last);
        for (int i = 0; i < ranges; i++) {
            if (txnId == null) {
                rangeLinks[i].settle(rangeFirst[i], rangeLast[i], outcome);
            } else {
                session.transactions().settle(txnId, rangeLinks[i], rangeFirst[i], rangeLast[i], outcome);
            }
            rangeLinks[i] = null;
        }
        ranges = 0;
        if (!disposition.settled()) {
            // rcv-settle-mode first: the consumer should have settled; we settle for it
            out.reset();
            session.writeFrame(out.receiverRole(false).first(first).last(last).settled(true)
                .state(disposition.state()));
        }
    }

    /** Takes the deliveries with ids in {@code first..last} out of the ring, as one tag range per link. */
    private void collect(long first, long last) {
        if (span == 0) {
            return;
        }
        long base = ids[head];
        long to = SerialNumber.diff(last, base);
        for (int i = firstAtOrAfter(SerialNumber.diff(first, base), base); i < span; i++) {
            int index = slot(i);
            if (SerialNumber.diff(ids[index], base) > to) {
                break;
            }
            Settler link = links[index];
            if (link != null) {
                links[index] = null;
                count--;
                addToRange(link, tags[index]);
            }
        }
        trim();
    }

    /** The offset of the first slot whose id is {@code from} or later (ids relative to {@code base}, ascending). */
    private int firstAtOrAfter(long from, long base) {
        int low = 0;
        int high = span;
        while (low < high) {
            int mid = (low + high) >>> 1;
            if (SerialNumber.diff(ids[slot(mid)], base) < from) {
                low = mid + 1;
            } else {
                high = mid;
            }
        }
        return low;
    }

    private void addToRange(Settler link, long tag) {
        for (int i = ranges - 1; i >= 0; i--) {
            if (rangeLinks[i] == link) {
                if (exactRanges && rangeLast[i] + 1 != tag) {
                    break;
                }
                rangeLast[i] = tag;
                return;
            }
        }
        if (ranges == rangeLinks.length) {
            rangeLinks = java.util.Arrays.copyOf(rangeLinks, ranges * 2);
            rangeFirst = java.util.Arrays.copyOf(rangeFirst, ranges * 2);
            rangeLast = java.util.Arrays.copyOf(rangeLast, ranges * 2);
        }
        rangeLinks[ranges] = link;
        rangeFirst[ranges] = tag;
        rangeLast[ranges] = tag;
        ranges++;
    }

    /** Advances the head past settled slots. */
    private void trim() {
        while (span > 0 && links[head] == null) {
            head = (head + 1) & (ids.length - 1);
            span--;
        }
        if (span == 0) {
            head = 0;
        }
    }

    /** Squeezes the holes out, in place of growing, when at least half the slots are holes. */
    private void compact() {
        int kept = 0;
        for (int i = 0; i < span; i++) {
            int from = slot(i);
            if (links[from] != null) {
                int to = slot(kept++);
                ids[to] = ids[from];
                links[to] = links[from];
                tags[to] = tags[from];
            }
        }
        for (int i = kept; i < span; i++) {
            links[slot(i)] = null;
        }
        span = kept;
    }

    private void grow() {
        int length = ids.length * 2;
        long[] biggerIds = new long[length];
        Settler[] biggerLinks = new Settler[length];
        long[] biggerTags = new long[length];
        for (int i = 0; i < span; i++) {
            int index = slot(i);
            biggerIds[i] = ids[index];
            biggerLinks[i] = links[index];
            biggerTags[i] = tags[index];
        }
        ids = biggerIds;
        links = biggerLinks;
        tags = biggerTags;
        head = 0;
    }

    /** The outcome a transactional state carries; null for none (transactional acquisition). */
    private static Outcome outcomeOf(org.apache.qpid.proton.amqp.messaging.Outcome state) {
        if (state instanceof org.apache.qpid.proton.amqp.messaging.Accepted) {
            return Outcome.ACCEPTED;
        } else if (state instanceof org.apache.qpid.proton.amqp.messaging.Rejected) {
            return Outcome.REJECTED;
        } else if (state instanceof org.apache.qpid.proton.amqp.messaging.Released) {
            return Outcome.RELEASED;
        } else if (state instanceof Modified m) {
            return modified(m);
        }
        return null;
    }

    /** The outcome a disposition carries; null for a non-terminal state. Settled without a state is accepted. */
    private static Outcome outcomeOf(DispositionPerformative d) throws AmqpDecodeException {
        long code = d.stateCode();
        if (code < 0) {
            // absent, or a state with a descriptor the fast path does not know: transactional-state is no outcome
            return d.settled() && !(d.state() instanceof org.apache.qpid.proton.amqp.transaction.TransactionalState)
                ? Outcome.ACCEPTED : null;
        }
        return switch ((int) code) {
            case PerformativeCode.ACCEPTED -> Outcome.ACCEPTED;
            case PerformativeCode.REJECTED -> Outcome.REJECTED;
            case PerformativeCode.RELEASED -> Outcome.RELEASED;
            case PerformativeCode.MODIFIED -> {
                yield modified((Modified) d.state());
            }
            default -> null;
        };
    }

    /**
     * A modified outcome with its message-annotations, which a quorum queue merges into the message. Their keys must
     * be symbols starting {@code x-} ("all symbolic keys except those beginning with "x-" are reserved" [3.2.10]), as
     * RabbitMQ 4.0 requires ({@code rabbit_amqp_session:settle_op_from_outcome/1}, where another key fails the
     * session).
     */
    private static Outcome modified(Modified m) {
        boolean failed = Boolean.TRUE.equals(m.getDeliveryFailed());
        boolean undeliverable = Boolean.TRUE.equals(m.getUndeliverableHere());
        Map<?, ?> given = m.getMessageAnnotations();
        if (given == null || given.isEmpty()) {
            return Outcome.modified(failed, undeliverable);
        }
        Map<String, Object> annotations = new LinkedHashMap<>();
        for (Map.Entry<?, ?> e : given.entrySet()) {
            if (!(e.getKey() instanceof Symbol key) || !key.toString().startsWith("x-")) {
                throw AmqpException.sessionError(AmqpError.INVALID_FIELD,
                    "message-annotations of a modified outcome: key %s does not start with 'x-'", e.getKey());
            }
            annotations.put(key.toString(), e.getValue());
        }
        return Outcome.modified(failed, undeliverable, annotations);
    }
}
