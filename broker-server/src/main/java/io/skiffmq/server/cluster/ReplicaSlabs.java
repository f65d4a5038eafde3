package io.skiffmq.server.cluster;

import java.io.DataInput;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Arrays;

/**
 * The stored forms of a replica's messages ({@link QueueReplica}), packed one after the other into arrays of up to
 * {@link #MAX_SLAB} bytes ("slabs"), each a 4-byte length and the bytes. A message is found by its location: its
 * slab's number in the high 32 bits, the offset of its length in the low ones. So a replica of millions of messages
 * is a few thousand arrays to the collector, not millions of them (docs/quorum-queues.md, "Restart time").
 *
 * <p>A byte once written is never written again: a slab is filled at its end only, and one emptied is dropped, not
 * reused. So what {@link #arrays} returned stays as it was for whoever holds it (a snapshot being written on another
 * thread) while the replica goes on. Slabs whose messages are mostly settled are emptied into the slab being filled
 * ({@link #reclaim}).
 *
 * <p>Not thread-safe: guarded by its replica.
 */
final class ReplicaSlabs {
    /** The smallest slab, which an idle queue of a few messages keeps. */
    static final int MIN_SLAB = 4 << 10;
    /** The largest slab: under half of G1's smallest region, so that no slab is allocated as a humongous object. */
    static final int MAX_SLAB = 256 << 10;
    static final long NONE = -1;

    private final int minSlab;
    private final int maxSlab;
    /** A stored form larger than this gets a slab of its own, exactly its size. */
    private final int ownSlab;
    /** Bytes of slab a replica may carry beyond twice its live bytes before it is compacted: four slabs. */
    private final long slack;

    private byte[][] slabs = new byte[4][];
    /** Live bytes (lengths and stored forms) in each slab. */
    private int[] live = new int[4];
    /** Slab numbers free for a new slab, {@link #freeCount} of them. */
    private int[] free = new int[4];
    private int freeCount;
    /** Numbers ever used: those below are in {@link #slabs} or {@link #free}. */
    private int used;
    /** The slab being filled, or -1, and where its next message goes. */
    private int current = -1;
    private int position;
    private long liveBytes;
    private long allocatedBytes;
    /** While {@link #move}s compact: the slabs being emptied. */
    private boolean[] emptying;

    ReplicaSlabs() {
        this(MIN_SLAB, MAX_SLAB);
    }

    /** Slabs of {@code minSlab} to {@code maxSlab} bytes (small ones to test compactions with). */
    ReplicaSlabs(int minSlab, int maxSlab) {
        this.minSlab = minSlab;
        this.maxSlab = maxSlab;
        this.ownSlab = maxSlab / 4;
        this.slack = 4L * maxSlab;
    }

    /** Stores {@code length} bytes from {@code in} at its position (which moves past them); returns the location. */
    long put(ByteBuffer in, int length) {
        long location = reserve(length);
        in.get(slabs[slab(location)], offset(location) + 4, length);
        return location;
    }

    /** Stores {@code length} bytes read from {@code in}; returns the location. */
    long put(DataInput in, int length) throws IOException {
        long location = reserve(length);
        try {
            in.readFully(slabs[slab(location)], offset(location) + 4, length);
        } catch (IOException e) {
            free(location); // cut short: nothing points at it
            throw e;
        }
        return location;
    }

    /** Lets the message at {@code location} go: its slab is dropped once none of its messages are left. */
    void free(long location) {
        int slab = slab(location);
        int size = 4 + length(location);
        live[slab] -= size;
        liveBytes -= size;
        if (live[slab] == 0 && slab != current) {
            drop(slab);
        }
    }

    /** The slab a location is in, to read its bytes from {@link #offset} + 4 for {@link #length}. */
    byte[] array(long location) {
        return slabs[slab(location)];
    }

    private int length(long location) {
        return length(slabs[slab(location)], offset(location));
    }

