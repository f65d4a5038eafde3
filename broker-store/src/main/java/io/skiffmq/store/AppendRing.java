package io.skiffmq.store;

import io.netty.buffer.ByteBuf;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.function.LongFunction;

/**
 * The hand-off of records from the threads that {@link #append} them to the {@link Journal}'s writer thread: a
 * record claims its location, then waits in a ring of slots until the writer has written it and its callback has
 * run (after the sync that covers it).
 *
 * <p><b>Handing records to the writer</b> takes no lock and, under load, no wake-up. An append claims the next
 * location with one compare-and-set on {@link #next} (the segment's number and the ordinal packed as a location),
 * which also gives it a place in a ring of {@link #DEFAULT_SIZE} slots: the records of all segments in the order of
 * their locations. It fills its slot and publishes it; only if the writer is parked ({@link #writerParked}, read
 * after the slot is published, set by the writer before its last look) does it unpark it. The writer takes the
 * published slots in order, so a record claimed but not yet published holds back those after it (briefly: the
 * appender is between two instructions). When the ring is full, an appender waits for the writer to free slots:
 * the disk is then the bottleneck and appending threads slow to its pace.
 *
 * <p>Threads: {@link #append} from any thread. The appending side ({@link #next}, {@link #appendSegment}, the
 * slots until published) is written by appenders with atomics; the records once published are the writer's, and
 * the methods that say "writer thread" are for it alone; the callbacks and {@link #consumed} are the confirming
 * thread's (the journal's sync thread, or the writer when there is none).
 */
final class AppendRing {
    /** Records claimed and not yet written at most (64 Ki slots, 1 MiB of arrays); a power of two. */
    static final int DEFAULT_SIZE = 1 << 16;
    /** {@link #next} while a roll is under way: appenders wait the few instructions it takes. */
    private static final long ROLLING = -1;
    /** {@link #next} once closed or failed: appends are refused. */
    private static final long CLOSED = -2;
    /** {@link #next} before {@link #start}. */
    private static final long NOT_STARTED = -3;
    private static final VarHandle SLOT = MethodHandles.arrayElementVarHandle(ByteBuf[].class);

    /** The segment appends go to: where its ordinal 0 lies in the ring, and the bytes claimed in it so far. */
    static final class AppendSegment {
        final long number;
        /** The ring sequence of its first record: a record's sequence is this plus its ordinal. */
        final long base;
        final AtomicLong bytes = new AtomicLong();
        final Journal.Occupancy occupancy;

        AppendSegment(long number, long base, Journal.Occupancy occupancy) {
            this.number = number;
            this.base = base;
            this.occupancy = occupancy;
        }
    }

    private final long segmentBytes;
    private final Thread writer;
    /** The thread callbacks run on, if not the writer (the journal's sync thread); it frees slots. */
    private volatile Thread confirmer;
    /** The counts of a segment that appends move into. */
    private final LongFunction<Journal.Occupancy> occupancyOf;

    /** The next location to hand out, or {@link #ROLLING}, {@link #CLOSED}, {@link #NOT_STARTED}. */
    private final AtomicLong next = new AtomicLong(NOT_STARTED);
    /** The segment {@link #next} points into; replaced before {@link #next} moves into a new one. */
    private volatile AppendSegment appendSegment;
    /**
     * The ring: a record's slot is its sequence modulo {@link #ringSize}. An appender fills {@link #locations}
     * and {@link #callbacks}, then publishes {@link #records} (a volatile store); the writer clears all three
     * before it moves {@link #consumed} past them.
     */
    private final ByteBuf[] records;
    private final long[] locations;
    private final Runnable[] callbacks;
    private final int ringSize;
    private final int ringMask;
    /** Ring sequences below this are written and their callbacks run: their slots are free. */
    private volatile long consumed;
    /** The ring sequence where claims stopped (close or failure), once they have; -1 before. */
    private volatile long claimsEnd = -1;
    /** True while the writer is about to park or parked: the next publisher unparks it. */
    private final AtomicBoolean writerParked = new AtomicBoolean();

    /**
     * @param ringSize records claimed and not yet written at most, a power of two
     * @param segmentBytes bytes of records after which appends move to a new segment
     * @param writer the thread that drains the ring
     * @param occupancyOf the counts of a segment, made on first use
     */
    AppendRing(int ringSize, long segmentBytes, Thread writer, LongFunction<Journal.Occupancy> occupancyOf) {
        if (Integer.bitCount(ringSize) != 1) {
            throw new IllegalArgumentException("ring size must be a power of two");
        }
        this.ringSize = ringSize;
        this.ringMask = ringSize - 1;
        this.records = new ByteBuf[ringSize];
        this.locations = new long[ringSize];
        this.callbacks = new Runnable[ringSize];
        this.segmentBytes = segmentBytes;
        this.writer = writer;
        this.occupancyOf = occupancyOf;
    }

