package io.skiffmq.core.queue;

import io.skiffmq.core.message.Message;

/**
 * One message handed to a consumer. Immutable, so it crosses from the queue's thread to the consumer's freely.
 *
 * <p>One per delivery, so made in two forms by {@link #of}: a first delivery from a queue that does not count returns
 * (the usual one from a classic queue or a stream: no failed delivery, acquired first, pushed) is the message and its
 * tag alone, 24 bytes with compressed references; any other keeps its counts ({@link WithCounts}, 40 bytes), in 32
 * bits each as {@link QueueEntry} does. The delivery count is kept unsigned, so every AMQP 1.0 delivery-count (a uint)
 * comes back exactly; the returns are a queue's count, at most {@link Integer#MAX_VALUE} (larger values, which no queue
 * gives, stop there).
 */
public sealed class QueueDelivery permits QueueDelivery.WithCounts {
    private final Message message;
    private final long tag;

    private QueueDelivery(Message message, long tag) {
        this.message = message;
        this.tag = tag;
    }

    /**
     * @param message one reference for the consumer, which releases it once the message is written
     * @param tag the consumer's id for the delivery, to settle it with: 0, 1, 2, … in the order of delivery
     * @param deliveryCount failed delivery attempts so far (the header's delivery-count [3.2.1]), 0 to 2³²−1
     * @param returns times the message went back to the queue before, for any reason: RabbitMQ's
     *        {@code x-delivery-count} of a quorum queue's redeliveries (its {@code acquired_count}); -1 from a queue
     *        type that does not tell it (classic, stream)
     * @param firstAcquirer false when the message was acquired before (and given back): 0-9-1's {@code redelivered}
     * @param remaining for a get, messages left ready in the queue after this one (0-9-1's {@code message-count} in
     *        {@code get-ok}); 0 for a delivery pushed to a consumer
     */
    public static QueueDelivery of(Message message, long tag, long deliveryCount, long returns, boolean firstAcquirer,
            int remaining) {
        return deliveryCount == 0 && returns == -1 && firstAcquirer && remaining == 0 ? new QueueDelivery(message, tag)
            : new WithCounts(message, tag, deliveryCount, returns, firstAcquirer, remaining);
    }

    public final Message message() {
        return message;
    }

    public final long tag() {
        return tag;
    }

    public long deliveryCount() {
        return 0;
    }

    public long returns() {
        return -1;
    }

    public boolean firstAcquirer() {
        return true;
    }

    public int remaining() {
        return 0;
    }

    @Override
    public String toString() {
        return "QueueDelivery[tag=" + tag + ", deliveryCount=" + deliveryCount() + ", returns=" + returns()
            + ", firstAcquirer=" + firstAcquirer() + ", remaining=" + remaining() + ", message=" + message + "]";
    }

    /** A delivery that was tried before, was acquired before, counts returns, or answers a get. */
    static final class WithCounts extends QueueDelivery {
        private final int deliveryCount;
        private final int returns;
        private final int remaining;
        private final boolean firstAcquirer;

        private WithCounts(Message message, long tag, long deliveryCount, long returns, boolean firstAcquirer,
                int remaining) {
            super(message, tag);
            this.deliveryCount = (int) deliveryCount;
            this.returns = (int) Math.max(-1, Math.min(returns, Integer.MAX_VALUE));
            this.firstAcquirer = firstAcquirer;
            this.remaining = remaining;
        }

        @Override
        public long deliveryCount() {
            return Integer.toUnsignedLong(deliveryCount);
        }

        @Override
        public long returns() {
            return returns;
        }

        @Override
        public boolean firstAcquirer() {
            return firstAcquirer;
        }

        @Override
        public int remaining() {
            return remaining;
        }
    }
}
