package io.skiffmq.server.cluster;

import io.skiffmq.core.message.MalformedMessageException;
import io.skiffmq.core.message.Message;
import io.skiffmq.core.queue.DeadLetters;
import io.skiffmq.core.queue.StoredMessage;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeMap;

/**
 * One member's replica of a replicated quorum queue: its messages by sequence, with their counts, as the group's
 * committed commands ({@link QueueCommands}) leave them. Changed on the group's apply thread; read there too, when
 * this node's live queue is built from it ({@link #messages}). Guarded by itself, for the rare read from the
 * metadata log's thread.
 */
final class QueueReplica {
    private static final System.Logger LOG = System.getLogger(QueueReplica.class.getName());
    private static final DeadLetters.Reason[] REASONS = DeadLetters.Reason.values();

    /** A message held: its stored part of the enqueue, exact, and what later commands changed. */
    static final class Entry {
        final byte[] stored;
        long deliveryCount;
        long returns;
        final long expiresAt;
        DeadLetters.Reason deadLettering;

        Entry(byte[] stored, long deliveryCount, long returns, long expiresAt) {
            this.stored = stored;
            this.deliveryCount = deliveryCount;
            this.returns = returns;
            this.expiresAt = expiresAt;
        }
    }

    private final TreeMap<Long, Entry> messages = new TreeMap<>();

    /** Applies one command of this queue; {@code in} is after the key. */
    synchronized void apply(byte kind, ByteBuffer in) {
        switch (kind) {
            case QueueCommands.ENQUEUE -> {
                long sequence = in.getLong();
                long deliveryCount = in.getLong();
                long returns = in.getLong();
                long expiresAt = in.getLong();
                byte[] stored = new byte[in.remaining()];
                in.get(stored);
                messages.put(sequence, new Entry(stored, deliveryCount, returns, expiresAt));
            }
            case QueueCommands.SETTLE -> messages.remove(in.getLong());
            case QueueCommands.RETURN -> {
                Entry entry = messages.get(in.getLong());
                if (entry != null) {
                    entry.deliveryCount = in.getLong();
                    entry.returns = in.getLong();
                }
            }
            case QueueCommands.DEAD_LETTERING -> {
                Entry entry = messages.get(in.getLong());
                int reason = in.get();
                if (entry != null && reason >= 0 && reason < REASONS.length) {
                    entry.deadLettering = REASONS[reason];
                }
            }
            default -> throw new IllegalArgumentException("unknown queue command " + kind);
        }
    }

    synchronized int size() {
        return messages.size();
    }

    /**
     * The messages held, in sequence order, as a live queue restores them: each one possibly delivered before (the
     * old leader may have), with one reference for the queue.
     */
    synchronized List<StoredMessage> messages() {
        List<StoredMessage> out = new ArrayList<>(messages.size());
        messages.forEach((sequence, entry) -> {
            Message message;
            try {
                message = QueueCommands.message(entry.stored);
            } catch (MalformedMessageException | RuntimeException e) {
                LOG.log(System.Logger.Level.ERROR, "replicated message " + sequence + " cannot be read: dropped", e);
                return;
            }
            out.add(new StoredMessage(sequence, message, entry.deliveryCount, sequence, message.priority(),
                message.ttl(), message.bodySize(), entry.expiresAt, true, entry.returns, entry.deadLettering));
        });
        return out;
    }
}