    /** Callbacks run on {@code thread} (which frees slots): it must not wait for room either. */
    void confirmsOn(Thread thread) {
        confirmer = thread;
    }

    /** Hands out locations from ordinal 0 of {@code segment} on; once, before any append. */
    void start(long segment) {
        appendSegment = new AppendSegment(segment, 0, occupancyOf.apply(segment));
        next.set(Journal.location(segment, 0));
    }

    /** False until {@link #start} or {@link #stopClaims}, whichever comes first. */
    boolean started() {
        return next.get() != NOT_STARTED;
    }

    /**
     * Claims a location for {@code record} and hands it to the writer; waits only when the ring is full.
     *
     * @return the record's location, or -1 when appends are refused (the record is then released)
     * @see Journal#append(ByteBuf, boolean, Runnable)
     */
    long append(ByteBuf record, boolean holdsMessage, Runnable durable) {
        AppendSegment segment;
        long location;
        while (true) {
            segment = appendSegment;
            location = next.get();
            if (location < 0) {
                if (location != ROLLING) {
                    record.release();
                    return -1;
                }
                Thread.onSpinWait();
            } else if (Journal.segmentOf(location) == segment.number && next.compareAndSet(location, location + 1)) {
                break;
            }
            // else a roll moved on between the two reads: read both again
        }
        if (holdsMessage) {
            // counted before the slot is published, so the writer cannot move past the segment first
            segment.occupancy.written.incrementAndGet();
            segment.occupancy.live.incrementAndGet();
        }
        long sequence = segment.base + (location & 0xffff_ffffL);
        int length = record.readableBytes();
        long bytes = segment.bytes.addAndGet(length);
        if (bytes >= segmentBytes && bytes - length < segmentBytes) {
            roll(segment); // this record filled the segment: the next ones go to a new one
        }
        if (sequence - consumed >= ringSize) {
            awaitRoom(sequence);
        }
        int slot = (int) (sequence & ringMask);
        locations[slot] = location;
        callbacks[slot] = durable;
        SLOT.setVolatile(records, slot, record);
        // read after the slot is published; the writer sets it before its last look at the slot
        if (writerParked.get() && writerParked.compareAndSet(true, false)) {
            LockSupport.unpark(writer);
        }
        return location;
    }

    /** The ring is full: waits for the writer to free the slot of {@code sequence}. */
    private void awaitRoom(long sequence) {
        if (Thread.currentThread() == writer || Thread.currentThread() == confirmer) {
            throw new IllegalStateException("a journal callback appended to a full ring: it would wait for itself");
        }
        while (sequence - consumed >= ringSize) {
            LockSupport.parkNanos(this, 10_000);
        }
    }

    /**
     * Moves appends from {@code full} to the next segment, unless something else moved them already. Appenders
     * wait while {@link #next} is {@link #ROLLING}.
     *
     * @return true when this call rolled
     */
    private boolean roll(AppendSegment full) {
        long location;
        do {
            location = next.get();
            if (location < 0 && location != ROLLING) {
                return false; // closed: no more segments
            }
            if (location != ROLLING && Journal.segmentOf(location) != full.number) {
                return false;
            }
        } while (location == ROLLING || !next.compareAndSet(location, ROLLING));
        long number = full.number + 1;
        appendSegment = new AppendSegment(number, full.base + (location & 0xffff_ffffL), occupancyOf.apply(number));
        next.set(Journal.location(number, 0));
        return true;
    }

    /** @see Journal#rollIfDead */
    boolean rollIfDead(long minBytes) {
        AppendSegment segment = appendSegment;
        if (next.get() < 0 || segment == null || segment.bytes.get() < minBytes || segment.occupancy.live.get() > 0) {
            return false;
        }
        // an append racing this may still put a message in the segment left: its live count keeps it
        if (!roll(segment)) {
            return false;
        }
        wakeWriter(); // the writer opens the new segment once the old one's records are written
        return true;
    }

    /** The segment appends go to; null before {@link #start}. */
    AppendSegment appendSegment() {
        return appendSegment;
    }

    /** The ring sequence the next append will get, or -1 once appends are refused. */
    long claimed() {
        while (true) {
            AppendSegment segment = appendSegment;
            long location = next.get();
            if (location < 0 && location != ROLLING) {
                return -1;
            }
            if (location != ROLLING && Journal.segmentOf(location) == segment.number) {
                return segment.base + (location & 0xffff_ffffL);
            }
            Thread.onSpinWait();
        }
    }

