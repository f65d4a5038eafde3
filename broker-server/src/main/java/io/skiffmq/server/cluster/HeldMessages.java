package io.skiffmq.server.cluster;

import io.skiffmq.core.message.MalformedMessageException;
import io.skiffmq.core.message.Message;
import io.skiffmq.core.queue.DeadLetters;
import java.io.DataOutputStream;
import java.io.IOException;

/**
 * The messages a replica held at one point ({@link QueueReplica#held}), in sequence order: what a snapshot writes, a
 * live queue is built from, and a move sends. Copies of the replica's arrays, over its slabs ({@link ReplicaSlabs},
 * which never change what they hold), so immutable: read on any thread while the replica goes on.
 */
final class HeldMessages {
    static final HeldMessages NONE = new HeldMessages(new long[0], new long[0], null, new byte[0][]);

    private final long[] sequences;
    private final long[] locations;
    /** Each message's counts, null for one as published; null while none has any. */
    private final QueueReplica.Counts[] counts;
    private final byte[][] slabs;

    HeldMessages(long[] sequences, long[] locations, QueueReplica.Counts[] counts, byte[][] slabs) {
        this.sequences = sequences;
        this.locations = locations;
        this.counts = counts;
        this.slabs = slabs;
    }

    int size() {
        return sequences.length;
    }

    long sequence(int i) {
        return sequences[i];
    }

    long deliveryCount(int i) {
        return QueueReplica.Counts.deliveryCount(counts(i));
    }

    long returns(int i) {
        return QueueReplica.Counts.returns(counts(i));
    }

    long expiresAt(int i) {
        return QueueReplica.Counts.expiresAt(counts(i));
    }

    DeadLetters.Reason deadLettering(int i) {
        return QueueReplica.Counts.deadLettering(counts(i));
    }

    /** The length of message {@code i}'s stored form. */
    int storedLength(int i) {
        return ReplicaSlabs.length(slabs[ReplicaSlabs.slab(locations[i])], ReplicaSlabs.offset(locations[i]));
    }

    /** Message {@code i}, over the replica's bytes, with one reference ({@link QueueCommands#message}). */
    Message message(int i, QueueCommands.Names exchanges, QueueCommands.Names keys)
            throws MalformedMessageException {
        return message(slabs[ReplicaSlabs.slab(locations[i])], locations[i], exchanges, keys);
    }

    /** The message at {@code location} in {@code slab} ({@link ReplicaSlabs}), with one reference, over its bytes. */
    static Message message(byte[] slab, long location, QueueCommands.Names exchanges, QueueCommands.Names keys)
            throws MalformedMessageException {
        int offset = ReplicaSlabs.offset(location);
        return QueueCommands.message(slab, offset + 4, ReplicaSlabs.length(slab, offset), exchanges, keys);
    }

    /**
     * Message {@code i} as a snapshot or an adoption holds it ({@link QueueReplica#read(java.io.DataInput)} reads it
     * back): sequence, delivery count, returns, expiry, dead-lettering reason (-1 for none), then the stored form's
     * length and bytes.
     */
    void write(int i, DataOutputStream out) throws IOException {
        QueueReplica.Counts counted = counts(i);
        out.writeLong(sequences[i]);
        out.writeLong(QueueReplica.Counts.deliveryCount(counted));
        out.writeLong(QueueReplica.Counts.returns(counted));
        out.writeLong(QueueReplica.Counts.expiresAt(counted));
        DeadLetters.Reason reason = QueueReplica.Counts.deadLettering(counted);
        out.writeByte(reason == null ? -1 : reason.ordinal());
        byte[] slab = slabs[ReplicaSlabs.slab(locations[i])];
        int offset = ReplicaSlabs.offset(locations[i]);
        out.write(slab, offset, 4 + ReplicaSlabs.length(slab, offset)); // the length, then the bytes
    }

    private QueueReplica.Counts counts(int i) {
        return counts == null ? null : counts[i];
    }
}
