package io.skiffmq.core.queue;

/**
 * The consumer's side of a subscription: where a queue sends deliveries and credit replies. Both methods are
 * called on the queue's thread, in order; an implementation living on another thread hands them over in that
 * order (deliveries before the credit reply that follows them).
 */
public interface ConsumerSink {
    /** A message for the consumer, counted against its credit already. */
    void deliver(QueueDelivery delivery);

    /**
     * The consumer's credit after dispatching, sent when the consumer asked for an echo or a drain completed.
     *
     * @param deliveryCount the queue's delivery-count for this consumer (a 32-bit serial number)
     * @param available messages ready in the queue
     */
    void creditState(long deliveryCount, long linkCredit, long available, boolean drain);
}
