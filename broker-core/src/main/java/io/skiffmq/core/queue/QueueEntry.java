package io.skiffmq.core.queue;

import io.skiffmq.core.message.Message;

/**
 * A message in a queue (or only its index), with what the queue knows of its deliveries. Owned by the queue's thread.
 * One per queued message: its fields are sized to what they hold, 40 bytes with compressed references. What only some
 * entries have, an expiry, the confirm a queue with {@code x-confirm-after-consume} holds and a location in the
 * queue's log, is in a subclass ({@link Rare}, 64 bytes), so a transient message that does not expire goes without the
 * 20 bytes, and so does one whose log locates it by its sequence (a quorum queue's group log:
 * {@link QueueLog#locatesBySequence}). Made by {@link #of}.
 */
sealed class QueueEntry permits QueueEntry.Rare {
    final long sequence;
    /** Null while the message is paged out: only its {@link #location} in the log is kept. */
    Message message;
    /**
     * The publisher's confirm held until a consumer settles the message ({@code x-confirm-after-consume}), taken off
     * the entry: the caller runs or refuses it, once. Null when none is held.
     */
    PublishConfirm takeConfirm() {
        return null;
    }

    /** The priority lane it waits in, unsigned (0 unless the queue has {@code x-max-priority}, at most 255). */
    private final byte lane;
    /** Body bytes, for {@code x-max-length-bytes}. */
    final int bodySize;
    /** In the queue's ready or returned messages (not delivered and unsettled). */
    boolean queued;
    /** Failed deliveries so far; stops at {@link Integer#MAX_VALUE} ({@link #failedDelivery}). */
    int deliveryCount;
    /**
     * Times it went back to the queue for any reason (RabbitMQ 4.0's {@code acquired_count}): at least
     * {@link #deliveryCount} unless it {@link #carried} one in; stops at {@link Integer#MAX_VALUE}. A quorum queue
     * writes it to its log with every return, so a restart keeps it; a classic queue's starts again from the delivery
     * count.
     */
    int returns;
    boolean acquiredBefore;
    /** Logged where its sequence says ({@link QueueLog#locatesBySequence}): its {@link #location} is its sequence. */
    private boolean atSequence;

    private QueueEntry(long sequence, Message message, int priority, int bodySize) {
        this.sequence = sequence;
        this.message = message;
        this.lane = (byte) priority;
        this.bodySize = bodySize;
    }

    /**
     * An entry for {@code message}.
     *
     * @param expiresAt when it expires, by the queue's clock; {@link Long#MAX_VALUE} for never
     * @param confirm the publisher's confirm, held until a consumer settles the message
     *        ({@code x-confirm-after-consume}); null for none
     * @param logged the queue's log holds the message, or is about to: its {@link #location(long)} is set
     * @param atSequence the log locates it by its sequence ({@link QueueLog#locatesBySequence}): its location is
     *        its sequence, not kept apart
     */
    static QueueEntry of(long sequence, Message message, int priority, int bodySize, long expiresAt,
            PublishConfirm confirm, boolean logged, boolean atSequence) {
        if (expiresAt == Long.MAX_VALUE && confirm == null && (!logged || atSequence)) {
            QueueEntry entry = new QueueEntry(sequence, message, priority, bodySize);
            entry.atSequence = logged;
            return entry;
        }
        return new Rare(sequence, message, priority, bodySize, expiresAt, confirm);
    }

    /** Where the queue's {@link QueueLog} holds the message; -1 when it is not logged (transient). */
    long location() {
        return atSequence ? sequence : -1;
    }

    /**
     * Sets where the log holds the message (-1: nowhere).
     *
     * @throws IllegalStateException for a location in the log of an entry not made {@code logged}, or not its
     *         sequence for one logged at its sequence
     */
    void location(long location) {
        if (location >= 0 && !(atSequence && location == sequence)) {
            throw new IllegalStateException("message " + sequence + " was queued as one the log does not hold"
                + (atSequence ? " elsewhere than at its sequence" : ""));
        }
        if (location < 0) {
            atSequence = false;
        }
    }

    /** When it expires, by the queue's clock; {@link Long#MAX_VALUE} for never. */
    long expiresAt() {
        return Long.MAX_VALUE;
    }

    /** The priority lane it waits in (0 unless the queue has {@code x-max-priority}). */
    int priority() {
        return lane & 0xff;
    }

    /** One more failed delivery. */
    void failedDelivery() {
        if (deliveryCount < Integer.MAX_VALUE) {
            deliveryCount++;
        }
    }

    /** One more return to the queue, for any reason. */
    void returned() {
        if (returns < Integer.MAX_VALUE) {
            returns++;
        }
    }

    /**
     * The failed deliveries a dead-lettered message carries in from the queue it died in: its delivery count starts
     * there, its returns at 0 (RabbitMQ 4.0's quorum queue takes the {@code delivery_count} annotation into the
     * header and starts {@code acquired_count} afresh).
     */
    void carried(long count) {
        deliveryCount = (int) Math.min(count, Integer.MAX_VALUE);
    }

    /** Sets the failed deliveries a store kept for it; its returns start again from them. */
    void deliveryCount(long stored) {
        deliveryCount = (int) Math.min(stored, Integer.MAX_VALUE);
        returns = deliveryCount;
    }

    /**
     * An entry that expires, holds a confirm or is logged. A queue with {@code x-confirm-after-consume} never pages
     * (see {@code ClassicQueue}), so an entry holding a confirm is this one from publish to settlement.
     */
    static final class Rare extends QueueEntry {
        private final long expiresAt;
        private long location = -1;
        private PublishConfirm confirm;

        private Rare(long sequence, Message message, int priority, int bodySize, long expiresAt,
                PublishConfirm confirm) {
            super(sequence, message, priority, bodySize);
            this.expiresAt = expiresAt;
            this.confirm = confirm;
        }

        @Override
        long expiresAt() {
            return expiresAt;
        }

        @Override
        long location() {
            return location;
        }

        @Override
        void location(long location) {
            this.location = location;
        }

        @Override
        PublishConfirm takeConfirm() {
            PublishConfirm taken = confirm;
            confirm = null;
            return taken;
        }
    }
}
