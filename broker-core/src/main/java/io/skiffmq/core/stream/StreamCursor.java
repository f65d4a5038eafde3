package io.skiffmq.core.stream;

import io.netty.buffer.ByteBuf;

/**
 * Reads a stream's chunks of messages in order, from an offset specification, skipping the chunks a filter rules
 * out, up to the last committed one; it tails the stream: {@link #next} is null until more is committed
 * ({@link StreamStore#addCommitListener} says when). The store's reader behind it goes on through segments that
 * retention deletes under it.
 *
 * <p>Used by one thread at a time (the stream queue's); close it to let go of the log.
 */
public interface StreamCursor extends AutoCloseable {
    /**
     * The next chunk's data, or null when none is committed yet.
     *
     * @return the chunk's entries as stored ({@code 0 bit | u31 length | body} for a message, or a sub-entry batch),
     *         over the log's memory, not copied: one reference for the caller, which releases it once; valid as
     *         long as it is held, whatever retention deletes meanwhile
     */
    ByteBuf next();

    /** The offset of the first record of the chunk {@link #next} returned last. */
    long chunkId();

    /** The offset of the next chunk it will look at (the stream's next offset when it is at the end). */
    long position();

    @Override
    void close();
}
