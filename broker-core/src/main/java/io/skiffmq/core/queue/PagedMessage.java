package io.skiffmq.core.queue;

import io.skiffmq.core.message.Message;

/**
 * A message read back from a {@link PageFile}, with what its queue entry knew of it when it was paged.
 *
 * @param message one reference, for the caller
 * @param location where the queue's log holds it too, -1 for none
 * @param expiresAt by the queue's clock, {@link Long#MAX_VALUE} for never
 */
public record PagedMessage(long sequence, Message message, long deliveryCount, boolean acquiredBefore, long location,
        long expiresAt, int bodySize) {
}
