package io.skiffmq.core.queue;

import io.skiffmq.core.message.Message;

/** A message in a queue (or only its index), with what the queue knows of its deliveries. Owned by the queue's thread. */
final class QueueEntry {
    final long sequence;
    /** Null while the message is paged out: only its {@link #location} in the log is kept. */
    Message message;
    /** The priority lane it waits in (0 unless the queue has {@code x-max-priority}). */
    final int priority;
    /** Body bytes, for {@code x-max-length-bytes}. */
    final int bodySize;
    /** When it expires, by the queue's clock; {@link Long#MAX_VALUE} for never. */
    final long expiresAt;
    /** In the queue's ready or returned messages (not delivered and unsettled). */
    boolean queued;
    long deliveryCount;
    /**
     * Times it went back to the queue for any reason (RabbitMQ 4.0's {@code acquired_count}): at least
     * {@link #deliveryCount}. Kept in memory; a restart or a page-out starts it again from the delivery count.
     */
    long returns;
    boolean acquiredBefore;
    /** Where the queue's {@link QueueLog} holds the message; -1 when it is not logged (transient). */
    long location = -1;
    /** The publisher's confirm, held until a consumer settles the message ({@code x-confirm-after-consume}). */
    PublishConfirm confirmWhenConsumed;

    QueueEntry(long sequence, Message message, int priority, int bodySize, long expiresAt) {
        this.sequence = sequence;
        this.message = message;
        this.priority = priority;
        this.bodySize = bodySize;
        this.expiresAt = expiresAt;
    }
}
