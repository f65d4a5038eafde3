package io.skiffmq.core.stream;

import io.netty.buffer.ByteBuf;
import java.util.function.LongConsumer;

/**
 * What keeps a stream's messages: its append-only log, with dense offsets 0, 1, 2, … per message, chunks, retention
 * and durability. The store module implements it on its stream log ({@code io.skiffmq.store.stream}), which also
 * serves what this interface does not (the stream protocol's whole-chunk reads without a copy, named producers'
 * deduplication, stored offsets: see docs/streams.md).
 *
 * <p>Threads: the writing methods ({@link #add}, {@link #commit}, {@link #applyRetention}, {@link #close},
 * {@link #delete}) on one thread at a time, the stream queue's; the others on any thread.
 */
public interface StreamStore {
    /**
     * Adds a message to the chunk being built (copied: the caller keeps its buffer).
     *
     * @param message the message's bytes (AMQP 1.0, one entry); not moved, not released
     * @param filterValue its filter value's UTF-8 bytes (the readable ones), or null for none
     * @return the offset the message takes once its chunk is written (counting whatever else the chunk holds,
     *         added through the log itself too), or -1 when the chunk is full: {@link #commit}, then add it again
     * @throws IllegalArgumentException when the message is larger than any chunk
     */
    long add(ByteBuf message, ByteBuf filterValue);

    /**
     * Writes the chunk built so far (nothing when it is empty). It is committed, readable and safe to confirm, as
     * the sync policy says: at once, or once synced ({@link #addCommitListener}).
     *
     * @return the chunk's id (the offset of its first message), or -1 when it was empty
     * @throws IllegalStateException when the log failed or is closed: nothing more is written
     */
    long commit();

    /** The offset of the first message still kept (retention moves it on). */
    long firstOffset();

    /** The last committed offset, -1 when none: messages up to it may be read and confirmed. */
    long committedOffset();

    /** Segments the log has on disk. */
    int segmentCount();

    /** Bytes the log's segments use (what {@code x-max-length-bytes} limits). */
    long bytes();

    /**
     * Retention by size ({@code maxLengthBytes}, 0: none) and age ({@code maxAgeMillis}, 0: none), and the size
     * segments roll at ({@code maxSegmentBytes}, 0: the log's default): a policy changed them. The writer's.
     */
    void retention(long maxLengthBytes, long maxAgeMillis, long maxSegmentBytes);

    /** Deletes the segments retention no longer keeps (by size and by age); how many it deleted. */
    int applyRetention();

    /**
     * Adds a listener told each new committed offset: on the writing thread when a commit is at once, on the
     * store's sync thread otherwise. It must not block.
     */
    void addCommitListener(LongConsumer committed);

    /**
     * A reader from {@code from}, skipping the chunks {@code filter} rules out.
     *
     * @param filter null to read every chunk
     */
    StreamCursor cursor(StreamOffset from, StreamFilterSpec filter);

    /** Seals and closes the log; what was added and not committed is dropped. */
    void close();

    /** Closes the log and deletes it: the stream is gone. */
    void delete();
}
