package io.skiffmq.server.amqp10;

import io.skiffmq.codec.amqp10.AmqpDecodeException;
import io.skiffmq.codec.amqp10.AmqpError;
import io.skiffmq.codec.amqp10.DispositionPerformative;
import io.skiffmq.codec.amqp10.PerformativeCode;
import io.skiffmq.codec.amqp10.SerialNumber;
import io.skiffmq.core.queue.Outcome;
import org.apache.qpid.proton.amqp.messaging.Modified;

/**
 * The deliveries a session sent unsettled, by delivery-id, and the consumers' dispositions that settle them. Each
 * delivery's link and queue tag sit in a ring indexed by delivery-id (ids are handed out in order, so adding and
 * settling allocate nothing once the ring has grown). A disposition's range becomes one settlement per link: a
 * link's tags rise with the delivery-ids, so its deliveries within the range are the tags between the first and
 * the last of them, and the queue settles them in one task.
 *
 * <p>Owned by the connection's event loop. Settlement is collected before any queue is told, so a queue on this
 * loop that redelivers at once (a release) never finds the ring half walked.
 */
final class UnsettledDeliveries {
    private final AmqpSession session;
    private final DispositionPerformative out = new DispositionPerformative();
    private OutgoingLink[] links = new OutgoingLink[64];
    private long[] tags = new long[64];
    /** Delivery-id (a serial number) of the slot at {@link #head}. */
    private long headId;
    private int head;
    /** Slots in use from the head, settled holes and pre-settled ids included. */
    private int span;
    private int count;
    // one disposition's settlements per link, reused
    private OutgoingLink[] rangeLinks = new OutgoingLink[4];
    private long[] rangeFirst = new long[4];
    private long[] rangeLast = new long[4];
    private int ranges;

    UnsettledDeliveries(AmqpSession session) {
        this.session = session;
    }

    /** Deliveries awaiting settlement. */
    int size() {
        return count;
    }

    /** Adds a delivery; {@code deliveryId} comes after every id added before (ids in between were pre-settled). */
    void add(long deliveryId, OutgoingLink link, long tag) {
        if (span == 0) {
            headId = deliveryId;
            head = 0;
        }
        long offset = SerialNumber.diff(deliveryId, headId);
        if (offset < span) {
            throw new IllegalArgumentException("delivery-id " + deliveryId + " is not after the last one added");
        }
        while (offset >= links.length) {
            grow();
        }
        int index = (int) (head + offset) & (links.length - 1);
        links[index] = link;
        tags[index] = tag;
        span = (int) offset + 1;
        count++;
    }

    /** Forgets {@code link}'s deliveries: the link ended, and its queue takes them back. */
    void forget(Link link) {
        for (int i = 0; i < span; i++) {
            int index = (head + i) & (links.length - 1);
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

    void onDisposition(DispositionPerformative disposition) throws AmqpDecodeException {
        if (!disposition.receiverRole()) {
            // the publisher settling deliveries we settled already: nothing to do
            return;
        }
        Outcome outcome = outcomeOf(disposition);
        if (outcome == null) {
            return;
        }
        long first = disposition.first();
        long last = disposition.last() < 0 ? first : disposition.last();
        if (SerialNumber.diff(last, first) < 0) {
            throw AmqpException.sessionError(AmqpError.INVALID_FIELD, "disposition last %d before first %d", last, first);
        }
        collect(first, last);
        for (int i = 0; i < ranges; i++) {
            rangeLinks[i].settle(rangeFirst[i], rangeLast[i], outcome);
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
        long from = Math.max(0, SerialNumber.diff(first, headId));
        long to = Math.min(span - 1L, SerialNumber.diff(last, headId));
        for (long offset = from; offset <= to; offset++) {
            int index = (int) (head + offset) & (links.length - 1);
            OutgoingLink link = links[index];
            if (link != null) {
                links[index] = null;
                count--;
                addToRange(link, tags[index]);
            }
        }
        trim();
    }

    private void addToRange(OutgoingLink link, long tag) {
        for (int i = 0; i < ranges; i++) {
            if (rangeLinks[i] == link) {
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

    /** Advances the head past settled and pre-settled slots. */
    private void trim() {
        while (span > 0 && links[head] == null) {
            head = (head + 1) & (links.length - 1);
            headId = SerialNumber.add(headId, 1);
            span--;
        }
        if (span == 0) {
            head = 0;
        }
    }

    private void grow() {
        OutgoingLink[] biggerLinks = new OutgoingLink[links.length * 2];
        long[] biggerTags = new long[links.length * 2];
        for (int i = 0; i < span; i++) {
            int index = (head + i) & (links.length - 1);
            biggerLinks[i] = links[index];
            biggerTags[i] = tags[index];
        }
        links = biggerLinks;
        tags = biggerTags;
        head = 0;
    }

    /** The outcome a disposition carries; null for a non-terminal state. Settled without a state is accepted. */
    private static Outcome outcomeOf(DispositionPerformative d) throws AmqpDecodeException {
        long code = d.stateCode();
        if (code < 0) {
            return d.settled() ? Outcome.ACCEPTED : null;
        }
        return switch ((int) code) {
            case PerformativeCode.ACCEPTED -> Outcome.ACCEPTED;
            case PerformativeCode.REJECTED -> Outcome.REJECTED;
            case PerformativeCode.RELEASED -> Outcome.RELEASED;
            case PerformativeCode.MODIFIED -> {
                Modified m = (Modified) d.state();
                yield Outcome.modified(Boolean.TRUE.equals(m.getDeliveryFailed()),
                    Boolean.TRUE.equals(m.getUndeliverableHere()));
            }
            default -> null;
        };
    }
}
