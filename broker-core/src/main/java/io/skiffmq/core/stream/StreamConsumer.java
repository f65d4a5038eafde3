package io.skiffmq.core.stream;

import io.netty.buffer.ByteBuf;
import io.skiffmq.codec.amqp10.SerialNumber;
import io.skiffmq.core.filter.Selector;
import io.skiffmq.core.message.Amqp10Message;
import io.skiffmq.core.message.MalformedMessageException;
import io.skiffmq.core.message.StoredRouteNames;
import io.skiffmq.core.metrics.QueueCounters;
import io.skiffmq.core.queue.ConsumerFlow;
import io.skiffmq.core.queue.ConsumerSink;
import io.skiffmq.core.queue.QueueConsumer;
import io.skiffmq.core.queue.QueueDelivery;

/**
 * One consumer of a stream: a {@link StreamCursor} from its offset specification, and how far it read into the
 * current chunk. Reading removes nothing: each consumer reads the log on its own, at its own pace. Messages are
 * read one by one from the chunk (each a slice of the log's memory, not a copy), numbered from the chunk id, those
 * below the offset asked for skipped; a sub-entry batch is read entry by entry when uncompressed and skipped when
 * compressed (its records keep their offsets), as RabbitMQ's {@code rabbit_stream_queue} reads them for 0-9-1 and
 * AMQP 1.0 consumers.
 *
 * <p>Pacing: a prefetch consumer (0-9-1) holds at most its prefetch unsettled, and a settlement of any outcome only
 * gives room back (the message stays in the stream); a credit consumer (AMQP 1.0) is paced by its credit. Tags are
 * 0, 1, 2, … per consumer.
 *
 * <p>Owned by the stream queue's thread.
 */
final class StreamConsumer {
    private static final System.Logger LOG = System.getLogger(StreamConsumer.class.getName());
    private static final int SUB_BATCH_HEADER = 11;

    final QueueConsumer handle;
    final ConsumerSink sink;
    final ConsumerFlow flow;
    final boolean preSettled;
    final StreamOffset from;
    final StreamFilterSpec filter;
    private final Selector selector;
    private final long skipBelow;
    private StreamCursor cursor;
    /** The chunk being read (retained), or null; {@link #position} is the next entry in it. */
    private ByteBuf chunk;
    private int position;
    private int end;
    /** The end of the uncompressed sub-entry batch being read, or -1. */
    private int batchEnd = -1;
    /** The offset of the next record to read. */
    private long offset;
    /** [2.6.7] a credit consumer's delivery-count and link-credit. */
    long deliveryCount;
    long credit;
    boolean drain;
    private long nextTag;
    final UnsettledTags unsettled = new UnsettledTags();
    /** The exchange and routing key of the last message read, reused while the next ones' are the same. */
    private final StoredRouteNames routeNames = new StoredRouteNames();
    /** No more deliveries (0-9-1 {@code basic.cancel}); its unsettled ones may still be settled. */
    boolean cancelled;
    boolean removed;

    StreamConsumer(StreamQueue queue, ConsumerSink sink, ConsumerFlow flow, boolean preSettled, StreamOffset from,
            StreamFilterSpec filter, Selector selector) {
        this.sink = sink;
        this.flow = flow;
        this.preSettled = preSettled;
        this.from = from;
        this.filter = filter;
        this.selector = selector;
        this.skipBelow = from.skipBelow();
        this.handle = QueueConsumer.handle(queue, sink, flow, preSettled, this);
    }

    /** Starts reading; pull consumers ({@code basic.get}, which streams refuse) read nothing. */
    void open(StreamStore store) {
        if (flow.kind() != ConsumerFlow.Kind.PULL) {
            cursor = store.cursor(from, filter);
        }
    }

    /** Pushed to: not cancelled, nor a pull consumer. */
    boolean pushed() {
        return !cancelled && !removed && cursor != null;
    }

    boolean hasRoom() {
        if (!pushed()) {
            return false;
        }
        return switch (flow.kind()) {
            case CREDIT -> credit > 0;
            case PREFETCH -> preSettled || flow.prefetch() == 0 || unsettled.count() < flow.prefetch();
            case PULL -> false;
        };
    }

