package io.skiffmq.server.stream;

import io.skiffmq.core.stream.StreamOffset;
import io.skiffmq.store.stream.StreamChunk;
import io.skiffmq.store.stream.StreamFilter;
import io.skiffmq.store.stream.StreamReader;
import java.util.Map;

/**
 * One subscription of a connection: a reader of its stream's log from an offset specification, through its filter,
 * sending whole chunks as stored while it has credit. Credit counts chunks, as RabbitMQ counts it: each chunk sent
 * takes one, whatever its messages. A single active consumer that is not active has no reader ({@link #active}
 * false): the credit it is given waits.
 *
 * <p>Owned by the connection's event loop; its reader is used there only.
 */
final class Subscription {
    private final int id;
    private final StreamUse use;
    private final StreamOffset offset;
    private final StreamFilter filter;
    private final Map<String, String> properties;
    private final StreamConnectionHandler connection;
    /** Null while a single active consumer waits to become active, and once closed. */
    private StreamReader reader;
    private int credit;
    /** A single active consumer's group, or null. */
    ConsumerGroups.Member member;
    private long chunks;
    private long messages;
    /** The offset of the last message sent, -1 before any. */
    private long lastOffset = -1;

    Subscription(int id, StreamUse use, StreamOffset offset, StreamFilter filter, int credit,
            Map<String, String> properties, StreamConnectionHandler connection) {
        this.id = id;
        this.use = use;
        this.offset = offset;
        this.filter = filter;
        this.credit = credit;
        this.properties = properties;
        this.connection = connection;
    }

    int id() {
        return id;
    }

    StreamUse use() {
        return use;
    }

    StreamOffset offset() {
        return offset;
    }

    Map<String, String> properties() {
        return properties;
    }

    /** True while it has a reader: it is no single active consumer, or the active one. */
    boolean active() {
        return reader != null;
    }

    /**
     * Starts reading from {@code from} (its subscription's offset, or the one a newly active consumer answered).
     *
     * @throws IllegalStateException when the log is closed (the stream was deleted)
     */
    void open(StreamOffset from) {
        close();
        reader = use.log().reader(from, filter);
    }

    /** Stops reading (unsubscribed, deactivated, or the connection or stream went). */
    void close() {
        if (reader != null) {
            reader.close();
            reader = null;
        }
    }

    void addCredit(int more) {
        credit = (int) Math.min(Integer.MAX_VALUE, (long) credit + more);
    }

    int credit() {
        return credit;
    }

    /**
     * Sends committed chunks while it has credit and the socket takes more; the rest when credit comes, the log
     * commits more, or the socket drains.
     */
    void pump() {
        if (reader == null) {
            return;
        }
        while (credit > 0 && connection.writable()) {
            StreamChunk chunk = reader.next();
            if (chunk == null) {
                return;
            }
            credit--;
            connection.deliver(id, chunk, use.log().committedChunkId());
            chunks++;
            long records = chunk.records();
            messages += records;
            lastOffset = chunk.chunkId() + records - 1;
        }
    }

    long chunksSent() {
        return chunks;
    }

    long messagesSent() {
        return messages;
    }

    long lastOffset() {
        return lastOffset;
    }
}
