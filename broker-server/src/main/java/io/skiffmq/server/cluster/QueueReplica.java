package io.skiffmq.server.cluster;

import io.skiffmq.core.message.MalformedMessageException;
import io.skiffmq.core.message.Message;
import io.skiffmq.core.queue.ClassicQueue;
import io.skiffmq.core.queue.DeadLetters;
import io.skiffmq.core.queue.StoredMessage;
import java.io.DataInput;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

/**
 * One member's replica of a replicated quorum queue: its messages by sequence, with their counts, as the group's
 * committed commands ({@link QueueCommands}) leave them. Changed on the group's apply thread; read there too, when
 * this node's live queue is built from it and when a snapshot takes it ({@link #held}). Guarded by itself, for the
 * reads of a live queue's thread ({@link #message}) and the metadata log's. What {@link #held} returns is immutable
 * (a snapshot written on another thread reads it while the replica goes on).
 *
 * <p>What a message costs here: its slots in {@link ReplicaEntries} (sequence and location, 16 bytes; its counts
 * beside them once any message has some), and its stored form (format, exchange, routing key, the publisher's bytes)
 * with a 4-byte length in one of the replica's {@link ReplicaSlabs}: no object of its own while it is as published,
 * so that the collector's work at a restart does not grow with the messages (docs/quorum-queues.md, "Restart time").
 */
final class QueueReplica {
    private static final System.Logger LOG = System.getLogger(QueueReplica.class.getName());
    private static final DeadLetters.Reason[] REASONS = DeadLetters.Reason.values();

    /**
     * What later commands changed of a message: its delivery count, returns, expiry and dead-lettering mark. Null for
     * a message as published (never delivered, returned or dead-lettered, without an expiry), which most are.
     * Immutable: a change makes another.
     */
    static final class Counts {
        private final long deliveryCount;
        private final long returns;
        private final long expiresAt;
        private final DeadLetters.Reason deadLettering;

        private Counts(long deliveryCount, long returns, long expiresAt, DeadLetters.Reason deadLettering) {
            this.deliveryCount = deliveryCount;
            this.returns = returns;
            this.expiresAt = expiresAt;
            this.deadLettering = deadLettering;
        }

        /** The counts, or null when they are a message's as published. */
        static Counts of(long deliveryCount, long returns, long expiresAt, DeadLetters.Reason deadLettering) {
            return deliveryCount == 0 && returns == 0 && expiresAt == Long.MAX_VALUE && deadLettering == null
                ? null
                : new Counts(deliveryCount, returns, expiresAt, deadLettering);
        }

        static long deliveryCount(Counts counts) {
            return counts == null ? 0 : counts.deliveryCount;
        }

        static long returns(Counts counts) {
            return counts == null ? 0 : counts.returns;
        }

        static long expiresAt(Counts counts) {
            return counts == null ? Long.MAX_VALUE : counts.expiresAt;
        }

        static DeadLetters.Reason deadLettering(Counts counts) {
            return counts == null ? null : counts.deadLettering;
        }
    }

    /** The most messages a snapshot's count makes room for at once: a damaged count fails the read, not the heap. */
    private static final int PRESIZED_AT_MOST = 1 << 23;

