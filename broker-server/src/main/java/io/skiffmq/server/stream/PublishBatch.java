package io.skiffmq.server.stream;

import io.netty.buffer.ByteBuf;
import io.skiffmq.codec.stream.PublishFrame;
import io.skiffmq.codec.stream.ResponseCode;
import io.skiffmq.core.stream.StreamQueue;
import io.skiffmq.store.stream.ChunkBuilder;
import io.skiffmq.store.stream.StreamLog;
import io.skiffmq.store.stream.TrackedPublisher;

/**
 * One {@code publish} frame on its way into a stream and back. On the connection's event loop the frame is checked
 * ({@link PublishFrame#wrap}) and retained; on the stream's thread, the log's only writer, each entry is added to
 * the chunk being built as the client encoded it (copied once, from the frame into the chunk; never parsed), with its
 * filter value and, for a named producer, its publishing id for deduplication; then the frame is released and the
 * batch goes back to the connection's loop with, per message, the offset its confirm waits for or the error to
 * answer. Nothing is allocated per message; batches are reused ({@link StreamConnectionHandler}'s pool).
 *
 * <p>Sub-entry batches are checked as RabbitMQ checks them ({@code rabbit_stream_utils}): a declared uncompressed
 * size over {@code stream-max-sub-entry-batch-size}, no records, more records than 4-byte sizes fit in the
 * uncompressed size, an unknown compression (5 to 7), or compressed data of no bytes refuses that entry and every one
 * after it in the frame (0x11), so the publishing ids leave no gap.
 *
 * <p>Threads: filled on the connection's loop, run on the stream's thread, then read on the loop again; each hand-over
 * is a task queue's, so what one side wrote the other sees.
 */
final class PublishBatch implements Runnable {
    /** What {@link #offsets} holds for a message answered with an error ({@link #codes}). */
    static final long ERROR = Long.MIN_VALUE;
    /** RabbitMQ's compression types 0 to 4 (none, gzip, snappy, lz4, zstd); 5 to 7 are unassigned. */
    private static final int MAX_COMPRESSION = 4;

    private final StreamConnectionHandler connection;
    private final PublishFrame view = new PublishFrame();
    private final Runnable back = this::back;
    private StreamPublisher publisher;
    private StreamQueue queue;
    private StreamLog log;
    private long maxSubEntryBytes;
    private long[] ids = new long[128];
    private long[] offsets = new long[128];
    private ResponseCode[] codes = new ResponseCode[128];
    private int count;

    PublishBatch(StreamConnectionHandler connection) {
        this.connection = connection;
    }

    /**
     * On the connection's loop: checks {@code frame} and takes a reference to it.
     *
     * @throws io.skiffmq.codec.stream.StreamDecodeException when it is no valid publish
     */
    PublishFrame wrap(ByteBuf frame) throws io.skiffmq.codec.stream.StreamDecodeException {
        return view.wrap(frame);
    }

    /** On the connection's loop: sends the wrapped frame (retained here) to {@code publisher}'s stream. */
    void send(StreamPublisher publisher, long maxSubEntryBytes) {
        this.publisher = publisher;
        this.queue = publisher.use().queue();
        this.log = publisher.use().log();
        this.maxSubEntryBytes = maxSubEntryBytes;
        int n = view.count();
        if (ids.length < n) {
            int capacity = Integer.highestOneBit(n - 1) << 1;
            ids = new long[capacity];
            offsets = new long[capacity];
            codes = new ResponseCode[capacity];
        }
        count = n;
        view.frame().retain();
        queue.executor().run(this);
    }

    /** On the stream's thread. */
    @Override
    public void run() {
        ByteBuf frame = view.frame();
        try {
            if (!queue.writable()) {
                view.rewind();
                refuseFrom(0, ResponseCode.STREAM_DOES_NOT_EXIST, false);
            } else {
                append(frame);
            }
        } finally {
            frame.release();
        }
        connection.executor().run(back);
    }

    private void append(ByteBuf frame) {
        ChunkBuilder builder = log.chunkBuilder();
        TrackedPublisher tracked = publisher.tracked;
        ByteBuf entry = frame.duplicate();
        ByteBuf filter = frame.duplicate();
        view.rewind();
        for (int i = 0; view.next(); i++) {
            ids[i] = view.publishingId();
            if (view.isSubEntryBatch() && !acceptable()) {
                refuseFrom(i, ResponseCode.PRECONDITION_FAILED, true);
                break;
            }
            entry.setIndex(view.entryIndex(), view.entryIndex() + view.entryLength());
            ByteBuf filterValue = null;
            if (view.hasFilterValue()) {
                filterValue = filter.setIndex(view.filterValueIndex(),
                    view.filterValueIndex() + view.filterValueLength());
            }
            try {
                long before = log.nextOffset() + builder.records();
                int added = builder.addEntry(entry, filterValue, tracked, ids[i]);
                if (added == ChunkBuilder.FULL) {
                    builder.commit();
                    before = log.nextOffset();
                    added = builder.addEntry(entry, filterValue, tracked, ids[i]);
                }
                offsets[i] = added == ChunkBuilder.DUPLICATE
                    ? log.nextOffset() + builder.records() - 1 // its original's, at the latest
                    : before + view.records() - 1;
                codes[i] = null;
            } catch (IllegalArgumentException e) {
                // an entry larger than any chunk
                offsets[i] = ERROR;
                codes[i] = ResponseCode.PRECONDITION_FAILED;
            } catch (IllegalStateException e) {
                // the log failed (a full disk): nothing more is written
                refuseFrom(i, ResponseCode.INTERNAL_ERROR, true);
                break;
            }
        }
        queue.commitAfterTurn();
    }

    /** RabbitMQ's checks of a sub-entry batch ({@code validate_compressed_sub_batch}). */
    private boolean acceptable() {
        long uncompressed = view.uncompressedLength();
        int records = view.records();
        return uncompressed <= maxSubEntryBytes && records > 0 && records * 4L <= uncompressed
            && view.compression() <= MAX_COMPRESSION && (view.messageLength() > 0 || view.compression() == 0);
    }

    /**
     * Message {@code from} and every one after it in the frame are answered with {@code code}.
     *
     * @param positioned the view stands on message {@code from} (its id read); else before it
     */
    private void refuseFrom(int from, ResponseCode code, boolean positioned) {
        for (int i = from; i < count; i++) {
            if (i > from || !positioned) {
                view.next();
                ids[i] = view.publishingId();
            }
            offsets[i] = ERROR;
            codes[i] = code;
        }
    }

    /** Back on the connection's loop. */
    private void back() {
        connection.published(this);
        publisher = null;
        queue = null;
        log = null;
        connection.recycle(this);
    }

    StreamPublisher publisher() {
        return publisher;
    }

    int count() {
        return count;
    }

    long publishingId(int i) {
        return ids[i];
    }

    /** The offset message {@code i}'s confirm waits for, or {@link #ERROR}. */
    long offset(int i) {
        return offsets[i];
    }

    ResponseCode code(int i) {
        return codes[i];
    }
}
