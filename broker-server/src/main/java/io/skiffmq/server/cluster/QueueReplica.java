package io.skiffmq.server.cluster;

import io.skiffmq.core.message.MalformedMessageException;
import io.skiffmq.core.message.Message;
import io.skiffmq.core.queue.ClassicQueue;
import io.skiffmq.core.queue.DeadLetters;
import io.skiffmq.core.queue.StoredMessage;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

/**
 * One member's replica of a replicated quorum queue: its messages by sequence, with their counts, as the group's
 * committed commands ({@link QueueCommands}) leave them. Changed on the group's apply thread; read there too, when
 * this node's live queue is built from it ({@link #messages}) and when a snapshot takes it ({@link #entries}).
 * Guarded by itself, for the rare read from the metadata log's thread. Its entries are immutable (a change replaces
 * one), so a snapshot shares them with the replica while it is written on another thread.
 *
 * <p>What a message costs here: its slot ({@link ReplicaEntries}: its sequence and a reference), the {@link Entry}
 * (24 bytes until it is delivered, returned or dead-lettered, or when it expires) and the array of its stored form
 * (format, exchange, routing key, the publisher's bytes) (docs/quorum-queues.md, "Restart time").
 */
final class QueueReplica {
    private static final System.Logger LOG = System.getLogger(QueueReplica.class.getName());
    private static final DeadLetters.Reason[] REASONS = DeadLetters.Reason.values();

    /**
     * A message held: its stored part of the enqueue, exact, and what later commands changed. Most are as they were
     * published (never delivered, returned or dead-lettered, without an expiry): those are a sequence and the stored
     * form alone (24 bytes), the others a {@link Counted} (56).
     */
    static class Entry {
        private final long sequence;
        private final byte[] stored;

        private Entry(long sequence, byte[] stored) {
            this.sequence = sequence;
            this.stored = stored;
        }

        static Entry of(long sequence, byte[] stored, long deliveryCount, long returns, long expiresAt,
                DeadLetters.Reason deadLettering) {
            return deliveryCount == 0 && returns == 0 && expiresAt == Long.MAX_VALUE && deadLettering == null
                ? new Entry(sequence, stored)
                : new Counted(sequence, stored, deliveryCount, returns, expiresAt, deadLettering);
        }

        long sequence() {
            return sequence;
        }

        byte[] stored() {
            return stored;
        }

        long deliveryCount() {
            return 0;
        }

        long returns() {
            return 0;
        }

        long expiresAt() {
            return Long.MAX_VALUE;
        }

        DeadLetters.Reason deadLettering() {
            return null;
        }

        /** Written as a snapshot holds it: the fields, then the stored form's length and bytes. */
        void write(DataOutputStream out) throws IOException {
            out.writeLong(sequence);
            out.writeLong(deliveryCount());
            out.writeLong(returns());
            out.writeLong(expiresAt());
            DeadLetters.Reason reason = deadLettering();
            out.writeByte(reason == null ? -1 : reason.ordinal());
            out.writeInt(stored.length);
            out.write(stored);
        }

        static Entry read(DataInputStream in) throws IOException {
            long sequence = in.readLong();
            long deliveryCount = in.readLong();
            long returns = in.readLong();
            long expiresAt = in.readLong();
            int reason = in.readByte();
            byte[] stored = new byte[in.readInt()];
            in.readFully(stored);
            return of(sequence, stored, deliveryCount, returns, expiresAt,
                reason >= 0 && reason < REASONS.length ? REASONS[reason] : null);
        }

        @Override
        public String toString() {
            return "Entry[" + sequence + ", " + stored.length + " B, delivered " + deliveryCount() + ", returned "
                + returns() + ", expires " + expiresAt() + ", " + deadLettering() + "]";
        }
    }

    /** An entry delivered, returned, dead-lettered or expiring. */
    private static final class Counted extends Entry {
        private final long deliveryCount;
        private final long returns;
        private final long expiresAt;
        private final DeadLetters.Reason deadLettering;

        Counted(long sequence, byte[] stored, long deliveryCount, long returns, long expiresAt,
                DeadLetters.Reason deadLettering) {
            super(sequence, stored);
            this.deliveryCount = deliveryCount;
            this.returns = returns;
            this.expiresAt = expiresAt;
            this.deadLettering = deadLettering;
        }

