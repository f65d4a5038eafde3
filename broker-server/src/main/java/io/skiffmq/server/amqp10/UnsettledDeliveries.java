package io.skiffmq.server.amqp10;

import io.skiffmq.codec.amqp10.AmqpDecodeException;
import io.skiffmq.codec.amqp10.AmqpError;
import io.skiffmq.codec.amqp10.DispositionPerformative;
import io.skiffmq.codec.amqp10.PerformativeCode;
import io.skiffmq.codec.amqp10.SerialNumber;
import io.skiffmq.core.queue.Outcome;
import java.util.HashMap;
import java.util.Map;
import org.apache.qpid.proton.amqp.messaging.Modified;

/**
 * The deliveries a session sent unsettled, by delivery-id, and the consumers' dispositions that settle them: each
 * outcome goes back to the delivering link's queue. Owned by the connection's event loop.
 */
final class UnsettledDeliveries {
    private final AmqpSession session;
    private final Map<Long, SentDelivery> unsettled = new HashMap<>();
    private final DispositionPerformative out = new DispositionPerformative();

    UnsettledDeliveries(AmqpSession session) {
        this.session = session;
    }

    void add(long deliveryId, OutgoingLink link, long sequence) {
        unsettled.put(deliveryId, new SentDelivery(link, sequence));
    }

    /** Forgets {@code link}'s deliveries: the link ended, and its queue takes them back. */
    void forget(Link link) {
        unsettled.values().removeIf(d -> d.link == link);
    }

    void clear() {
        unsettled.clear();
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
        long count = SerialNumber.diff(last, first) + 1;
        if (count <= 0) {
            throw AmqpException.sessionError(AmqpError.INVALID_FIELD, "disposition last %d before first %d", last, first);
        }
        if (count <= unsettled.size()) {
            for (long id = first; ; id = SerialNumber.add(id, 1)) {
                settle(unsettled.remove(id), outcome);
                if (id == last) {
                    break;
                }
            }
        } else {
            unsettled.entrySet().removeIf(e -> {
                boolean inRange = SerialNumber.diff(e.getKey(), first) >= 0 && SerialNumber.diff(last, e.getKey()) >= 0;
                if (inRange) {
                    settle(e.getValue(), outcome);
                }
                return inRange;
            });
        }
        if (!disposition.settled()) {
            // rcv-settle-mode first: the consumer should have settled; we settle for it
            out.reset();
            session.writeFrame(out.receiverRole(false).first(first).last(last).settled(true)
                .state(disposition.state()));
        }
    }

    private static void settle(SentDelivery delivery, Outcome outcome) {
        if (delivery != null) {
            delivery.link.settle(delivery.sequence, outcome);
        }
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

    /** An outgoing delivery awaiting settlement. */
    private record SentDelivery(OutgoingLink link, long sequence) {
    }
}