    /** Refuses appends from now on; returns the ring sequence where claims ended (0 if never started). */
    long stopClaims() {
        if (next.compareAndSet(NOT_STARTED, CLOSED)) {
            claimsEnd = 0;
            return 0;
        }
        while (true) {
            AppendSegment segment = appendSegment;
            long location = next.get();
            if (location == CLOSED) {
                long end;
                while ((end = claimsEnd) < 0) {
                    Thread.onSpinWait(); // the thread that closed is about to say where
                }
                return end;
            }
            if (location != ROLLING && Journal.segmentOf(location) == segment.number
                    && next.compareAndSet(location, CLOSED)) {
                claimsEnd = segment.base + (location & 0xffff_ffffL);
                return claimsEnd;
            }
            Thread.onSpinWait();
        }
    }

    /** The ring sequence where claims stopped, once they have; -1 before. */
    long claimsEnd() {
        return claimsEnd;
    }

    /** Ring sequences below this are written and their callbacks run. */
    long consumed() {
        return consumed;
    }

    /** Slots in the ring: records claimed and not yet written at most. */
    int size() {
        return ringSize;
    }

    /** Writer thread: how many slots from {@code sequence} on are published in a row, {@code max} at most. */
    int published(long sequence, int max) {
        int count = 0;
        while (count < max && SLOT.getVolatile(records, (int) (sequence + count & ringMask)) != null) {
            count++;
        }
        return count;
    }

    /** Writer thread: the location of the published record at {@code sequence}. */
    long location(long sequence) {
        return locations[(int) (sequence & ringMask)];
    }

    /** Writer thread: takes the published record at {@code sequence} out of its slot; the caller releases it. */
    ByteBuf takeRecord(long sequence) {
        int slot = (int) (sequence & ringMask);
        ByteBuf record = records[slot];
        records[slot] = null;
        return record;
    }

    /** Writer or sync thread (whichever confirms): takes the callback of the record at {@code sequence} out of its slot; null if it had none. */
    Runnable takeCallback(long sequence) {
        int slot = (int) (sequence & ringMask);
        Runnable durable = callbacks[slot];
        if (durable != null) {
            callbacks[slot] = null;
        }
        return durable;
    }

    /** Writer or sync thread (whichever confirms): the slots below {@code sequence} are taken and their callbacks run; appenders may reuse them. */
    void free(long sequence) {
        consumed = sequence;
    }

    /**
     * Writer thread: parks until the slot of {@code sequence} is published or {@link #wakeWriter} is called;
     * {@link #writerParked} makes appenders wake it.
     *
     */
    void idle(long sequence) {
        writerParked.set(true);
        // a last look after the flag is set: a record published before it was seen is caught here
        if (SLOT.getVolatile(records, (int) (sequence & ringMask)) == null && claimsEnd < 0) {
            // no timeout: every path that makes work unparks the writer (an append through the flag, flush,
            // rollIfDead, close and a failed sync always), and the permit outlives a wake-up that comes before the park
            LockSupport.park(this);
        }
        writerParked.set(false);
    }

    /** Unparks the writer, parked or not (a permit it finds at its next park). */
    void wakeWriter() {
        writerParked.set(false);
        LockSupport.unpark(writer);
    }

    /**
     * Writer thread, once it has failed and the sync thread has ended: refuses appends, then lets go of every
     * record claimed and not confirmed, waiting for those not published yet, and frees their slots.
     *
     * @param synced the ring sequence of the first record not confirmed: those from there to {@code taken} were
     *        written (and released) but never confirmed
     * @param taken the ring sequence of the failed batch's first slot
     * @param count the slots in that batch
     * @param done how many of them were written (and released)
     */
    void discard(long synced, long taken, int count, int done) {
        long end = stopClaims();
        for (long sequence = synced; sequence < end; sequence++) {
            int slot = (int) (sequence & ringMask);
            ByteBuf record;
            if (sequence < taken + done) {
                record = null; // written and released before the failure
            } else {
                // an appender that claimed before claims stopped publishes in a moment
                while ((record = (ByteBuf) SLOT.getVolatile(records, slot)) == null && sequence >= taken + count) {
                    Thread.onSpinWait();
                }
            }
            records[slot] = null;
            callbacks[slot] = null;
            if (record != null && record.refCnt() > 0) {
                record.release();
            }
            consumed = sequence + 1; // frees the slot for an appender waiting for room
        }
    }
}
