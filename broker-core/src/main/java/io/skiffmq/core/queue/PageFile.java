package io.skiffmq.core.queue;

import io.skiffmq.core.message.Message;

/**
 * Where one priority lane of a queue keeps the messages that arrived past its memory limit: a file read back in
 * the order it was written, with nothing in memory per message. The store implements it (not synced, gone at a
 * restart); see {@link QueuePages}. Owned by the queue's thread, like the queue; not thread-safe.
 */
public interface PageFile {
    /**
     * Appends a message. Its bytes are copied: the caller keeps its reference.
     *
     * @param location where the queue's {@link QueueLog} holds it as well (a durable message), or -1
     * @throws java.io.UncheckedIOException when it could not be written (nothing was appended)
     */
    void append(long sequence, Message message, long deliveryCount, boolean acquiredBefore, long location,
            long expiresAt, int bodySize);

    /**
     * Reads the oldest message not read yet, and moves past it.
     *
     * @return the message, or null when every appended one was read
     * @throws java.io.UncheckedIOException when reading failed
     * @throws QueueLog.Unreadable when the file holds no good copy of the next message
     */
    PagedMessage read();

    /**
     * Copies forward in {@code log} (see {@link QueueLog#relocate}) every unread message whose location is in
     * {@code [0, before)}, and keeps their new locations.
     *
     * @return how many were copied
     */
    int relocate(long before, QueueLog log);

    /**
     * Drops every unread message; {@code removed}, when not null, hears the sequence and location of each that has a
     * location (so the queue can tell its log), in order.
     */
    void clear(Removed removed);

    /** Drops everything and deletes the file; the page file is not used again. */
    void delete();

    /** Hears a dropped message that its log holds. */
    @FunctionalInterface
    interface Removed {
        void removed(long sequence, long location);
    }
}
