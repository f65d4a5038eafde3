package io.skiffmq.core.queue;

import io.skiffmq.core.message.Message;

/**
 * One message handed to a consumer. Immutable, so it crosses from the queue's thread to the consumer's freely.
 *
 * <p>One per delivery: the counts are kept in 32 bits each, the sizes they have in the queue ({@link QueueEntry}),
 * so the object is 40 bytes with compressed references where a record of longs was 48. The delivery count is kept
 * unsigned, so every AMQP 1.0 delivery-count (a uint) comes back exactly; the returns are a queue's count, at most
 * {@link Integer#MAX_VALUE} (larger values, which no queue gives, stop there).
 */
public final class QueueDelivery {
    private final Message message;
    private final long tag;
    private final int deliveryCount;
    private final int returns;
    private final int remaining;
    private final boolean firstAcquirer;

    /**
     * @param message one reference for the consumer, which releases it once the message is written
     * @param tag the consumer's id for the delivery, to settle it with: 0, 1, 2, … in the order of delivery
     * @param deliveryCount failed delivery attempts so far (the header's delivery-count [3.2.1]), 0 to 2³²−1
     * @param returns times the message went back to the queue before, for any reason: RabbitMQ's
     *        {@code x-delivery-count} of a quorum queue's redeliveries (its {@code acquired_count}); -1 from a queue
     *        type that does not tell it (classic, stream)
     * @param firstAcquirer false when the message was acquired before (and given back): 0-9-1's {@code redelivered}
     * @param remaining messages left ready in the queue after this one (0-9-1's {@code message-count} in
     *        {@code get-ok})
     */
    public QueueDelivery(Message message, long tag, long deliveryCount, long returns, boolean firstAcquirer,
            int remaining) {
        this.message = message;
        this.tag = tag;
        this.deliveryCount = (int) deliveryCount;
        this.returns = (int) Math.max(-1, Math.min(returns, Integer.MAX_VALUE));
        this.firstAcquirer = firstAcquirer;
        this.remaining = remaining;
    }

    public Message message() {
        return message;
    }

    public long tag() {
        return tag;
    }

    public long deliveryCount() {
        return Integer.toUnsignedLong(deliveryCount);
    }

    public long returns() {
        return returns;
    }

    public boolean firstAcquirer() {
        return firstAcquirer;
    }

    public int remaining() {
        return remaining;
    }

    @Override
    public String toString() {
        return "QueueDelivery[tag=" + tag + ", deliveryCount=" + deliveryCount() + ", returns=" + returns
            + ", firstAcquirer=" + firstAcquirer + ", remaining=" + remaining + ", message=" + message + "]";
    }
}