    /**
     * Delivers what is committed while there is room, {@code budget} at most.
     *
     * @return the deliveries made
     */
    int pump(String stream, QueueCounters counters, int budget) {
        int delivered = 0;
        while (delivered < budget && hasRoom()) {
            Amqp10Message message = next(stream);
            if (message == null) {
                break;
            }
            if (flow.kind() == ConsumerFlow.Kind.CREDIT) {
                credit--;
                deliveryCount = SerialNumber.add(deliveryCount, 1);
            }
            long tag = nextTag++;
            if (!preSettled) {
                unsettled.add(tag);
            }
            counters.delivered(false, preSettled, false, message.size());
            delivered++;
            sink.deliver(QueueDelivery.of(message, tag, 0, -1, true, 0));
        }
        return delivered;
    }

    /** The next message for this consumer (one reference for the caller), or null when none is committed yet. */
    private Amqp10Message next(String stream) {
        while (true) {
            if (chunk == null) {
                ByteBuf data = cursor.next();
                if (data == null) {
                    return null;
                }
                chunk = data;
                position = data.readerIndex();
                end = data.writerIndex();
                batchEnd = -1;
                offset = cursor.chunkId();
            }
            if (batchEnd >= 0 && position >= batchEnd) {
                batchEnd = -1;
            }
            if (position >= end) {
                releaseChunk();
                continue;
            }
            if (batchEnd < 0 && (chunk.getByte(position) & 0x80) != 0) {
                // a sub-entry batch: 1 bit | 3 bits compression | 4 reserved | u16 records | u32 size | u32 length
                int compression = (chunk.getByte(position) >> 4) & 0x7;
                int records = chunk.getUnsignedShort(position + 1);
                int length = chunk.getInt(position + 7);
                int body = position + SUB_BATCH_HEADER;
                if (length < 0 || body + length > end) {
                    damaged(stream);
                    continue;
                }
                if (compression != 0) {
                    // compressed by a stream protocol client: not readable here, as in RabbitMQ (its records are
                    // skipped with their offsets)
                    offset += records;
                    position = body + length;
                } else {
                    position = body;
                    batchEnd = body + length;
                }
                continue;
            }
            int length = chunk.getInt(position) & 0x7fff_ffff;
            int body = position + 4;
            int limit = batchEnd >= 0 ? batchEnd : end;
            if (body + length > limit) {
                damaged(stream);
                continue;
            }
            position = body + length;
            long at = offset++;
            if (at < skipBelow) {
                continue;
            }
            Amqp10Message message;
            try {
                message = Amqp10Message.fromStream(chunk.retainedSlice(body, length), at, stream, routeNames);
            } catch (MalformedMessageException e) {
                LOG.log(System.Logger.Level.WARNING, "stream ''{0}'': the message at offset {1} is not AMQP 1.0, "
                    + "skipped: {2}", stream, at, e.getMessage());
                continue;
            }
            if (selector != null && !matches(message)) {
                message.release();
                continue;
            }
            return message;
        }
    }

    private boolean matches(Amqp10Message message) {
        try {
            return selector.matches(message);
        } catch (RuntimeException e) {
            return false; // properties that do not decode match nothing
        }
    }

    /** A chunk whose entries do not add up (checked when written and recovered: should never be): skipped whole. */
    private void damaged(String stream) {
        LOG.log(System.Logger.Level.ERROR, "stream ''{0}'': the chunk at {1} has an entry past its end; the rest "
            + "of the chunk is skipped", stream, cursor.chunkId());
        releaseChunk();
    }

    private void releaseChunk() {
        if (chunk != null) {
            chunk.release();
            chunk = null;
        }
    }

    /** Settles its tags in {@code first..last}; how many were unsettled. */
    int settle(long first, long last) {
        return unsettled.remove(first, last);
    }

    /**
     * Messages committed after those it read (RabbitMQ's {@code available} in a credit reply), counted from its
     * position whatever a filter would skip.
     */
    long available(long committedOffset) {
        if (cursor == null) {
            return 0;
        }
        return Math.max(0, committedOffset + 1 - (chunk != null ? offset : cursor.position()));
    }

    /** Lets go of the log: the chunk it holds and its cursor. */
    void close() {
        releaseChunk();
        if (cursor != null) {
            cursor.close();
            cursor = null;
        }
    }
}
