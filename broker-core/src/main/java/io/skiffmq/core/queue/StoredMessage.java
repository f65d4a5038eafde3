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
 * @param expiresAt when it expires by the queue's clock, {@link Long#MAX_VALUE} for never, or {@link #EXPIRY_UNKNOWN}
 *        when the log did not record it (written by a broker from before): its TTL then counts from the restart
 * @param deliveredBefore it may have been delivered before the restart: all are after a crash, as the log records
 *        no delivery; after a clean stop, those the queue said it had delivered ({@link QueueLog#stopped})
 * @param returns times it went back to its queue before the restart, -1 when the log kept only its delivery count
 *        (which then stands for it)
 * @param deadLettering why it died, when it was waiting to be dead-lettered at least once
 *        ({@link QueueLog#deadLettering}); null for a message of the queue
 */
public record StoredMessage(long sequence, Message message, long deliveryCount, long location, int priority,
        long ttl, int bodySize, long expiresAt, boolean deliveredBefore, long returns,
        DeadLetters.Reason deadLettering) {
    /** {@link #expiresAt} of a message whose log did not record when it expires. */
    public static final long EXPIRY_UNKNOWN = -1;
}