        @Override
        long deliveryCount() {
            return deliveryCount;
        }

        @Override
        long returns() {
            return returns;
        }

        @Override
        long expiresAt() {
            return expiresAt;
        }

        @Override
        DeadLetters.Reason deadLettering() {
            return deadLettering;
        }
    }

    private final ReplicaEntries messages = new ReplicaEntries();
    /** The numbers taken from the nodes that forward publishes here, for a live queue to drop resends by. */
    private Enqueuers enqueuers = new Enqueuers();
    /** The move that froze the queue here (docs/quorum-queues.md, "Changing members"), or 0. */
    private long frozen;
    /** The move this replica was adopted from (built by {@link #adopt}), or 0. */
    private long adopted;
    /**
     * A command changed it since its adoption: the queue is live in this group, and a late part of the adoption
     * (sent again by a leader of the group it left) must not bring back what was settled here since.
     */
    private boolean sealed;

    QueueReplica() {
    }

    QueueReplica(long frozen, long adopted, boolean sealed) {
        this.frozen = frozen;
        this.adopted = adopted;
        this.sealed = sealed;
    }

    /**
     * Applies one command of this queue; {@code in} is after the key. False when it is refused: a change of a queue
     * frozen by a move (its deposed live queue's last commands, which are then never confirmed).
     */
    synchronized boolean apply(byte kind, ByteBuffer in) {
        if (kind == QueueCommands.FREEZE) {
            frozen = in.getLong();
            return true;
        }
        if (kind == QueueCommands.UNFREEZE) {
            frozen = 0;
            return true;
        }
        if (frozen != 0) {
            return false;
        }
        sealed = adopted != 0;
        switch (kind) {
            case QueueCommands.ENQUEUE, QueueCommands.ENQUEUE_FORWARDED -> {
                if (kind == QueueCommands.ENQUEUE_FORWARDED) {
                    long enqueuer = in.getLong();
                    enqueuers.took(enqueuer, in.getLong());
                }
                long sequence = in.getLong();
                long deliveryCount = in.getLong();
                long returns = in.getLong();
                long expiresAt = in.getLong();
                byte[] stored = new byte[in.remaining()];
                in.get(stored);
                messages.put(Entry.of(sequence, stored, deliveryCount, returns, expiresAt, null));
            }
            case QueueCommands.SETTLE -> messages.remove(in.getLong());
            case QueueCommands.RETURN -> {
                Entry entry = messages.get(in.getLong());
                if (entry != null) {
                    messages.put(Entry.of(entry.sequence, entry.stored, in.getLong(), in.getLong(),
                        entry.expiresAt(), entry.deadLettering()));
                }
            }
            case QueueCommands.DEAD_LETTERING -> {
                Entry entry = messages.get(in.getLong());
                int reason = in.get();
                if (entry != null && reason >= 0 && reason < REASONS.length) {
                    messages.put(Entry.of(entry.sequence, entry.stored, entry.deliveryCount(),
                        entry.returns(), entry.expiresAt(), REASONS[reason]));
                }
            }
            default -> throw new IllegalArgumentException("unknown queue command " + kind);
        }
        return true;
    }

    /** The move that froze it, or 0. */
    synchronized long frozen() {
        return frozen;
    }

    /** The move it was adopted from, or 0. */
    synchronized long adopted() {
        return adopted;
    }

    /** What a snapshot kept of the moves: {@link #frozen}, {@link #adopted}, {@link #sealed}. */
    synchronized void marks(long frozenBy, long adoptedFrom, boolean sealedSince) {
        frozen = frozenBy;
        adopted = adoptedFrom;
        sealed = sealedSince;
    }

    synchronized boolean sealed() {
        return sealed;
    }

    /**
     * Adds entries of an adoption ({@link QueueCommands#adopt}; {@code in} after the key and the move's id) of the
     * move this replica was made for: an adoption is in parts, each idempotent, so that a move carried on by another
     * leader of the group it leaves sends its parts again into the same replica.
     */
    synchronized void adopt(long move, DataInputStream in) throws IOException {
        if (adopted != move) {
            throw new IllegalStateException("an adoption of move " + move + " into a replica of move " + adopted);
        }
        if (sealed) {
            return;
        }
        for (int count = in.readInt(); count > 0; count--) {
            Entry entry = Entry.read(in);
            messages.put(entry);
        }
    }

