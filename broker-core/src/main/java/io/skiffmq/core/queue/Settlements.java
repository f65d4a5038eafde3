package io.skiffmq.core.queue;

import io.skiffmq.core.metrics.QueueCounters;

/**
 * What a consumer's settlement does to its delivery: accepted, it leaves (and a confirm held until consumed is
 * given); rejected, it dies (dead-lettered, as RabbitMQ's {@code rejected}); released or modified, it goes back to
 * its place among the waiting messages, counted as a return and, when the outcome says so, as a failed delivery,
 * and dies past {@code x-delivery-limit} (failed deliveries for a classic queue, returns for a quorum queue); one
 * back past a length limit makes a {@code drop-head} queue drop its oldest. Once the queue
 * is deleted or closed, every settled delivery leaves.
 *
 * <p>Owned by the queue's thread, as every part of a {@link ClassicQueue}; it holds no state of its own.
 */
final class Settlements {
    /** The queue's arguments in effect: its declaration's, with its policy's ({@link #use}). */
    private QueueArguments arguments;
    private final WaitingMessages waiting;
    /** Null for a queue that keeps nothing on disk. */
    private final QueueLog log;
    private final QueueCounters counters;
    private final Departures departures;
    private final QueueStatus status;
    private final QueueLimits limits;
    /** {@code x-delivery-limit} counts every return ({@link QueueEntry#returns}), not failed deliveries only. */
    private final boolean limitsReturns;

    Settlements(QueueArguments arguments, WaitingMessages waiting, QueueLog log, QueueCounters counters,
            Departures departures, QueueStatus status, QueueLimits limits, boolean limitsReturns) {
        this.limitsReturns = limitsReturns;
        this.arguments = arguments;
        this.waiting = waiting;
        this.log = log;
        this.counters = counters;
        this.departures = departures;
        this.status = status;
        this.limits = limits;
    }

    /** Settles one unsettled delivery's entry with {@code outcome}. */
    void settle(QueueEntry entry, Outcome outcome) {
        if (outcome.kind() == Outcome.Kind.ACCEPTED) {
            counters.countAcknowledged();
        }
        if (!outcome.requeues() || status.gone()) {
            if (outcome.kind() == Outcome.Kind.ACCEPTED && entry.confirmWhenConsumed != null) {
                entry.confirmWhenConsumed.run();
                entry.confirmWhenConsumed = null;
            }
            if (outcome.discards() && !status.gone()) {
                departures.die(entry, DeadLetters.Reason.REJECTED);
            } else {
                departures.forget(entry);
            }
            return;
        }
        entry.returned();
        if (outcome.deliveryFailed()) {
            entry.failedDelivery();
        }
        // a quorum queue limits every return, as RabbitMQ 4.0's rabbit_fifo limits its acquired_count; a classic
        // queue its failed deliveries
        if (outcome.deliveryFailed() || limitsReturns) {
            long count = limitsReturns ? entry.returns : entry.deliveryCount;
            if (arguments.deliveryLimit() >= 0 && count > arguments.deliveryLimit()) {
                departures.die(entry, DeadLetters.Reason.DELIVERY_LIMIT); // failed more often than allowed: poison
                return;
            }
            if (outcome.deliveryFailed() && entry.location >= 0) {
                log.requeue(entry.sequence, entry.location, entry.deliveryCount);
            }
        }
        waiting.putBack(entry);
        limits.requeued();
    }

    /** A policy changed what is in effect. */
    void use(QueueArguments inEffect) {
        this.arguments = inEffect;
    }
}
