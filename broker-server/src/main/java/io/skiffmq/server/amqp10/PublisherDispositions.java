package io.skiffmq.server.amqp10;

import io.skiffmq.codec.amqp10.DispositionPerformative;
import java.util.Arrays;
import org.apache.qpid.proton.amqp.messaging.Accepted;
import org.apache.qpid.proton.amqp.transport.DeliveryState;

/**
 * The dispositions a session owes its publishers: confirmed delivery-ids are gathered and written as ranges just
 * before the connection flushes; other outcomes go out at once. Owned by the connection's event loop.
 */
final class PublisherDispositions {
    private final AmqpSession session;
    private final DispositionPerformative out = new DispositionPerformative();
    /** Delivery-ids confirmed since the last flush. */
    private long[] accepted = new long[64];
    private int acceptedCount;

    PublisherDispositions(AmqpSession session) {
        this.session = session;
    }

    /** A publisher's delivery is confirmed: it is accepted in the next batch. */
    void accepted(long deliveryId) {
        if (acceptedCount == accepted.length) {
            accepted = Arrays.copyOf(accepted, acceptedCount * 2);
        }
        accepted[acceptedCount++] = deliveryId;
    }

    /** Settles a publisher's delivery now with a non-accepted outcome (released, rejected). */
    void settleNow(long deliveryId, DeliveryState state) {
        out.reset();
        session.writeFrame(out.receiverRole(true).first(deliveryId).settled(true).state(state));
    }

    /** Writes the batched accepted dispositions, contiguous delivery-ids as one range. */
    void writePending() {
        if (acceptedCount == 0) {
            return;
        }
        Arrays.sort(accepted, 0, acceptedCount);
        int start = 0;
        for (int i = 1; i <= acceptedCount; i++) {
            if (i == acceptedCount || accepted[i] != accepted[i - 1] + 1) {
                out.reset();
                DispositionPerformative d = out.receiverRole(true).first(accepted[start]).settled(true)
                    .state(Accepted.getInstance());
                if (i - 1 > start) {
                    d.last(accepted[i - 1]);
                }
                session.writeFrame(d);
                start = i;
            }
        }
        acceptedCount = 0;
    }

    /** Drops what is pending (the session ended: the publishers' deliveries are gone with it). */
    void clear() {
        acceptedCount = 0;
    }
}
