package io.skiffmq.core.queue;

/**
 * Whether a queue was deleted, or closed because the broker is stopping (nothing more is taken, confirmed or written
 * to the log). Owned by the queue's thread; shared by the queue and its parts, which all run there.
 */
final class QueueStatus {
    boolean deleted;
    boolean closed;

    /** Deleted or closed: the queue takes, dispatches and arms nothing more. */
    boolean gone() {
        return deleted || closed;
    }
}
