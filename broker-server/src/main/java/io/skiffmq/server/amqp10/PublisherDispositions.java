package io.skiffmq.server.amqp10;

import io.skiffmq.codec.amqp10.DispositionPerformative;
import java.util.Arrays;
import org.apache.qpid.proton.amqp.messaging.Accepted;
import org.apache.qpid.proton.amqp.transport.DeliveryState;

/**
 * The dispositions a session owes its publishers: confirmed delivery-id ranges are gathered and written just
 * before the connection flushes; other outcomes go out at once. The ranges arrive from each link's
 * {@link io.skiffmq.core.publish.Publisher} already sorted and merged; here they are kept in order and joined with
 * their neighbours as they come (links' ranges interleave little, so keeping them in order costs next to nothing).
 * Owned by the connection's event loop.
 */
final class PublisherDispositions {
    private final AmqpSession session;
    private final DispositionPerformative out = new DispositionPerformative();
    /** Accepted delivery-id ranges since the last flush, ascending by first id, none touching another. */
    private long[] firsts = new long[16];
    private long[] lasts = new long[16];
    private int count;

    PublisherDispositions(AmqpSession session) {
        this.session = session;
    }

    /** Publishers' deliveries {@code first..last} are confirmed: they are accepted in the next batch. */
    void accepted(long first, long last) {
        int at = count;
        while (at > 0 && firsts[at - 1] > first) {
            at--;
        }
        if (at > 0 && lasts[at - 1] + 1 == first) {
            lasts[at - 1] = last; // the common case: right after the last range
            joinNext(at - 1);
            return;
        }
        if (at < count && last + 1 == firsts[at]) {
            firsts[at] = first;
            return;
        }
        if (count == firsts.length) {
            firsts = Arrays.copyOf(firsts, count * 2);
            lasts = Arrays.copyOf(lasts, count * 2);
        }
        System.arraycopy(firsts, at, firsts, at + 1, count - at);
        System.arraycopy(lasts, at, lasts, at + 1, count - at);
        firsts[at] = first;
        lasts[at] = last;
        count++;
    }

    /** Joins range {@code i} with the next when they now touch. */
    private void joinNext(int i) {
        if (i + 1 < count && lasts[i] + 1 == firsts[i + 1]) {
            lasts[i] = lasts[i + 1];
            System.arraycopy(firsts, i + 2, firsts, i + 1, count - i - 2);
            System.arraycopy(lasts, i + 2, lasts, i + 1, count - i - 2);
            count--;
        }
    }

    /** The pending ranges, {@code first..last} each, in order: for tests. */
    String pending() {
        StringBuilder ranges = new StringBuilder();
        for (int i = 0; i < count; i++) {
            ranges.append(i == 0 ? "" : " ").append(firsts[i]).append("..").append(lasts[i]);
        }
        return ranges.toString();
    }

    /** Settles a publisher's delivery now with a non-accepted outcome (released, rejected). */
    void settleNow(long deliveryId, DeliveryState state) {
        out.reset();
        session.writeFrame(out.receiverRole(true).first(deliveryId).settled(true).state(state));
    }

    /** Writes the accepted ranges, one disposition each. */
    void writePending() {
        for (int i = 0; i < count; i++) {
            out.reset();
            DispositionPerformative d = out.receiverRole(true).first(firsts[i]).settled(true)
                .state(Accepted.getInstance());
            if (lasts[i] > firsts[i]) {
                d.last(lasts[i]);
            }
            session.writeFrame(d);
        }
        count = 0;
    }

    /** Drops what is pending (the session ended: the publishers' deliveries are gone with it). */
    void clear() {
        count = 0;
    }
}
