package io.skiffmq.core.queue;

/**
 * The consumer's side of a subscription: where a queue sends deliveries, credit replies and the news that it is
 * gone. Every method is called on the queue's thread, in order; an implementation living on another thread hands
 * them over in that order (deliveries before the credit reply that follows them), batching where it can.
 */
public interface ConsumerSink {
    /** A message for the consumer, counted against its credit or prefetch already. */
    void deliver(QueueDelivery delivery);

    /**
     * The consumer's credit after dispatching, sent when the consumer asked for an echo or a drain completed.
     *
     * @param deliveryCount the queue's delivery-count for this consumer (a 32-bit serial number)
     * @param available messages ready in the queue
     */
    void creditState(long deliveryCount, long linkCredit, long available, boolean drain);

    /**
     * The queue was deleted: nothing more will be delivered. Deliveries still unsettled may be settled; it changes
     * nothing. The consumer is expected to go ({@link Queue#unsubscribe}).
     */
    void queueDeleted();

    /** The subscription is in place; deliveries may follow. The first call of all. */
    default void subscribed() {
    }

    /**
     * The queue refused the subscription (exclusivity, see {@link Queue#subscribe}): nothing will be delivered, and
     * there is nothing to unsubscribe. The only call.
     */
    default void refused(String reason) {
    }
}