    /** The slabs as they are now, by number: what is at a location held now stays there in them. */
    byte[][] arrays() {
        return Arrays.copyOf(slabs, used);
    }

    long liveBytes() {
        return liveBytes;
    }

    /** The bytes of the slabs held. */
    long allocatedBytes() {
        return allocatedBytes;
    }

    /**
     * Compacts the slabs once they hold more than twice what is live in them and some slack: every slab but the one
     * being filled that is less than three quarters live is emptied, each message in it moved into the slab being
     * filled, and {@code entries} told where. What is left is then at most four thirds of what is live and a slab,
     * so the next compaction waits for about two thirds of what is live to be settled: a compaction's pass over every
     * message costs each settle a constant.
     */
    void reclaim(ReplicaEntries entries) {
        if (allocatedBytes <= 2 * liveBytes + slack) {
            return;
        }
        emptying = new boolean[used];
        for (int slab = 0; slab < used; slab++) {
            emptying[slab] = slabs[slab] != null && slab != current && live[slab] < slabs[slab].length / 4 * 3;
        }
        entries.relocate(this::move);
        emptying = null;
    }

    /** During a compaction, where the message at {@code location} is now: moved if its slab is being emptied. */
    private long move(long location) {
        int from = slab(location);
        if (from >= emptying.length || !emptying[from]) {
            return location;
        }
        byte[] array = slabs[from];
        int offset = offset(location);
        int length = length(array, offset);
        long moved = reserve(length);
        System.arraycopy(array, offset + 4, slabs[slab(moved)], offset(moved) + 4, length);
        free(location);
        return moved;
    }

    private long reserve(int length) {
        if (length < 0 || length > Integer.MAX_VALUE - 8) {
            throw new IllegalArgumentException("a stored form of " + length + " bytes");
        }
        int size = 4 + length;
        int slab;
        int offset;
        if (length > ownSlab) {
            slab = add(new byte[size]);
            offset = 0;
        } else {
            if (current < 0 || slabs[current].length - position < size) {
                if (current >= 0 && live[current] == 0) {
                    drop(current);
                }
                // about an eighth of what the replica holds, so that a small queue keeps small slabs
                long next = Math.max(minSlab, Math.min(maxSlab, Long.highestOneBit(liveBytes / 8 + size) << 1));
                current = add(new byte[(int) next]);
                position = 0;
            }
            slab = current;
            offset = position;
            position += size;
        }
        byte[] array = slabs[slab];
        array[offset] = (byte) (length >>> 24);
        array[offset + 1] = (byte) (length >>> 16);
        array[offset + 2] = (byte) (length >>> 8);
        array[offset + 3] = (byte) length;
        live[slab] += size;
        liveBytes += size;
        return (long) slab << 32 | offset;
    }

    private int add(byte[] array) {
        int slab;
        if (freeCount > 0) {
            slab = free[--freeCount];
        } else {
            if (used == slabs.length) {
                slabs = Arrays.copyOf(slabs, used * 2);
                live = Arrays.copyOf(live, used * 2);
                free = Arrays.copyOf(free, used * 2);
            }
            slab = used++;
        }
        slabs[slab] = array;
        live[slab] = 0;
        allocatedBytes += array.length;
        return slab;
    }

    private void drop(int slab) {
        allocatedBytes -= slabs[slab].length;
        slabs[slab] = null;
        free[freeCount++] = slab;
        if (emptying != null && slab < emptying.length) {
            emptying[slab] = false; // emptied: its number may be a new slab's
        }
        if (slab == current) {
            current = -1;
        }
    }

    static int slab(long location) {
        return (int) (location >>> 32);
    }

    /** Where the message's length is in its slab; its bytes follow. */
    static int offset(long location) {
        return (int) location;
    }

    static int length(byte[] slab, int offset) {
        return (slab[offset] & 0xff) << 24 | (slab[offset + 1] & 0xff) << 16 | (slab[offset + 2] & 0xff) << 8
            | slab[offset + 3] & 0xff;
    }
}
