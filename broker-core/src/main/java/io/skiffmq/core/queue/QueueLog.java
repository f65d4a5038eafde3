package io.skiffmq.core.queue;

import io.skiffmq.core.message.Message;

/**
 * Where a durable queue records what happens to its durable messages, so a restart can rebuild it. The store
 * implements it; a transient queue has none. Every method is called on the queue's thread, in the order things
 * happened, and the log keeps that order on disk for the records of each message (it may write a removal later
 * than records of other messages, gathering removals into one record).
 *
 * <p>A {@code location} is the log's opaque handle for where a message's bytes lie; the queue keeps it with the
 * entry and passes it back, so the log can tell when a stretch of disk holds nothing live.
 */
public interface QueueLog {
    /**
     * Writes a message that entered the queue.
     *
     * @param expiresAt when it expires by the queue's clock, {@link Long#MAX_VALUE} for never: a restart keeps
     *        counting its TTL from its arrival
     * @param durable runs, on any thread, once the record is as durable as the log promises; may be null
     * @return the message's location
     */
    long publish(long sequence, Message message, long deliveryCount, long expiresAt, Runnable durable);

    /**
     * As {@link #publish(long, Message, long, long, Runnable)}, with the times it went back to its queue when they
     * differ from its delivery count (a quorum queue's, {@link QueueEntry#returns}); a log that keeps no such count
     * drops it.
     */
    default long publish(long sequence, Message message, long deliveryCount, long returns, long expiresAt,
            Runnable durable) {
        return publish(sequence, message, deliveryCount, expiresAt, durable);
    }

    /**
     * Copies a live message forward to where the log now writes, so the stretch holding {@code location} can be
     * reclaimed (see {@link ClassicQueue#relocate}). Nothing waits for it to be durable: the old copy stays until
     * the new one is.
     *
     * @return the message's new location
     */
    long relocate(long sequence, Message message, long deliveryCount, long expiresAt, long location);

    /** As {@link #relocate(long, Message, long, long, long)}, with its returns as {@link #publish} takes them. */
    default long relocate(long sequence, Message message, long deliveryCount, long returns, long expiresAt,
            long location) {
        return relocate(sequence, message, deliveryCount, expiresAt, location);
    }

    /** The message went back to the queue after a failed delivery: its delivery count is now {@code deliveryCount}. */
    void requeue(long sequence, long location, long deliveryCount);

    /**
     * The message went back to the queue, for any reason: its delivery count is now {@code deliveryCount} and its
     * returns {@code returns}, as a quorum queue counts them; a log that keeps no returns writes
     * {@link #requeue(long, long, long)}.
     */
    default void requeue(long sequence, long location, long deliveryCount, long returns) {
        requeue(sequence, location, deliveryCount);
    }

    /**
     * The message died in a queue that dead-letters at least once and waits there, not delivered, until its
     * dead-letter queues confirm it ({@link AtLeastOnceDeadLetters}): a restart gives it back to be dead-lettered,
     * not as a message of the queue. A log that keeps no such record drops it (the message then comes back as one).
     */
    default void deadLettering(long sequence, long location, DeadLetters.Reason reason) {
    }

    /** True once the message at {@code location} can be {@link #read} back, so the queue may let go of its bytes. */
    boolean isWritten(long location);

    /**
     * True when the log's location of every message it holds is the message's sequence (a quorum queue's group log),
     * so that a queue's entry need not keep it apart.
     */
    default boolean locatesBySequence() {
        return false;
    }

    /**
     * Whether the queue delivers a message only once this log has committed it: a replicated quorum queue's, as
     * rabbit_fifo delivers only what its log applied. Such a log then calls {@code committedThrough}, on the
     * queue's thread, with the highest sequence it has committed (it commits in sequence order). Asked once, when
     * the queue is made.
     */
    default boolean deliversCommitted(java.util.function.LongConsumer committedThrough) {
        return false;
    }

    /**
     * Reads a message back from the log, for a queue that kept only its index.
     *
     * @return a new message (one reference, for the caller)
     * @throws Unreadable when the log holds no good copy of it (damaged disk: nothing else should); any other
     *         exception is a failure to read now (files, memory) that a later attempt may get past
     */
    Message read(long sequence, long location);

    /** Runs {@code action}, on any thread, once every record written so far {@link #isWritten is written}. */
    void whenWritten(Runnable action);

    /**
     * True when the log already has the message a publish confirmed by {@code confirm} resends ({@link
     * ForwardedConfirm}): the queue drops it, and the log confirms it once the first copy is as durable as it
     * promises (or refuses it, when that copy never is). A log that keeps no publishers' numbers has none.
     */
    default boolean duplicate(PublishConfirm confirm) {
        return false;
    }

    /** The log holds no readable copy of a message: it is lost, and retrying cannot bring it back. */
    final class Unreadable extends RuntimeException {
        private static final long serialVersionUID = 1L;

        public Unreadable(String message, Throwable cause) {
            super(message, cause);
        }
    }

    /** The message left the queue for good (accepted, rejected, purged, expired). */
    void remove(long sequence, long location);

    /** The queue was deleted: every message of it is gone. */
    void deleted();

    /**
     * The broker stops cleanly and the queue with it, holding these messages that had been delivered before (an
     * ascending run of {@code count} sequences): a restart marks them, and only them, as redelivered. Nothing is
     * written for the queue afterwards.
     */
    void stopped(long[] deliveredBefore, int count);
}