    private final ReplicaEntries messages;
    private final ReplicaSlabs slabs = new ReplicaSlabs();
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
        this(0, 0, false);
    }

    /** A replica with room for {@code expected} messages, as many as a snapshot holds. */
    private QueueReplica(int expected) {
        this.messages = new ReplicaEntries(Math.min(expected, PRESIZED_AT_MOST));
    }

    QueueReplica(long frozen, long adopted, boolean sealed) {
        this.messages = new ReplicaEntries();
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
                put(sequence, slabs.put(in, in.remaining()), Counts.of(deliveryCount, returns, expiresAt, null));
            }
            case QueueCommands.SETTLE -> {
                long location = messages.remove(in.getLong());
                if (location != ReplicaSlabs.NONE) {
                    slabs.free(location);
                    slabs.reclaim(messages);
                }
            }
            case QueueCommands.RETURN -> {
                int slot = messages.slot(in.getLong());
                if (slot >= 0) {
                    Counts was = messages.counts(slot);
                    messages.counts(slot, Counts.of(in.getLong(), in.getLong(), Counts.expiresAt(was),
                        Counts.deadLettering(was)));
                }
            }
            case QueueCommands.DEAD_LETTERING -> {
                int slot = messages.slot(in.getLong());
                int reason = in.get();
                if (slot >= 0 && reason >= 0 && reason < REASONS.length) {
                    Counts was = messages.counts(slot);
                    messages.counts(slot, Counts.of(Counts.deliveryCount(was), Counts.returns(was),
                        Counts.expiresAt(was), REASONS[reason]));
                }
            }
            default -> throw new IllegalArgumentException("unknown queue command " + kind);
        }
        return true;
    }

    /** Holds {@code sequence} at {@code location}, in place of any message held as that sequence. */
    private void put(long sequence, long location, Counts counts) {
        long replaced = messages.put(sequence, location, counts);
        if (replaced != ReplicaSlabs.NONE) {
            slabs.free(replaced);
        }
    }

    /**
     * Reads a message as {@link HeldMessages#write} wrote it into this replica, in place of any message held as its
     * sequence.
     */
    private void read(DataInput in) throws IOException {
        long sequence = in.readLong();
        long deliveryCount = in.readLong();
        long returns = in.readLong();
        long expiresAt = in.readLong();
        int reason = in.readByte();
        int length = in.readInt();
        if (length < 0) {
            throw new IOException("a replicated message of " + length + " bytes");
        }
        put(sequence, slabs.put(in, length), Counts.of(deliveryCount, returns, expiresAt,
            reason >= 0 && reason < REASONS.length ? REASONS[reason] : null));
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
    synchronized void adopt(long move, DataInput in) throws IOException {
        if (adopted != move) {
            throw new IllegalStateException("an adoption of move " + move + " into a replica of move " + adopted);
        }
        if (sealed) {
            return;
        }
        for (int count = in.readInt(); count > 0; count--) {
            read(in);
        }
    }

    synchronized int size() {
        return messages.size();
    }

    /** The bytes of its slabs, live or not yet reclaimed. */
    synchronized long slabBytes() {
        return slabs.allocatedBytes();
    }

    /**
     * The message of {@code sequence}, with one reference, over this replica's bytes: what a live queue built from
     * this replica reads; null when it is not held.
     */
    synchronized Message message(long sequence, QueueCommands.Names exchanges, QueueCommands.Names keys)
            throws MalformedMessageException {
        int slot = messages.slot(sequence);
        if (slot < 0) {
            return null;
        }
        long location = messages.location(slot);
        return HeldMessages.message(slabs.array(location), location, exchanges, keys);
    }

    /** A copy of the numbers taken from forwarding nodes: what a snapshot writes, and a live queue starts from. */
    synchronized Enqueuers enqueuers() {
        return enqueuers.copy();
    }

    /** What a snapshot kept of the numbers taken. */
    synchronized void enqueuers(Enqueuers kept) {
        enqueuers = kept;
    }

    /** The messages held now, in sequence order: what a snapshot writes, a live queue is built from, a move sends. */
    synchronized HeldMessages held() {
        return messages.held(slabs.arrays());
    }

    /** A replica of what a snapshot wrote: {@code count} messages in sequence order. */
    static QueueReplica read(DataInput in, int count) throws IOException {
        QueueReplica replica = new QueueReplica(count);
        for (int i = 0; i < count; i++) {
            replica.read(in);
        }
        return replica;
    }

    /**
     * The messages held, in sequence order, as a live queue restores them: each one possibly delivered before (the
     * old leader may have), with one reference for the queue.
     */
    List<StoredMessage> messages() {
        HeldMessages held = held();
        Reading reading = new Reading();
        List<StoredMessage> out = new ArrayList<>(held.size());
        for (int i = 0; i < held.size(); i++) {
            StoredMessage stored = reading.read(held, i, false);
            if (stored != null) {
                out.add(stored);
            }
        }
        return out;
    }

    /** How many messages a live queue is restored from at a time: the garbage of a go-live stays young. */
    private static final int RESTORED_AT_ONCE = 4096;

    /**
     * Restores a new live queue from a replica's {@code held} (taken at the leader's entry), a few thousand at a
     * time, as an index: each message is read to learn its priority, TTL and body size, and let go; the queue reads
     * it again from the replica when it delivers it (its log must be a {@link ReplicatedQueueLog} of this replica).
     */
    static void restore(ClassicQueue queue, HeldMessages held) {
        Reading reading = new Reading();
        List<StoredMessage> chunk = new ArrayList<>(Math.min(held.size(), RESTORED_AT_ONCE));
        for (int i = 0; i < held.size(); i++) {
            StoredMessage stored = reading.read(held, i, true);
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

        /**
         * Message {@code i} as a live queue restores it, or only its index ({@code indexOnly}: the message read for
         * its priority, TTL and body size, and let go); null, logged, when its bytes cannot be read.
         */
        StoredMessage read(HeldMessages held, int i, boolean indexOnly) {
            long sequence = held.sequence(i);
            Message message;
            try {
                message = held.message(i, exchanges, routingKeys);
            } catch (MalformedMessageException | RuntimeException e) {
                LOG.log(System.Logger.Level.ERROR, "replicated message " + sequence + " cannot be read: dropped", e);
                return null;
            }
            StoredMessage stored = new StoredMessage(sequence, indexOnly ? null : message, held.deliveryCount(i),
                sequence, message.priority(), message.ttl(), message.bodySize(), held.expiresAt(i), true,
                held.returns(i), held.deadLettering(i));
            if (indexOnly) {
                message.release();
            }
            return stored;
        }
    }
}
