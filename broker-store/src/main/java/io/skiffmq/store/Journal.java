package io.skiffmq.store;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.util.concurrent.FastThreadLocalThread;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongConsumer;
import net.openhft.chronicle.bytes.Bytes;
import net.openhft.chronicle.bytes.PointerBytesStore;
import net.openhft.chronicle.queue.ExcerptAppender;
import net.openhft.chronicle.queue.ExcerptTailer;
import net.openhft.chronicle.queue.impl.single.SingleChronicleQueue;
import net.openhft.chronicle.wire.DocumentContext;

/**
 * The journal of one virtual host on Chronicle Queue, with group commit: any thread {@link #append}s a record and
 * a callback; one writer thread drains what is pending and appends it all, then hands the batch to a sync thread
 * ({@link JournalSync}) that makes it durable and runs its callbacks while the writer appends the next batch. A
 * batch ends when nothing more is pending or it reaches {@link #MAX_BATCH} records.
 *
 * <p>The journal is a run of numbered segments ({@link JournalSegments}), each a Chronicle queue in its own directory
 * ({@code segment-000000001}, …). Writing moves to a new segment once the current one holds {@code segmentBytes},
 * and every start opens a fresh segment, so nothing is ever appended after a record a crash may have torn. The next
 * segment is made ready while the current one is written ({@link SpareSegment}), so a roll only swaps them. A
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
 * <p><b>Handing records to the writer</b> takes no lock and, under load, no wake-up: an {@link AppendRing} claims
 * each record's location and holds it in its slot until the writer has written it. {@link #read} goes through a
 * {@link JournalReader}.
 *
 * <p>Threads: {@link #append} from any thread; the Chronicle appender and the open segment belong to the writer
 * thread alone, as Chronicle requires (the next segment is built on the {@link SpareSegment}'s thread and handed
 * over whole); {@link #replay} runs before {@link #start}. The appending side is the
 * {@link AppendRing}'s, written by appenders with atomics (see there); the ring's records once published are the
 * writer's; their callbacks, the ring's consumed position and the sync counters are the sync thread's (with
 * {@link SyncPolicy#OS}, the writer's: there is no sync thread). Flushes are completed by whoever frees slots, and
 * by {@link #flush} itself.
 */