    synchronized int size() {
        return messages.size();
    }

    /** The entry of {@code sequence}, or null: what a live queue built from this replica reads a message from. */
    synchronized Entry get(long sequence) {
        return messages.get(sequence);
    }

    /** A copy of the numbers taken from forwarding nodes: what a snapshot writes, and a live queue starts from. */
    synchronized Enqueuers enqueuers() {
        return enqueuers.copy();
    }

    /** What a snapshot kept of the numbers taken. */
    synchronized void enqueuers(Enqueuers kept) {
        enqueuers = kept;
    }

    /** The entries held now, in sequence order: what a snapshot writes. */
    synchronized Entry[] entries() {
        return messages.toArray();
    }

    /** A replica of what a snapshot wrote: {@code count} entries in sequence order. */
    static QueueReplica read(DataInputStream in, int count) throws IOException {
        QueueReplica replica = new QueueReplica();
        for (int i = 0; i < count; i++) {
            Entry entry = Entry.read(in);
            replica.messages.put(entry);
        }
        return replica;
    }

    /**
     * The messages held, in sequence order, as a live queue restores them: each one possibly delivered before (the
     * old leader may have), with one reference for the queue.
     */
    synchronized List<StoredMessage> messages() {
        Reading reading = new Reading();
        List<StoredMessage> out = new ArrayList<>(messages.size());
        messages.forEach(entry -> {
            StoredMessage stored = reading.stored(entry);
            if (stored != null) {
                out.add(stored);
            }
        });
        return out;
    }

    /** How many messages a live queue is restored from at a time: the garbage of a go-live stays young. */
    private static final int RESTORED_AT_ONCE = 4096;

    /**
     * Restores a new live queue from a replica's {@code entries} (taken at the leader's entry), a few thousand at a
     * time, as an index: each message is read to learn its priority, TTL and body size, and let go; the queue reads
     * it again from the replica when it delivers it (its log must be a {@link ReplicatedQueueLog} of this replica).
     */
    static void restore(ClassicQueue queue, Entry[] entries) {
        Reading reading = new Reading();
        List<StoredMessage> chunk = new ArrayList<>(Math.min(entries.length, RESTORED_AT_ONCE));
        for (Entry entry : entries) {
            StoredMessage stored = reading.indexed(entry);
            if (stored != null) {
                chunk.add(stored);
            }
            if (chunk.size() == RESTORED_AT_ONCE) {
                queue.restore(chunk);
                chunk = new ArrayList<>(RESTORED_AT_ONCE);
            }
        }
        if (!chunk.isEmpty()) {
            queue.restore(chunk);
        }
    }

    /**
     * Reads replicated messages in turn: the exchange and routing key that most of a queue's messages share are
     * decoded once ({@link QueueCommands.Names}).
     */
    private static final class Reading {
        private final QueueCommands.Names exchanges = new QueueCommands.Names();
        private final QueueCommands.Names routingKeys = new QueueCommands.Names();

        /** The entry as a live queue restores it; null, logged, when its bytes cannot be read. */
        StoredMessage stored(Entry entry) {
            return read(entry, false);
        }

        /** As {@link #stored}, without the message: only its index. */
        StoredMessage indexed(Entry entry) {
            return read(entry, true);
        }

        private StoredMessage read(Entry entry, boolean indexOnly) {
            long sequence = entry.sequence;
            Message message;
            try {
                message = QueueCommands.message(entry.stored, exchanges, routingKeys);
            } catch (MalformedMessageException | RuntimeException e) {
                LOG.log(System.Logger.Level.ERROR, "replicated message " + sequence + " cannot be read: dropped", e);
                return null;
            }
            StoredMessage stored = new StoredMessage(sequence, indexOnly ? null : message, entry.deliveryCount(),
                sequence, message.priority(), message.ttl(), message.bodySize(), entry.expiresAt(), true,
                entry.returns(), entry.deadLettering());
            if (indexOnly) {
                message.release();
            }
            return stored;
        }
    }
}
