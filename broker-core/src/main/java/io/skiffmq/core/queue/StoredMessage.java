package io.skiffmq.core.queue;

import io.skiffmq.core.message.Message;

/**
 * A message of a durable queue as recovered from its {@link QueueLog}, to {@link ClassicQueue#restore}.
 *
 * @param message one reference, which the queue takes over; null when only the index was recovered (the queue reads
 *        the message from its log when it dispatches it)
 * @param deliveryCount failed deliveries recorded before the restart
 * @param location where the log holds it
 * @param priority the message's priority (0..255)
 * @param ttl the message's own TTL in milliseconds, -1 for none
 * @param bodySize its body bytes
 */
public record StoredMessage(long sequence, Message message, long deliveryCount, long location, int priority,
        long ttl, int bodySize) {
}
