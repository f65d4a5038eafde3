package io.skiffmq.core.queue;

import io.skiffmq.core.message.Message;

/**
 * One message handed to a consumer.
 *
 * @param message one reference for the consumer, which releases it once the transfer is written
 * @param sequence the queue's id for the message, to settle it with
 * @param deliveryCount failed delivery attempts so far (the header's delivery-count [3.2.1])
 * @param firstAcquirer false when the message was acquired before (and given back)
 */
public record QueueDelivery(Message message, long sequence, long deliveryCount, boolean firstAcquirer) {
}
