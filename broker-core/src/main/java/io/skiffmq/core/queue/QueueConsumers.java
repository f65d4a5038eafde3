package io.skiffmq.core.queue;

import java.util.ArrayList;
import java.util.List;

/**
 * A queue's consumers: every one (pull consumers too: those that may hold unsettled deliveries), the ones messages
 * are pushed to ({@link ConsumerRing}), and with {@code x-single-active-consumer} the ones waiting for their turn;
 * also the consumer that has the queue to itself (0-9-1 exclusive consume).
 *
 * <p>Owned by the queue's thread, as every part of a {@link ClassicQueue}.
 */
final class QueueConsumers {
    /** Consumers messages are pushed to (not pull consumers); with a single active consumer, that one only. */
    final ConsumerRing pushed = new ConsumerRing();
    /** Every consumer, pull consumers too. */
    final List<QueueConsumer> all = new ArrayList<>();
    /** With {@code x-single-active-consumer}: the consumers waiting for their turn, in the order they came. */
    private final List<QueueConsumer> standby = new ArrayList<>();
    private final boolean singleActive;
    private final QueueGauges gauges;
    /** The consumer that has the queue to itself, or null. */
    private QueueConsumer exclusive;

    QueueConsumers(boolean singleActive, QueueGauges gauges) {
        this.singleActive = singleActive;
        this.gauges = gauges;
    }

    /** A push consumer, exclusive or not, cannot come: another has the queue to itself, or it wants to and cannot. */
    boolean refuses(boolean wantsExclusive) {
        return exclusive != null || wantsExclusive && !pushed.isEmpty();
    }

    /** A push consumer comes: pushed to, or on standby when a single active consumer is already pushed to. */
    void push(QueueConsumer consumer, boolean wantsExclusive) {
        if (wantsExclusive) {
            exclusive = consumer;
        }
        if (singleActive && !pushed.isEmpty()) {
            standby.add(consumer); // waits its turn: it is next when those before it go
        } else {
            pushed.add(consumer);
        }
        gauges.consumers = count();
    }

    /** Takes the consumer off the list of those pushed to; false when it was not on it. */
    boolean stopPushing(QueueConsumer consumer) {
        if (exclusive == consumer) {
            exclusive = null;
        }
        if (!standby.remove(consumer)) {
            if (!pushed.remove(consumer)) {
                return false;
            }
            if (!standby.isEmpty()) {
                pushed.add(nextActive()); // single active consumer: the next in line takes over
            }
        }
        gauges.consumers = count();
        return true;
    }

    /** The standby consumer to activate: the first of the highest priority. */
    private QueueConsumer nextActive() {
        QueueConsumer next = standby.get(0);
        for (QueueConsumer candidate : standby) {
            if (candidate.priority > next.priority) {
                next = candidate;
            }
        }
        standby.remove(next);
        return next;
    }

    /** The consumers pushed to or on standby. */
    int count() {
        return pushed.size() + standby.size();
    }

    /** Deliveries unsettled, every consumer together. */
    int unsettled() {
        int unsettled = 0;
        for (QueueConsumer consumer : all) {
            unsettled += consumer.unsettled.size();
        }
        return unsettled;
    }
}
