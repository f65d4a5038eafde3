package io.skiffmq.core.queue;

import io.skiffmq.core.message.Message;

/**
 * One message handed to a consumer.
 *
 * @param message one reference for the consumer, which releases it once the message is written
 * @param tag the consumer's id for the delivery, to settle it with: 0, 1, 2, … in the order of delivery
 * @param deliveryCount failed delivery attempts so far (the header's delivery-count [3.2.1])
 * @param returns times the message went back to the queue before, for any reason: RabbitMQ's
 *        {@code x-delivery-count} of a quorum queue's redeliveries (its {@code acquired_count}); -1 from a queue type
 *        that does not tell it (classic, stream)
 * @param firstAcquirer false when the message was acquired before (and given back): 0-9-1's {@code redelivered}
 * @param remaining messages left ready in the queue after this one (0-9-1's {@code message-count} in {@code get-ok})
 */
public record QueueDelivery(Message message, long tag, long deliveryCount, long returns, boolean firstAcquirer,
        int remaining) {
}
