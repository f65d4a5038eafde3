package io.skiffmq.core.queue;

import java.util.Map;

/**
 * What a consumer decided about a delivery [3.4]: accepted (done), rejected (it dies: dead-lettered or dropped),
 * released (back at its position, delivery count unchanged) or modified (back, with the delivery count raised when
 * delivery failed; or, when undeliverable here, it dies as a rejected one does, as RabbitMQ 4 discards it).
 *
 * @param annotations a modified outcome's message-annotations, keys starting {@code x-}, values as the AMQP 1.0
 *        codec decoded them: a quorum queue merges them into the message, requeued or dead-lettered (RabbitMQ 4.0's
 *        {@code rabbit_fifo}); null for none
 */
public record Outcome(Kind kind, boolean deliveryFailed, boolean undeliverableHere, Map<String, Object> annotations) {
    public enum Kind { ACCEPTED, REJECTED, RELEASED, MODIFIED }

    public static final Outcome ACCEPTED = new Outcome(Kind.ACCEPTED, false, false, null);
    public static final Outcome REJECTED = new Outcome(Kind.REJECTED, false, false, null);
    public static final Outcome RELEASED = new Outcome(Kind.RELEASED, false, false, null);
    /** {@code modified(delivery-failed=true)}: what Qpid JMS names as its consumers' default outcome. */
    public static final Outcome MODIFIED_FAILED = new Outcome(Kind.MODIFIED, true, false, null);

    public static Outcome modified(boolean deliveryFailed, boolean undeliverableHere) {
        return new Outcome(Kind.MODIFIED, deliveryFailed, undeliverableHere, null);
    }

    /** A modified outcome with message-annotations to merge (null or empty: none). */
    public static Outcome modified(boolean deliveryFailed, boolean undeliverableHere,
            Map<String, Object> annotations) {
        return new Outcome(Kind.MODIFIED, deliveryFailed, undeliverableHere,
            annotations == null || annotations.isEmpty() ? null : annotations);
    }

    /** True when the message goes back to the queue. */
    public boolean requeues() {
        return kind == Kind.RELEASED || kind == Kind.MODIFIED && !undeliverableHere;
    }

    /**
     * True when the consumer discarded the message: rejected, or modified undeliverable-here, which RabbitMQ 4's
     * queues discard too ({@code rabbit_amqqueue_process}: {@code modify} with {@code undeliverable_here}), and which
     * the RabbitMQ AMQP 1.0 client's {@code discard(annotations)} sends.
     */
    public boolean discards() {
        return kind == Kind.REJECTED || kind == Kind.MODIFIED && undeliverableHere;
    }
}