public final class Journal implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(Journal.class.getName());
    /** Records per batch at most, so callbacks of early records are not held back by an endless stream. */
    public static final int MAX_BATCH = 4096;
    /** 16 MiB: a file written through its mapping syncs slower the more of it was written (docs/storage.md). */
    public static final long DEFAULT_SEGMENT_BYTES = 16L << 20;
    /** The broker's default {@code max-message-size}, 16 MiB (RabbitMQ 4's). */
    public static final long DEFAULT_MAX_MESSAGE_BYTES = 16L << 20;

    public enum SyncPolicy { SYNC, OS }

    /** Receives replayed records. */
    @FunctionalInterface
    public interface RecordHandler {
        /** @param record its message is a slice of a heap buffer of its own, which needs no release */
        void record(JournalRecord.Read record, long location);
    }

    /** Messages written to a segment, and how many of them are still live. */
    static final class Occupancy {
        final AtomicLong written = new AtomicLong();
        final AtomicLong live = new AtomicLong();
    }

    /** A {@link #flush} waiting for every record before ring sequence {@code through} to be durable. */
    private record Flush(long through, CompletableFuture<Void> flushed) {
    }

    private final JournalSegments files;
    private final SyncPolicy policy;
    private final LongConsumer beforeSync;
    private final Thread writer;
    private final AppendRing ring;
    private final JournalReader reader;
    private final AtomicLong syncs = new AtomicLong();
    private final JournalCounters counters = new JournalCounters();
    /** Records written; the writer thread's. */
    private long written;
    /** Points at the record being written, when it is off-heap; the writer thread's. */
    private final PointerBytesStore recordBytes = new PointerBytesStore();
    private final ConcurrentHashMap<Long, Occupancy> occupancy = new ConcurrentHashMap<>();
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
        this(directory, policy, segmentBytes, DEFAULT_MAX_MESSAGE_BYTES);
    }

    /**
     * @param segmentBytes bytes of records after which writing moves to a new segment
     * @param maxMessageBytes the largest message a record holds (the broker's {@code max-message-size}): the
     *        segments' Chronicle blocks are sized for it
     */
    public Journal(Path directory, SyncPolicy policy, long segmentBytes, long maxMessageBytes) {
        this(directory, policy, segmentBytes, maxMessageBytes, AppendRing.DEFAULT_SIZE);
    }

    /** @param ringSize records claimed and not yet written at most, a power of two (small ones for tests) */
    Journal(Path directory, SyncPolicy policy, long segmentBytes, long maxMessageBytes, int ringSize) {
        this(directory, policy, segmentBytes, maxMessageBytes, ringSize, through -> { });
    }

    /**
     * @param beforeSync called on the sync thread as each sync begins, with the ring sequence it covers (records
     *        below it): tests hold a sync there
     */
    Journal(Path directory, SyncPolicy policy, long segmentBytes, long maxMessageBytes, int ringSize,
            LongConsumer beforeSync) {
        if (segmentBytes <= 0) {
            throw new IllegalArgumentException("segment size must be > 0");
        }
        this.files = new JournalSegments(directory, policy, JournalSegments.blockSizeFor(maxMessageBytes));
        this.policy = policy;
        this.beforeSync = beforeSync;
        // a Netty thread, as the event loops are: the records it releases go back to the pool through its
        // thread cache, whose entries Netty's recycler reuses only on such threads
        this.writer = new FastThreadLocalThread(this::writeLoop, "skiffmq-journal-" + directory.getFileName());
        this.writer.setDaemon(true);
        this.ring = new AppendRing(ringSize, segmentBytes, writer, this::occupancyOf);
        this.reader = new JournalReader(files::open);
    }

    /** Starts writing, into a segment newer than any on disk; call after {@link #replay}. */
    public synchronized Journal start() {
        if (ring.started()) {
            throw new IllegalStateException("journal already started");
        }
        List<Long> existing = segments();
        long first = existing.isEmpty() ? 1 : existing.get(existing.size() - 1) + 1;
        writerSegment = first;
        ring.start(first);
        writer.start();
        return this;
    }

    /** As {@link #append(ByteBuf, boolean, Runnable)} for a record that holds no message (an ack, say). */
    public long append(ByteBuf record, Runnable durable) {
        return append(record, false, durable);
    }

    /**
     * Queues a record (built with {@link JournalRecord}) to be written; {@code durable} runs on the sync thread
     * (the writer thread with {@link SyncPolicy#OS}) once it is as durable as the policy promises. Waits only when the ring is full: {@link AppendRing#DEFAULT_SIZE}
     * records already wait for the disk.
     *
     * @param record the record's bytes; the journal releases them
     * @param holdsMessage the record holds a live message: its segment is kept until {@link #release} of it
     * @param durable may be null
     * @return the record's location
     * @throws IllegalStateException when the journal is closed or has failed (the record is released)
     */
    public long append(ByteBuf record, boolean holdsMessage, Runnable durable) {
        long location = ring.append(record, holdsMessage, durable);
        if (location < 0) {
            throw refused();
        }
        return location;
    }

    private IllegalStateException refused() {
        Throwable cause = failure;
        return new IllegalStateException(cause != null ? "journal failed: " + cause
            : !ring.started() ? "journal is not started" : "journal is closed");
    }

    private Occupancy occupancyOf(long segment) {
        return occupancy.computeIfAbsent(segment, s -> new Occupancy());
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
        AppendRing.AppendSegment appending = ring.appendSegment();
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
        return reader.read(location);
    }

    /**
     * Moves writing to a new segment when the current one holds {@code minBytes} or more and no live message,
     * so the current one can be deleted too: an idle journal then shrinks to almost nothing.
     *
     * @return true when it rolled
     */
    public boolean rollIfDead(long minBytes) {
        return ring.rollIfDead(minBytes);
    }

    /** Completes once every record appended before this call is durable. */
    public CompletableFuture<Void> flush() {
        CompletableFuture<Void> flushed = new CompletableFuture<>();
        long through = ring.claimed();
        if (through < 0) {
            flushed.completeExceptionally(refused());
            return flushed;
        }
        flushes.add(new Flush(through, flushed));
        // whoever confirms completes flushes after it frees slots; this look catches a confirm just before the add
        completeFlushes();
        return flushed;
    }

    /** Completes the waiting flushes that are durable; once the writer is done, fails the rest. */
    private void completeFlushes() {
        long durable = ring.consumed();
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

    /** What the writer counted (records, bytes, syncs and their time); read from any thread. */
    public JournalCounters counters() {
        return counters;
    }

    /** The segment being written; every older one is closed. */
    public long writerSegment() {
        return writerSegment;
    }

    /**
     * The segments on disk, oldest first; once writing, up to the one being written (the next one, made ready
     * ahead, holds nothing yet).
     */
    public List<Long> segments() {
        List<Long> all = files.list();
        long writing = writerSegment;
        return writing == 0 ? all : all.stream().filter(segment -> segment <= writing).toList();
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
        reader.close(segment);
        files.delete(segment, true);
    }

    private void writeLoop() {
        AppendRing ring = this.ring;
        long open = writerSegment;
        SingleChronicleQueue queue = null;
        ExcerptAppender appender = null;
        long taken = ring.consumed(); // the ring sequence of the next slot to take
        int batchLimit = Math.min(MAX_BATCH, ring.size());
        int count = 0;
        int done = 0;
        JournalSync sync = new JournalSync(policy == SyncPolicy.SYNC, files.directory().getFileName().toString(),
            taken, this::confirm, files::dataFile, counters, beforeSync, ring::wakeWriter, ring::confirmsOn);
        SpareSegment spare = new SpareSegment(files);
        try {
            queue = files.open(open);
            files.syncDirectory();
            appender = queue.createAppender();
            sync.segment(open);
            spare.prepare(open + 1);
            while (true) {
                done = 0;
                sync.check();
                count = ring.published(taken, batchLimit);
                if (count == 0) {
                    AppendRing.AppendSegment appending = ring.appendSegment();
                    if (appending.number > open && appending.base == taken) {
                        // a roll with no record behind it yet (rollIfDead): every older record is written
                        queue = nextSegment(sync, spare, appender, queue, appending.number);
                        appender = queue.createAppender();
                        open = appending.number;
                        continue;
                    }
                    if (taken == ring.claimsEnd()) {
                        return; // closed, and everything claimed is written (the sync thread drains below)
                    }
                    ring.idle(taken);
                    continue;
                }
                long last = -1;
                for (done = 0; done < count; done++) {
                    long location = ring.location(taken + done);
                    if (segmentOf(location) != open) {
                        if (last >= 0) {
                            writtenThrough = last;
                        }
                        sync.written(taken + done);
                        queue = nextSegment(sync, spare, appender, queue, segmentOf(location));
                        appender = queue.createAppender();
                        open = segmentOf(location);
                    }
                    ByteBuf record = ring.takeRecord(taken + done);
                    try {
                        counters.written(record.readableBytes());
                        write(appender, record);
                    } finally {
                        record.release();
                    }
                    written++;
                    last = location;
                }
                writtenThrough = last;
                taken += count;
                count = 0;
                // the sync thread syncs these and runs their callbacks while the next batch is written
                sync.written(taken);
            }
        } catch (Throwable t) {
            sync.stop(); // what was handed over is synced and confirmed first: it is all written
            fail(t, sync.synced(), taken, count, done);
        } finally {
            sync.stop();
            if (appender != null) {
                appender.close();
            }
            if (queue != null) {
                queue.close();
            }
            spare.close();
            writerDone = true;
            completeFlushes();
            LOG.log(System.Logger.Level.INFO, "journal {0} closed: {1} records written in {2} syncs since the start",
                files.directory(), written, syncs.get());
        }
    }

    /**
     * Runs the callbacks of ring sequences {@code [from, to)}, once they are as durable as the policy says, and
     * frees their slots; on the sync thread, or with {@link SyncPolicy#OS} the writer.
     */
    private void confirm(long from, long to) {
        if (policy == SyncPolicy.SYNC) {
            syncs.incrementAndGet();
        }
        for (long sequence = from; sequence < to; sequence++) {
            Runnable durable = ring.takeCallback(sequence);
            if (durable != null) {
                try {
                    durable.run();
                } catch (RuntimeException e) {
                    LOG.log(System.Logger.Level.ERROR, "journal callback failed", e);
                }
            }
        }
        ring.free(to);
        completeFlushes();
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
    private SingleChronicleQueue nextSegment(JournalSync sync, SpareSegment spare, ExcerptAppender appender,
            SingleChronicleQueue queue, long segment) throws IOException {
        sync.awaitSynced();
        long start = System.nanoTime();
        appender.close();
        queue.close();
        SingleChronicleQueue opened = spare.take(segment);
        spare.prepare(segment + 1);
        sync.segment(segment);
        writerSegment = segment;
        counters.rolled(System.nanoTime() - start);
        return opened;
    }

    /**
     * The writer cannot go on (a full disk, an I/O error, a bug): nothing more is confirmed or accepted, and what
     * was pending is let go unconfirmed. Its publishers wait for confirms that never come, which is the promise:
     * nothing is confirmed that is not on disk.
     *
     * @see AppendRing#discard
     */
    private void fail(Throwable cause, long synced, long taken, int count, int done) {
        LOG.log(System.Logger.Level.ERROR, "journal " + files.directory() + " failed: durable messages are no longer "
            + "confirmed; restart the broker once the cause is fixed", cause);
        failure = cause;
        ring.discard(synced, taken, count, done);
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
            try (SingleChronicleQueue queue = files.open(segment); ExcerptTailer tailer = queue.createTailer().toStart()) {
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
        ring.stopClaims();
        if (writer.isAlive()) {
            ring.wakeWriter();
            try {
                writer.join();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        reader.closeAll();
    }
}
