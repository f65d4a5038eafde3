package io.skiffmq.store;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.util.concurrent.FastThreadLocalThread;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.Stream;
import net.openhft.chronicle.bytes.Bytes;
import net.openhft.chronicle.bytes.PointerBytesStore;
import net.openhft.chronicle.bytes.SyncMode;
import net.openhft.chronicle.core.time.SetTimeProvider;
import net.openhft.chronicle.queue.ExcerptAppender;
import net.openhft.chronicle.queue.ExcerptTailer;
import net.openhft.chronicle.queue.impl.single.SingleChronicleQueue;
import net.openhft.chronicle.queue.impl.single.SingleChronicleQueueBuilder;
import net.openhft.chronicle.wire.DocumentContext;

/**
 * The journal of one virtual host on Chronicle Queue, with group commit: any thread {@link #append}s a record and
 * a callback; one writer thread drains what is pending, appends it all, makes it durable once per batch, then runs
 * every callback of the batch. A batch ends when nothing more is pending or it reaches {@link #MAX_BATCH} records.
 *
 * <p>The journal is a run of numbered segments, each a Chronicle queue in its own directory
 * ({@code segment-000000001}, …). Writing moves to a new segment once the current one holds {@code segmentBytes},
 * and every start opens a fresh segment, so nothing is ever appended after a record a crash may have torn. A
 * segment whose records are all dead is {@link #deleteSegment deleted} whole: that is how space comes back. To
 * know when that is, the journal counts per segment the messages written there ({@link #append} with
 * {@code holdsMessage}) and those still live (until {@link #release}).
 *
 * <p>A record's <em>location</em> is its segment in the high 32 bits and its ordinal in the segment in the low 32.
 * Each segment is written as one Chronicle cycle (the writer's clock is frozen when the segment opens), so the
 * ordinal is the Chronicle sequence number and {@link #read} finds a record straight from its location.
 *
 * <table>
 *   <caption>Sync policies</caption>
 *   <tr><th>policy</th><th>a confirmed record survives</th><th>cost</th></tr>
 *   <tr><td>{@link SyncPolicy#SYNC}</td><td>a crash of the process, the OS or the power (fsync per batch)</td>
 *       <td>one sync per batch</td></tr>
 *   <tr><td>{@link SyncPolicy#OS}</td><td>a crash of the process only: the OS page cache holds it</td>
 *       <td>none</td></tr>
 * </table>
 *
 * <p><b>Handing records to the writer</b> takes no lock and, under load, no wake-up. An append claims the next
 * location with one compare-and-set on {@link #next} (the segment's number and the ordinal packed as a location),
 * which also gives it a place in a ring of {@link #RING_SIZE} slots: the records of all segments in the order of
 * their locations. It fills its slot and publishes it; only if the writer is parked ({@link #writerParked}, read
 * after the slot is published, set by the writer before its last look) does it unpark it. The writer takes the
 * published slots in order, so a record claimed but not yet published holds back those after it (briefly: the
 * appender is between two instructions). When the ring is full, an appender waits for the writer to free slots:
 * the disk is then the bottleneck and appending threads slow to its pace.
 *
 * <p>Threads: {@link #append} from any thread; the Chronicle appender belongs to the writer thread alone, as
 * Chronicle requires; {@link #replay} runs before {@link #start}. The appending side ({@link #next},
 * {@link #appendSegment}, the ring's slots until published) is written by appenders with atomics; the ring's slots
 * once published, {@link #consumed} and the open segment are the writer's.
 */
