package io.skiffmq.core.queue;

import io.skiffmq.core.metrics.QueueCounters;

/**
 * What a consumer's settlement does to its delivery: accepted, it leaves (and a confirm held until consumed is
 * given); rejected, it dies (dead-lettered, as RabbitMQ's {@code rejected}); released or modified, it goes back to
 * its place among the waiting messages, counted as a failed delivery when the outcome says so, and dies past
 * {@code x-delivery-limit}; one back past a length limit makes a {@code drop-head} queue drop its oldest. Once the queue
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

    Settlements(QueueArguments arguments, WaitingMessages waiting, QueueLog log, QueueCounters counters,
            Departures departures, QueueStatus status, QueueLimits limits) {
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
        if (outcome.deliveryFailed()) {
            entry.failedDelivery();
            if (arguments.deliveryLimit() >= 0 && entry.deliveryCount > arguments.deliveryLimit()) {
                departures.die(entry, DeadLetters.Reason.DELIVERY_LIMIT); // failed more often than allowed: poison
                return;
            }
            if (entry.location >= 0) {
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
