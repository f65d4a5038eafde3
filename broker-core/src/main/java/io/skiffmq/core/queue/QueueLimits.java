package io.skiffmq.core.queue;

import io.skiffmq.core.message.Message;

/**
 * A queue's length limits ({@code x-max-length}, {@code x-max-length-bytes}) as RabbitMQ judges them, by what waits
 * (unsettled deliveries do not count), with their overflow behaviour ({@code x-overflow}: drop-head dead-letters the
 * oldest, reject-publish refuses the arrival, reject-publish-dlx dead-letters it too); and its priority lanes
 * ({@code x-max-priority}, or a quorum queue's two). A quorum queue's messages held to be dead-lettered at least
 * once count too, as {@code rabbit_fifo:is_over_limit/1} counts its discards.
 *
 * <p>Owned by the queue's thread, as every part of a {@link ClassicQueue}; it holds no state of its own.
 */
final class QueueLimits {
    /** The queue's arguments in effect: its declaration's, with its policy's ({@link #use}). */
    private QueueArguments arguments;
    private final WaitingMessages waiting;
    private final Departures departures;
    /** Null for a classic queue. */
    private final AtLeastOnceDeadLetters dying;

    QueueLimits(QueueArguments arguments, WaitingMessages waiting, Departures departures,
            AtLeastOnceDeadLetters dying) {
        this.arguments = arguments;
        this.waiting = waiting;
        this.departures = departures;
        this.dying = dying;
    }

    /**
     * Refuses an arrival of {@code bodySize} counted bytes that would take a {@code reject-publish} or
     * {@code reject-publish-dlx} queue past a limit: its confirm is refused, and the message released or
     * dead-lettered. True when it refused it.
     */
    boolean refuses(Message message, PublishConfirm confirmed, int bodySize) {
        if (arguments.overflow() == QueueArguments.Overflow.DROP_HEAD || !wouldOverflow(bodySize)) {
            return false;
        }
        if (confirmed != null) {
            confirmed.refused();
        }
        if (arguments.overflow() == QueueArguments.Overflow.REJECT_PUBLISH_DLX) {
            departures.deadLetter(message, DeadLetters.Reason.MAXLEN, message.deliveryCount());
        } else {
            message.release();
        }
        return true;
    }

    /**
     * A message given back (requeued) may take the queue past a limit: a {@code drop-head} queue drops its oldest
     * until it is not, as RabbitMQ's classic queue does after a requeue ({@code maybe_drop_head}); a
     * {@code reject-publish} or {@code reject-publish-dlx} queue takes it back whatever its limits, as RabbitMQ's.
     */
    void requeued() {
        if (arguments.overflow() == QueueArguments.Overflow.DROP_HEAD) {
            dropHeads();
        }
    }

    /** A {@code drop-head} queue past a limit: its oldest die until it is not. */
    void dropHeads() {
        while (overLimit()) {
            departures.die(waiting.removeHead(), DeadLetters.Reason.MAXLEN);
        }
    }

    /** The queue has a length limit. */
    boolean any() {
        return arguments.maxLength() >= 0 || arguments.maxLengthBytes() >= 0;
    }

    /** A limit counts body bytes ({@code x-max-length-bytes}): the bodies' sizes are needed. */
    boolean countsBytes() {
        return arguments.maxLengthBytes() >= 0;
    }

    /**
     * Taking a message of {@code bodySize} bytes would take the queue past a length limit: a {@code reject-publish}
     * queue refuses it, as RabbitMQ's {@code will_overflow/2} does (a message too big for what is left is refused even
     * when the queue is not full).
     */
    boolean wouldOverflow(int bodySize) {
        long held = dying == null ? 0 : dying.count();
        long heldBytes = dying == null ? 0 : dying.bodyBytes();
        return arguments.maxLength() >= 0 && waiting.size() + held + 1L > arguments.maxLength()
            || arguments.maxLengthBytes() >= 0 && waiting.bodyBytes() + heldBytes + bodySize
                > arguments.maxLengthBytes();
    }

    /** Past the length limit: a {@code drop-head} queue drops its oldest. */
    private boolean overLimit() {
        return arguments.maxLength() >= 0 && waiting.size() > arguments.maxLength()
            || arguments.maxLengthBytes() >= 0 && waiting.bodyBytes() > arguments.maxLengthBytes();
    }

    /**
     * The priority lane of a message: its priority capped at {@code x-max-priority}, as RabbitMQ caps it; in a
     * quorum queue's weighted lanes, high above 4 and normal otherwise, as {@code rabbit_fifo:priority_tag/1} tells
     * them apart (no priority, as AMQP 1.0's default 4, is normal).
     */
    int lane(int priority) {
        if (waiting.weighted()) {
            return priority > 4 ? WaitingMessages.HIGH : 0;
        }
        return Math.min(priority, arguments.maxPriority());
    }

    /** A policy changed what is in effect. */
    void use(QueueArguments inEffect) {
        this.arguments = inEffect;
    }
}
