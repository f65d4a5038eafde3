package io.skiffmq.core.queue;

/**
 * What a consumer decided about a delivery [3.4]: accepted (done), rejected (dropped; dead-lettering comes later),
 * released (back at its position, delivery count unchanged) or modified (back, with the delivery count raised
 * when delivery failed, and kept away from this consumer when undeliverable here).
 */
public record Outcome(Kind kind, boolean deliveryFailed, boolean undeliverableHere) {
    public enum Kind { ACCEPTED, REJECTED, RELEASED, MODIFIED }

    public static final Outcome ACCEPTED = new Outcome(Kind.ACCEPTED, false, false);
    public static final Outcome REJECTED = new Outcome(Kind.REJECTED, false, false);
    public static final Outcome RELEASED = new Outcome(Kind.RELEASED, false, false);
    /** {@code modified(delivery-failed=true)}: what Qpid JMS names as its consumers' default outcome. */
    public static final Outcome MODIFIED_FAILED = new Outcome(Kind.MODIFIED, true, false);

    public static Outcome modified(boolean deliveryFailed, boolean undeliverableHere) {
        return new Outcome(Kind.MODIFIED, deliveryFailed, undeliverableHere);
    }

    /** True when the message goes back to the queue. */
    public boolean requeues() {
        return kind == Kind.RELEASED || kind == Kind.MODIFIED;
    }
}
