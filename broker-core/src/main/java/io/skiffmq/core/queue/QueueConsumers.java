package io.skiffmq.core.queue;

import java.util.ArrayList;
import java.util.List;

/**
 * A queue's consumers: every one (pull consumers too: those that may hold unsettled deliveries), the ones messages
 * are pushed to ({@link ConsumerRing}), and with {@code x-single-active-consumer} the ones waiting for their turn;
 * also the consumer that has the queue to itself (0-9-1 exclusive consume).
 *
 * <p>A quorum queue's single active consumer gives way to a consumer of higher priority, as RabbitMQ 4.0's
 * {@code rabbit_fifo:activate_next_consumer/2} does: at once when it has nothing unsettled, else it stops being
 * pushed to ({@link #fading}, RabbitMQ's {@code quiescing}) and hands over once its deliveries are settled; it then
 * waits on standby, still a consumer of the queue. A classic queue's active consumer stays active until it goes, as
 * RabbitMQ's classic queue keeps it.
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
    /** A higher-priority consumer takes over from the active one (a quorum queue's single active consumer). */
    private final boolean priorityTakeover;
    /**
     * The active consumer giving way to a standby one of higher priority: no longer pushed to, it hands over once
     * its unsettled deliveries are settled ({@link #settled}); null when none is.
     */
    private QueueConsumer fading;
    private final QueueGauges gauges;
    /** The consumer that has the queue to itself, or null. */
    private QueueConsumer exclusive;

    QueueConsumers(boolean singleActive, boolean priorityTakeover, QueueGauges gauges) {
        this.singleActive = singleActive;
        this.priorityTakeover = singleActive && priorityTakeover;
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
        if (singleActive && (!pushed.isEmpty() || fading != null)) {
            standby.add(consumer); // waits its turn: it is next when those before it go
            if (priorityTakeover && fading == null) {
                takeOver();
            }
        } else {
            pushed.add(consumer);
        }
        gauges.consumers = count();
    }

    /**
     * A standby consumer of higher priority than the active one takes over: now when the active one has nothing
     * unsettled, else once it has ({@link #fading}).
     */
    private void takeOver() {
        QueueConsumer active = pushed.only();
        QueueConsumer next = highestStandby();
        if (active == null || next == null || next.priority <= active.priority) {
            return;
        }
        pushed.remove(active);
        if (active.unsettled.size() > 0) {
            fading = active;
            return;
        }
        standby.remove(next);
        standby.add(0, active); // first among its priority: it was active
        pushed.add(next);
    }

    /**
     * {@code consumer} settled deliveries: when it is the {@link #fading} one and has nothing unsettled left, it
     * hands over to the standby consumer of highest priority (or stays active when it is one).
     */
    void settled(QueueConsumer consumer) {
        if (consumer != fading || consumer.unsettled.size() > 0) {
            return;
        }
        fading = null;
        standby.add(0, consumer);
        pushed.add(nextActive());
    }

    /** Takes the consumer off the list of those pushed to; false when it was not on it. */
    boolean stopPushing(QueueConsumer consumer) {
        if (exclusive == consumer) {
            exclusive = null;
        }
        if (consumer == fading) {
            fading = null;
            if (!standby.isEmpty()) {
                pushed.add(nextActive());
            }
        } else if (!standby.remove(consumer)) {
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

    /** The standby consumer to activate, taken off standby: the first of the highest priority. */
    private QueueConsumer nextActive() {
        QueueConsumer next = highestStandby();
        standby.remove(next);
        return next;
    }

    /** The first standby consumer of the highest priority; null when none waits. */
    private QueueConsumer highestStandby() {
        QueueConsumer next = standby.isEmpty() ? null : standby.get(0);
        for (QueueConsumer candidate : standby) {
            if (candidate.priority > next.priority) {
                next = candidate;
            }
        }
        return next;
    }

    /** The consumers pushed to, fading or on standby. */
    int count() {
        return pushed.size() + standby.size() + (fading == null ? 0 : 1);
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
