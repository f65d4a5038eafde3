package io.skiffmq.core.queue;

import io.skiffmq.core.message.Message;
import io.skiffmq.core.metrics.QueueCounters;

/**
 * What a consumer's settlement does to its delivery: accepted, it leaves (and a confirm held until consumed is
 * given); rejected, it dies (dead-lettered, as RabbitMQ's {@code rejected}); released or modified, it goes back to
 * its place among the waiting messages, counted as a return and, when the outcome says so, as a failed delivery,
 * and dies past {@code x-delivery-limit} (failed deliveries for a classic queue, returns for a quorum queue); one
 * back past a length limit makes a {@code drop-head} queue drop its oldest. Once the queue
 * is deleted or closed, every settled delivery leaves.
 *
 * <p>A quorum queue does what RabbitMQ 4.0's {@code rabbit_fifo} does with a settlement ({@code incr_msg/3}): a
 * {@code modified} outcome's annotations are merged into the message, whether it goes back or dies (written to the
 * log again when it goes back, so a restart keeps them), and a discard counts as a failed delivery (a rejection
 * always, a {@code modified} one as its {@code delivery-failed} says), which the dead-lettered copy keeps.
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
    /**
     * A quorum queue: {@code x-delivery-limit} counts every return ({@link QueueEntry#returns}), not failed
     * deliveries only, and settlements do what {@code rabbit_fifo} does (above).
     */
    private final boolean quorum;

    Settlements(QueueArguments arguments, WaitingMessages waiting, QueueLog log, QueueCounters counters,
            Departures departures, QueueStatus status, QueueLimits limits, boolean quorum) {
        this.quorum = quorum;
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
            if (outcome.kind() == Outcome.Kind.ACCEPTED) {
                PublishConfirm confirm = entry.takeConfirm();
                if (confirm != null) {
                    confirm.run();
                }
            }
            if (outcome.discards() && !status.gone()) {
                if (quorum) {
                    if (outcome.kind() == Outcome.Kind.REJECTED || outcome.deliveryFailed()) {
                        entry.failedDelivery();
                    }
                    annotate(entry, outcome);
                }
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
        boolean annotated = quorum && annotate(entry, outcome);
        // a quorum queue limits every return, as RabbitMQ 4.0's rabbit_fifo limits its acquired_count; a classic
        // queue its failed deliveries
        if (outcome.deliveryFailed() || quorum) {
            long count = quorum ? entry.returns : entry.deliveryCount;
            if (arguments.deliveryLimit() >= 0 && count > arguments.deliveryLimit()) {
                departures.die(entry, DeadLetters.Reason.DELIVERY_LIMIT); // failed more often than allowed: poison
                return;
            }
        }
        if (annotated && entry.location() >= 0) {
            // its new bytes replace the old in the log, with its counts as they are now
            entry.location(log.relocate(entry.sequence, entry.message, entry.deliveryCount, entry.returns,
                entry.expiresAt(), entry.location()));
        } else if (quorum && entry.location() >= 0) {
            // every return, as rabbit_fifo's log has them: a restart keeps the count the delivery limit judges
            log.requeue(entry.sequence, entry.location(), entry.deliveryCount, entry.returns);
        } else if (outcome.deliveryFailed() && entry.location() >= 0) {
            log.requeue(entry.sequence, entry.location(), entry.deliveryCount);
        }
        waiting.putBack(entry);
        limits.requeued();
    }

    /** Merges a {@code modified} outcome's annotations into the entry's message; false when it has none. */
    private static boolean annotate(QueueEntry entry, Outcome outcome) {
        if (outcome.annotations() == null || entry.message == null) {
            return false;
        }
        Message annotated = entry.message.annotated(outcome.annotations());
        entry.message.release();
        entry.message = annotated;
        return true;
    }

    /** A policy changed what is in effect. */
    void use(QueueArguments inEffect) {
        this.arguments = inEffect;
    }
}
