package io.skiffmq.server.cluster;

import java.io.DataInput;
import java.io.DataOutputStream;
import java.io.IOException;
import java.util.Arrays;

/**
 * The numbers a replicated queue took from the nodes that forward publishes to it (docs/quorum-queues.md,
 * "Publishes between two leaders are held"), so that a message resent after its link to a leader failed is dropped
 * when the queue already has it, as RabbitMQ's {@code rabbit_fifo} keeps each enqueuer's next sequence number.
 *
 * <p>A node numbers its publishes to a queue 1, 2, 3... in the order it sends them, so what a queue took from one
 * enqueuer is kept as the highest number, the <em>holes</em> below it (numbers never taken: refused, or lost with a
 * deposed leader's log) and a <em>floor</em> below which nothing is known. A number below the floor counts as not
 * taken: a message resent with it may be enqueued twice, never lost. Bounded: {@link #MAX_ENQUEUERS} enqueuers (the
 * one that took nothing for longest goes first: a node that restarted is a new enqueuer) and {@link #MAX_HOLES}
 * holes each (the oldest go first, raising the floor).
 *
 * <p>Owned by one thread: a replica's by its group's apply thread, a live queue's by the queue's thread. A replica
 * and the live queue built from it change theirs by the same commands, in the same order, so they agree; the copy a
 * live queue starts from is taken on the apply thread ({@link #copy}).
 */
final class Enqueuers {
    static final int MAX_ENQUEUERS = 32;
    static final int MAX_HOLES = 256;
    private static final long[] NO_HOLES = new long[0];

    /** What one enqueuer's numbers are known to be. */
    private static final class Seen {
        final long id;
        long floor;
        long high;
        long[] holes = NO_HOLES;
        int holeCount;
        /** {@link #clock} when it last took one: the least recent goes first. */
        long lastTook;

        Seen(long id, long first) {
            this.id = id;
            this.floor = first;
            this.high = first;
        }

        boolean has(long number) {
            return number >= floor && number <= high
                && (holeCount == 0 || Arrays.binarySearch(holes, 0, holeCount, number) < 0);
        }

        void took(long number) {
            if (number > high) {
                long gap = number - high - 1;
                if (gap > MAX_HOLES) {
                    floor = number; // too many missing to keep: those below are not known
                    holeCount = 0;
                } else if (gap > 0) {
                    dropOldest((int) Math.max(0, holeCount + gap - MAX_HOLES));
                    if (holes.length < holeCount + gap) {
                        holes = Arrays.copyOf(holes, (int) Math.min(MAX_HOLES, Math.max(8, 2 * (holeCount + gap))));
                    }
                    for (long missing = high + 1; missing < number; missing++) {
                        holes[holeCount++] = missing;
                    }
                }
                high = number;
            } else if (holeCount > 0) {
                int at = Arrays.binarySearch(holes, 0, holeCount, number);
                if (at >= 0) {
                    System.arraycopy(holes, at + 1, holes, at, holeCount - at - 1);
                    holeCount--;
                }
            }
        }

        /** Forgets the {@code count} oldest holes: the floor goes above them. */
        private void dropOldest(int count) {
            if (count <= 0) {
                return;
            }
            floor = holes[count - 1] + 1;
            System.arraycopy(holes, count, holes, 0, holeCount - count);
            holeCount -= count;
        }
    }

    private final Seen[] seen = new Seen[MAX_ENQUEUERS];
    private int count;
    private long clock;

    private Seen find(long enqueuer) {
        for (int i = 0; i < count; i++) {
            if (seen[i].id == enqueuer) {
                return seen[i];
            }
        }
        return null;
    }

    /** True when the queue took {@code number} from {@code enqueuer}: a message resent with it is one it has. */
    boolean has(long enqueuer, long number) {
        Seen one = find(enqueuer);
        return one != null && one.has(number);
    }

    /** The queue took {@code number} from {@code enqueuer}. */
    void took(long enqueuer, long number) {
        Seen one = find(enqueuer);
        if (one == null) {
            one = new Seen(enqueuer, number);
            if (count == MAX_ENQUEUERS) {
                int oldest = 0;
                for (int i = 1; i < count; i++) {
                    if (seen[i].lastTook < seen[oldest].lastTook) {
                        oldest = i;
                    }
                }
                seen[oldest] = one;
            } else {
                seen[count++] = one;
            }
        } else {
            one.took(number);
        }
        one.lastTook = ++clock;
    }

    boolean isEmpty() {
        return count == 0;
    }

    Enqueuers copy() {
        Enqueuers copy = new Enqueuers();
        copy.clock = clock;
        copy.count = count;
        for (int i = 0; i < count; i++) {
            Seen from = seen[i];
            Seen to = new Seen(from.id, from.floor);
            to.high = from.high;
            to.holes = Arrays.copyOf(from.holes, from.holeCount);
            to.holeCount = from.holeCount;
            to.lastTook = from.lastTook;
            copy.seen[i] = to;
        }
        return copy;
    }

    /** As a snapshot keeps it. */
    void write(DataOutputStream out) throws IOException {
        out.writeLong(clock);
        out.writeInt(count);
        for (int i = 0; i < count; i++) {
            Seen one = seen[i];
            out.writeLong(one.id);
            out.writeLong(one.floor);
            out.writeLong(one.high);
            out.writeLong(one.lastTook);
            out.writeInt(one.holeCount);
            for (int h = 0; h < one.holeCount; h++) {
                out.writeLong(one.holes[h]);
            }
        }
    }

    static Enqueuers read(DataInput in) throws IOException {
        Enqueuers read = new Enqueuers();
        read.clock = in.readLong();
        int count = in.readInt();
        if (count < 0 || count > MAX_ENQUEUERS) {
            throw new IOException("bad enqueuer count " + count + " in a snapshot");
        }
        for (int i = 0; i < count; i++) {
            Seen one = new Seen(in.readLong(), in.readLong());
            one.high = in.readLong();
            one.lastTook = in.readLong();
            int holes = in.readInt();
            if (holes < 0 || holes > MAX_HOLES) {
                throw new IOException("bad hole count " + holes + " in a snapshot");
            }
            one.holes = new long[holes];
            for (int h = 0; h < holes; h++) {
                one.holes[h] = in.readLong();
            }
            one.holeCount = holes;
            read.seen[read.count++] = one;
        }
        return read;
    }
}
