package io.skiffmq.server.amqp10;

import io.netty.channel.Channel;
import io.netty.util.AttributeKey;
import java.nio.ByteBuffer;
import org.apache.qpid.proton.amqp.Binary;

/**
 * What one connection's AMQP 1.0 transactions share, across its sessions: the bytes of messages they hold until
 * their discharge (limited by {@code max-transaction-bytes}) and the numbering of their txn-ids, so that an id is
 * never reused while the connection lives [4.5.4]. Kept as an attribute of the connection's Netty channel, so the
 * connection handler needs no field for it.
 *
 * <p>Owned by the connection's event loop; not thread-safe.
 */
final class TransactionBudget {
    private static final AttributeKey<TransactionBudget> KEY = AttributeKey.valueOf(TransactionBudget.class,
        "transactions");

    private final long maxBytes;
    private long heldBytes;
    private long nextId;

    private TransactionBudget(long maxBytes) {
        this.maxBytes = maxBytes;
    }

    /** The budget of the connection whose channel that is, made on first use. */
    static TransactionBudget of(Channel channel, long maxBytes) {
        TransactionBudget budget = channel.attr(KEY).get();
        if (budget == null) {
            budget = new TransactionBudget(maxBytes);
            channel.attr(KEY).set(budget);
        }
        return budget;
    }

    /**
     * A new txn-id: 8 bytes, a counter of this connection's. An opaque binary to the client [4.5.4]; 8 bytes as
     * Artemis' ids are, short enough to cost nothing in each transactional transfer and disposition.
     */
    Binary nextId() {
        return new Binary(ByteBuffer.allocate(Long.BYTES).putLong(nextId++).array());
    }

    /** Takes {@code bytes} more for a held message; false (and nothing taken) when that would pass the limit. */
    boolean take(long bytes) {
        if (heldBytes + bytes > maxBytes) {
            return false;
        }
        heldBytes += bytes;
        return true;
    }

    /** Gives back bytes taken by messages that are published or dropped. */
    void giveBack(long bytes) {
        heldBytes -= bytes;
    }

    long heldBytes() {
        return heldBytes;
    }

    long maxBytes() {
        return maxBytes;
    }
}