public final class Journal implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(Journal.class.getName());
    /** Records per batch at most, so callbacks of early records are not held back by an endless stream. */
    public static final int MAX_BATCH = 4096;
    public static final long DEFAULT_SEGMENT_BYTES = 64L << 20;
    private static final String SEGMENT_PREFIX = "segment-";

    public enum SyncPolicy { SYNC, OS }

    /** Receives replayed records. */
    @FunctionalInterface
    public interface RecordHandler {
        /** @param record its message is a slice of a heap buffer of its own, which needs no release */
        void record(JournalRecord.Read record, long location);
    }

    /** Messages written to a segment, and how many of them are still live. */
    private static final class Occupancy {
        final AtomicLong written = new AtomicLong();
        final AtomicLong live = new AtomicLong();
    }

    /** The segment appends go to: where its ordinal 0 lies in the ring, and the bytes claimed in it so far. */
    private static final class AppendSegment {
        final long number;
        /** The ring sequence of its first record: a record's sequence is this plus its ordinal. */
        final long base;
        final AtomicLong bytes = new AtomicLong();
        final Occupancy occupancy;

        AppendSegment(long number, long base, Occupancy occupancy) {
            this.number = number;
            this.base = base;
            this.occupancy = occupancy;
        }
    }

    /** A {@link #flush} waiting for every record before ring sequence {@code through} to be durable. */
    private record Flush(long through, CompletableFuture<Void> flushed) {
    }

    /** A segment opened for {@link #read}: one tailer, used under its own lock. */
    private static final class Reader {
        final SingleChronicleQueue queue;
        final ExcerptTailer tailer;
        final int cycle;
        boolean closed;

        Reader(SingleChronicleQueue queue) {
            this.queue = queue;
            this.tailer = queue.createTailer();
            this.tailer.singleThreadedCheckDisabled(true);
            this.cycle = queue.firstCycle();
        }

        void close() {
            closed = true;
            tailer.close();
            queue.close();
        }
    }

    /** Records claimed and not yet written at most (64 Ki slots, 1 MiB of arrays); a power of two. */
    static final int RING_SIZE = 1 << 16;
    /** {@link #next} while a roll is under way: appenders wait the few instructions it takes. */
    private static final long ROLLING = -1;
    /** {@link #next} once closed or failed: appends are refused. */
    private static final long CLOSED = -2;
    /** {@link #next} before {@link #start}. */
    private static final long NOT_STARTED = -3;
    private static final VarHandle SLOT = MethodHandles.arrayElementVarHandle(ByteBuf[].class);

    private final Path directory;
    private final SyncPolicy policy;
    private final long segmentBytes;
    private final Thread writer;
    private final AtomicLong syncs = new AtomicLong();
    /** Records written; the writer thread's. */
    private long written;
    /** Points at the record being written, when it is off-heap; the writer thread's. */
    private final PointerBytesStore recordBytes = new PointerBytesStore();
    private final java.util.concurrent.ConcurrentHashMap<Long, Occupancy> occupancy =
        new java.util.concurrent.ConcurrentHashMap<>();
    private final java.util.concurrent.ConcurrentHashMap<Long, Reader> readers =
        new java.util.concurrent.ConcurrentHashMap<>();

    /** The next location to hand out, or {@link #ROLLING}, {@link #CLOSED}, {@link #NOT_STARTED}. */
    private final AtomicLong next = new AtomicLong(NOT_STARTED);
    /** The segment {@link #next} points into; replaced before {@link #next} moves into a new one. */
    private volatile AppendSegment appendSegment;
    /**
     * The ring: a record's slot is its sequence modulo {@link #RING_SIZE}. An appender fills {@link #locations}
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
    private final ConcurrentLinkedQueue<Flush> flushes = new ConcurrentLinkedQueue<>();
    /** Why the writer stopped, if it failed. */
    private volatile Throwable failure;
    /** Set by the writer as it ends: nothing more is written, and no flush completes but by its caller. */
    private volatile boolean writerDone;

    /** The location of the last record the writer has handed to Chronicle: readable from then on. */
    private volatile long writtenThrough = -1;
    /** The segment the writer has open; every older one is closed and may be deleted. */
    private volatile long writerSegment;

    public Journal(Path directory, SyncPolicy policy) {
        this(directory, policy, DEFAULT_SEGMENT_BYTES);
    }

    /** @param segmentBytes bytes of records after which writing moves to a new segment */
    public Journal(Path directory, SyncPolicy policy, long segmentBytes) {
        this(directory, policy, segmentBytes, RING_SIZE);
    }

    /** @param ringSize records claimed and not yet written at most, a power of two (small ones for tests) */
    Journal(Path directory, SyncPolicy policy, long segmentBytes, int ringSize) {
        if (segmentBytes <= 0) {
            throw new IllegalArgumentException("segment size must be > 0");
        }
        if (Integer.bitCount(ringSize) != 1) {
            throw new IllegalArgumentException("ring size must be a power of two");
        }
        this.ringSize = ringSize;
        this.ringMask = ringSize - 1;
        this.records = new ByteBuf[ringSize];
        this.locations = new long[ringSize];
        this.callbacks = new Runnable[ringSize];
        this.directory = directory;
        this.policy = policy;
        this.segmentBytes = segmentBytes;
        // a Netty thread, as the event loops are: the records it releases go back to the pool through its
        // thread cache, whose entries Netty's recycler reuses only on such threads
        this.writer = new FastThreadLocalThread(this::writeLoop, "skiffmq-journal-" + directory.getFileName());
        this.writer.setDaemon(true);
        try {
            Files.createDirectories(directory);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create journal directory " + directory, e);
        }
    }

    /** Starts writing, into a segment newer than any on disk; call after {@link #replay}. */
    public synchronized Journal start() {
        if (next.get() != NOT_STARTED) {
            throw new IllegalStateException("journal already started");
        }
        List<Long> existing = segments();
        long first = existing.isEmpty() ? 1 : existing.get(existing.size() - 1) + 1;
        appendSegment = new AppendSegment(first, 0, occupancyOf(first));
        writerSegment = first;
        next.set(location(first, 0));
        writer.start();
        return this;
    }

    /** As {@link #append(ByteBuf, boolean, Runnable)} for a record that holds no message (an ack, say). */
    public long append(ByteBuf record, Runnable durable) {
        return append(record, false, durable);
    }

    /**
     * Queues a record (built with {@link JournalRecord}) to be written; {@code durable} runs on the writer thread
     * once it is as durable as the policy promises. Waits only when the ring is full: {@link #RING_SIZE} records
     * already wait for the disk.
     *
     * @param record the record's bytes; the journal releases them
     * @param holdsMessage the record holds a live message: its segment is kept until {@link #release} of it
     * @param durable may be null
     * @return the record's location
     * @throws IllegalStateException when the journal is closed or has failed (the record is released)
     */
    public long append(ByteBuf record, boolean holdsMessage, Runnable durable) {
        AppendSegment segment;
        long location;
        while (true) {
            segment = appendSegment;
            location = next.get();
            if (location < 0) {
                if (location != ROLLING) {
                    record.release();
                    throw refused();
                }
                Thread.onSpinWait();
            } else if (segmentOf(location) == segment.number && next.compareAndSet(location, location + 1)) {
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

    private IllegalStateException refused() {
        Throwable cause = failure;
        return new IllegalStateException(cause != null ? "journal failed: " + cause
            : next.get() == NOT_STARTED ? "journal is not started" : "journal is closed");
    }

    /** The ring is full: waits for the writer to free the slot of {@code sequence}. */
    private void awaitRoom(long sequence) {
        if (Thread.currentThread() == writer) {
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
            if (location != ROLLING && segmentOf(location) != full.number) {
                return false;
            }
        } while (location == ROLLING || !next.compareAndSet(location, ROLLING));
        long number = full.number + 1;
        appendSegment = new AppendSegment(number, full.base + (location & 0xffff_ffffL), occupancyOf(number));
        next.set(location(number, 0));
        return true;
    }

    private Occupancy occupancyOf(long segment) {
        return occupancy.computeIfAbsent(segment, s -> new Occupancy());
    }

    /** The ring sequence the next append will get, or -1 once appends are refused. */
    private long claimed() {
        while (true) {
            AppendSegment segment = appendSegment;
            long location = next.get();
            if (location < 0 && location != ROLLING) {
                return -1;
            }
            if (location != ROLLING && segmentOf(location) == segment.number) {
                return segment.base + (location & 0xffff_ffffL);
            }
            Thread.onSpinWait();
        }
    }

    /** Refuses appends from now on; returns the ring sequence where claims ended. */
    private long stopClaims() {
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
            if (location != ROLLING && segmentOf(location) == segment.number
                    && next.compareAndSet(location, CLOSED)) {
                claimsEnd = segment.base + (location & 0xffff_ffffL);
                return claimsEnd;
            }
            Thread.onSpinWait();
        }
    }

    private void wakeWriter() {
        writerParked.set(false);
        LockSupport.unpark(writer);
    }

    static long location(long segment, long ordinal) {
        return segment << 32 | ordinal;
    }

    /** The segment of a location. */
    public static long segmentOf(long location) {
        return location >>> 32;
    }

    /** A replayed message is still live: keep its segment until its {@link #release}. */
    public void recovered(long location) {
        occupancy.computeIfAbsent(segmentOf(location), s -> new Occupancy()).live.incrementAndGet();
    }

    /** {@code count} messages held in the segment of {@code location} are dead (acked, or copied forward). */
    public void release(long location, long count) {
        long segment = segmentOf(location);
        AppendSegment appending = appendSegment;
        // most acks are of recent messages: their segment's count is at hand, with no boxed map lookup
        Occupancy o = appending != null && appending.number == segment ? appending.occupancy : occupancy.get(segment);
        if (o == null) {
            throw new IllegalStateException("segment " + segment + " released but never held");
        }
        if (o.live.addAndGet(-count) < 0) {
            o.live.addAndGet(count);
            throw new IllegalStateException("segment " + segment + " released more often than held");
        }
    }

    /** Live messages in {@code segment}. */
    public long live(long segment) {
        Occupancy o = occupancy.get(segment);
        return o == null ? 0 : o.live.get();
    }

    /** Messages written to {@code segment}, live or not. */
    public long written(long segment) {
        Occupancy o = occupancy.get(segment);
        return o == null ? 0 : o.written.get();
    }

    /** True once the record at {@code location} can be {@link #read} (written, if not yet synced). */
    public boolean isWritten(long location) {
        return location <= writtenThrough;
    }

    /**
     * The record at {@code location}, read back from disk, from any thread.
     *
     * @return a heap copy of the record, which needs no release
     * @throws IllegalStateException when there is no record there (its segment was deleted, or it is not
     *         {@link #isWritten written} yet)
     */
    public ByteBuf read(long location) {
        long segment = segmentOf(location);
        Reader reader = readers.computeIfAbsent(segment, s -> new Reader(open(s)));
        synchronized (reader) {
            if (reader.closed) {
                throw new IllegalStateException("journal segment " + segment + " is deleted");
            }
            long index = reader.queue.rollCycle().toIndex(reader.cycle, location & 0xffff_ffffL);
            if (!reader.tailer.moveToIndex(index)) {
                throw new IllegalStateException("no journal record at " + segment + "/" + (location & 0xffff_ffffL));
            }
            try (DocumentContext document = reader.tailer.readingDocument()) {
                if (!document.isPresent()) {
                    throw new IllegalStateException("no journal record at " + segment + "/" + (location & 0xffff_ffffL));
                }
                return Unpooled.wrappedBuffer(document.wire().bytes().toByteArray());
            }
        }
    }

    /**
     * Moves writing to a new segment when the current one holds {@code minBytes} or more and no live message,
     * so the current one can be deleted too: an idle journal then shrinks to almost nothing.
     *
     * @return true when it rolled
     */
    public boolean rollIfDead(long minBytes) {
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

    /** Completes once every record appended before this call is durable. */
    public CompletableFuture<Void> flush() {
        CompletableFuture<Void> flushed = new CompletableFuture<>();
        long through = claimed();
        if (through < 0) {
            flushed.completeExceptionally(refused());
            return flushed;
        }
        flushes.add(new Flush(through, flushed));
        wakeWriter();
        if (writerDone) {
            completeFlushes(); // the writer ended after claimed() above: nobody else will
        }
        return flushed;
    }

    /** Completes the waiting flushes that are durable; once the writer is done, fails the rest. */
    private void completeFlushes() {
        long durable = consumed;
        for (Flush f; (f = flushes.peek()) != null; ) {
            if (f.through() <= durable) {
                if (flushes.remove(f)) {
                    f.flushed().complete(null);
                }
            } else if (writerDone) {
                if (flushes.remove(f)) {
                    f.flushed().completeExceptionally(refused());
                }
            } else {
                return; // the writer completes it later (flushes are near enough in order: few and rare)
            }
        }
    }

    /** How many syncs the journal has made: with group commit, far fewer than records. */
    public long syncs() {
        return syncs.get();
    }

    /** The segment being written; every older one is closed. */
    public long writerSegment() {
        return writerSegment;
    }

    /** The segments on disk, oldest first. */
    public List<Long> segments() {
        try (Stream<Path> files = Files.list(directory)) {
            return files.map(p -> p.getFileName().toString()).filter(n -> n.startsWith(SEGMENT_PREFIX))
                .map(n -> Long.parseLong(n.substring(SEGMENT_PREFIX.length()))).sorted().toList();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot list journal directory " + directory, e);
        }
    }

    private Path segmentDirectory(long segment) {
        return directory.resolve(String.format("%s%09d", SEGMENT_PREFIX, segment));
    }

    /**
     * Deletes a closed segment's files. The caller knows that none of its records is needed any more, and that
     * every older segment is gone: a segment may hold acks for messages in older ones.
     */
    public void deleteSegment(long segment) {
        if (segment >= writerSegment) {
            throw new IllegalArgumentException("segment " + segment + " is still being written");
        }
        occupancy.remove(segment);
        Reader reader = readers.remove(segment);
        if (reader != null) {
            synchronized (reader) {
                reader.close();
            }
        }
        try (Stream<Path> walk = Files.walk(segmentDirectory(segment))) {
            for (Path p : walk.sorted(Comparator.reverseOrder()).toList()) {
                Files.delete(p);
            }
            // deletions reach the disk in order, so a later segment never goes while an earlier one comes back
            syncDirectory();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot delete journal segment " + segment, e);
        }
    }

    private SingleChronicleQueue open(long segment) {
        return SingleChronicleQueueBuilder.binary(segmentDirectory(segment))
            .syncMode(policy == SyncPolicy.SYNC ? SyncMode.SYNC : SyncMode.NONE)
            // one cycle per segment: a frozen clock never rolls it, so ordinals are Chronicle sequence numbers
            .timeProvider(new SetTimeProvider(Instant.now())).build();
    }

    private void writeLoop() {
        long open = writerSegment;
        SingleChronicleQueue queue = null;
        ExcerptAppender appender = null;
        long taken = consumed; // the ring sequence of the next slot to take
        int batchLimit = Math.min(MAX_BATCH, ringSize);
        int count = 0;
        int done = 0;
        try {
            queue = open(open);
            syncDirectory();
            appender = queue.createAppender();
            while (true) {
                count = 0;
                done = 0;
                while (count < batchLimit && SLOT.getVolatile(records, (int) (taken + count & ringMask)) != null) {
                    count++;
                }
                if (count == 0) {
                    AppendSegment appending = appendSegment;
                    if (appending.number > open && appending.base == taken) {
                        // a roll with no record behind it yet (rollIfDead): every older record is written
                        queue = nextSegment(appender, queue, appending.number);
                        appender = queue.createAppender();
                        open = appending.number;
                        continue;
                    }
                    completeFlushes();
                    if (taken == claimsEnd) {
                        return; // closed, and everything claimed is written
                    }
                    idle(taken);
                    continue;
                }
                long last = -1;
                for (done = 0; done < count; done++) {
                    int slot = (int) (taken + done & ringMask);
                    long location = locations[slot];
                    if (segmentOf(location) != open) {
                        queue = nextSegment(appender, queue, segmentOf(location));
                        appender = queue.createAppender();
                        open = segmentOf(location);
                    }
                    ByteBuf record = records[slot];
                    records[slot] = null;
                    try {
                        write(appender, record);
                    } finally {
                        record.release();
                    }
                    written++;
                    last = location;
                }
                writtenThrough = last;
                sync(appender);
                for (int i = 0; i < count; i++) {
                    int slot = (int) (taken + i & ringMask);
                    Runnable durable = callbacks[slot];
                    if (durable != null) {
                        callbacks[slot] = null;
                        try {
                            durable.run();
                        } catch (RuntimeException e) {
                            LOG.log(System.Logger.Level.ERROR, "journal callback failed", e);
                        }
                    }
                }
                taken += count;
                consumed = taken;
                count = 0;
            }
        } catch (Throwable t) {
            fail(t, taken, count, done);
        } finally {
            if (appender != null) {
                appender.close();
            }
            if (queue != null) {
                queue.close();
            }
            writerDone = true;
            completeFlushes();
            LOG.log(System.Logger.Level.INFO, "journal {0} closed: {1} records written in {2} syncs since the start",
                directory, written, syncs.get());
        }
    }

    /** Appends one record; from a direct buffer's memory with no object made, else through a wrapping copy. */
    private void write(ExcerptAppender appender, ByteBuf record) {
        if (record.hasMemoryAddress()) {
            recordBytes.set(record.memoryAddress() + record.readerIndex(), record.readableBytes());
            appender.writeBytes(recordBytes);
        } else {
            appender.writeBytes(Bytes.wrapForRead(record.nioBuffer()));
        }
    }

    /** Leaves the open segment (durable first, as it is complete) for {@code segment}; returns the new queue. */
    private SingleChronicleQueue nextSegment(ExcerptAppender appender, SingleChronicleQueue queue, long segment)
            throws IOException {
        sync(appender);
        appender.close();
        queue.close();
        SingleChronicleQueue opened = open(segment);
        syncDirectory(); // the new segment's directory entry survives a power cut too
        writerSegment = segment;
        return opened;
    }

    /** Parks until a slot is published, a flush or a close arrives; {@link #writerParked} makes appenders wake it. */
    private void idle(long taken) {
        writerParked.set(true);
        // a last look after the flag is set: a record published before it was seen is caught here
        if (SLOT.getVolatile(records, (int) (taken & ringMask)) == null && flushes.isEmpty() && claimsEnd < 0) {
            // no timeout: every path that makes work unparks the writer (an append through the flag, flush,
            // rollIfDead and close always), and the permit outlives a wake-up that comes before the park
            LockSupport.park(this);
        }
        writerParked.set(false);
    }

    /**
     * The writer cannot go on (a full disk, an I/O error, a bug): nothing more is confirmed or accepted, and what
     * was pending is let go unconfirmed. Its publishers wait for confirms that never come, which is the promise:
     * nothing is confirmed that is not on disk.
     *
     * @param taken the ring sequence of the failed batch's first slot
     * @param count the slots in that batch
     * @param done how many of them were written (and released)
     */
    private void fail(Throwable cause, long taken, int count, int done) {
        LOG.log(System.Logger.Level.ERROR, "journal " + directory + " failed: durable messages are no longer "
            + "confirmed; restart the broker once the cause is fixed", cause);
        failure = cause;
        long end = stopClaims();
        for (long sequence = taken; sequence < end; sequence++) {
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

    private void syncDirectory() throws IOException {
        try (java.nio.channels.FileChannel dir = java.nio.channels.FileChannel.open(directory,
                java.nio.file.StandardOpenOption.READ)) {
            dir.force(true);
        }
    }

    private void sync(ExcerptAppender appender) {
        if (policy == SyncPolicy.SYNC) {
            appender.sync();
            syncs.incrementAndGet();
        }
    }

    /**
     * Reads every record of every segment, oldest first, into {@code records}. A record that is cut short or
     * corrupt ends its segment with a warning: nothing after it in that segment was ever confirmed, and later
     * segments were begun after a restart.
     *
     * @return the number of records read
     */
    public long replay(RecordHandler records) {
        long count = 0;
        for (long segment : segments()) {
            try (SingleChronicleQueue queue = open(segment); ExcerptTailer tailer = queue.createTailer().toStart()) {
                count += replay(segment, tailer, records);
            }
        }
        return count;
    }

    private long replay(long segment, ExcerptTailer tailer, RecordHandler records) {
        long ordinal = 0;
        long count = 0;
        while (true) {
            try (DocumentContext document = tailer.readingDocument()) {
                if (!document.isPresent()) {
                    return count;
                }
                ByteBuf buf = Unpooled.wrappedBuffer(document.wire().bytes().toByteArray());
                try {
                    JournalRecord.Read record = JournalRecord.read(buf);
                    if (record.type() == RecordType.PUBLISH) {
                        occupancy.computeIfAbsent(segment, s -> new Occupancy()).written.incrementAndGet();
                    }
                    records.record(record, location(segment, ordinal++));
                    count++;
                } catch (JournalRecord.Corrupt e) {
                    LOG.log(System.Logger.Level.WARNING, "journal segment {0} ends at a damaged record after {1} good "
                        + "ones; the rest of it was never confirmed and is cut off: {2}", segment, count, e.getMessage());
                    return count;
                }
            }
        }
    }

    /** Writes and confirms what is pending, then stops the writer and closes the files. */
    @Override
    public void close() {
        if (next.compareAndSet(NOT_STARTED, CLOSED)) {
            claimsEnd = 0;
        } else {
            stopClaims();
        }
        if (writer.isAlive()) {
            wakeWriter();
            try {
                writer.join();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        for (Reader reader : readers.values()) {
            synchronized (reader) {
                reader.close();
            }
        }
        readers.clear();
    }
}
