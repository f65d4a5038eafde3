package io.skiffmq.store;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.Stream;
import net.openhft.chronicle.bytes.Bytes;
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
 * <p>Threads: {@link #append} from any thread (segment numbers are handed out under a lock, so they rise in the
 * order records are queued); the Chronicle appender belongs to the writer thread alone, as Chronicle requires.
 * {@link #replay} runs before {@link #start}.
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

    /** A record to write and what to run once it is durable; a null record is a barrier ({@link #flush}). */
    private record Pending(ByteBuf record, long location, Runnable durable) {
        long segment() {
            return segmentOf(location);
        }
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

    private final Path directory;
    private final SyncPolicy policy;
    private final long segmentBytes;
    private final ConcurrentLinkedQueue<Pending> pending = new ConcurrentLinkedQueue<>();
    private final Thread writer;
    private final AtomicLong syncs = new AtomicLong();
    /** Records written; the writer thread's. */
    private long written;
    private final java.util.concurrent.ConcurrentHashMap<Long, Occupancy> occupancy =
        new java.util.concurrent.ConcurrentHashMap<>();
    /** Set under {@code this}, so no append slips in after the writer's last drain. */
    private volatile boolean closing;
    /** Why the writer stopped, if it failed; set under {@code this}. */
    private volatile Throwable failure;

    private final java.util.concurrent.ConcurrentHashMap<Long, Reader> readers =
        new java.util.concurrent.ConcurrentHashMap<>();
    /** Guarded by {@code this}: the segment records are being queued for, the bytes and records queued for it. */
    private long appendSegment;
    private long appendBytes;
    private long appendOrdinal;
    /** The occupancy of {@link #appendSegment} once it holds a message, so appends skip the map lookup. */
    private Occupancy appendOccupancy;
    /** The location of the last record the writer has handed to Chronicle: readable from then on. */
    private volatile long writtenThrough = -1;
    /** The segment the writer has open; every older one is closed and may be deleted. */
    private volatile long writerSegment;

    public Journal(Path directory, SyncPolicy policy) {
        this(directory, policy, DEFAULT_SEGMENT_BYTES);
    }

    /** @param segmentBytes bytes of records after which writing moves to a new segment */
    public Journal(Path directory, SyncPolicy policy, long segmentBytes) {
        if (segmentBytes <= 0) {
            throw new IllegalArgumentException("segment size must be > 0");
        }
        this.directory = directory;
        this.policy = policy;
        this.segmentBytes = segmentBytes;
        this.writer = new Thread(this::writeLoop, "skiffmq-journal-" + directory.getFileName());
        this.writer.setDaemon(true);
        try {
            Files.createDirectories(directory);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create journal directory " + directory, e);
        }
    }

    /** Starts writing, into a segment newer than any on disk; call after {@link #replay}. */
    public synchronized Journal start() {
        List<Long> existing = segments();
        appendSegment = existing.isEmpty() ? 1 : existing.get(existing.size() - 1) + 1;
        writerSegment = appendSegment;
        writer.start();
        return this;
    }

    /** As {@link #append(ByteBuf, boolean, Runnable)} for a record that holds no message (an ack, say). */
    public long append(ByteBuf record, Runnable durable) {
        return append(record, false, durable);
    }

    /**
     * Queues a record (built with {@link JournalRecord}) to be written; {@code durable} runs on the writer thread
     * once it is as durable as the policy promises.
     *
     * @param record the record's bytes; the journal releases them
     * @param holdsMessage the record holds a live message: its segment is kept until {@link #release} of it
     * @param durable may be null
     * @return the record's location
     */
    public long append(ByteBuf record, boolean holdsMessage, Runnable durable) {
        long location;
        synchronized (this) {
            if (closing || failure != null) {
                record.release();
                throw new IllegalStateException(closing ? "journal is closed" : "journal failed: " + failure);
            }
            if (appendBytes > 0 && appendBytes + record.readableBytes() > segmentBytes) {
                nextSegment();
            }
            appendBytes += record.readableBytes();
            location = location(appendSegment, appendOrdinal++);
            if (holdsMessage) {
                // counted before the writer can move past the segment, so it is never seen empty too early
                if (appendOccupancy == null) {
                    appendOccupancy = occupancy.computeIfAbsent(appendSegment, s -> new Occupancy());
                }
                appendOccupancy.written.incrementAndGet();
                appendOccupancy.live.incrementAndGet();
            }
            pending.add(new Pending(record, location, durable));
        }
        LockSupport.unpark(writer);
        return location;
    }

    static long location(long segment, long ordinal) {
        return segment << 32 | ordinal;
    }

    /** The segment of a location. */
    public static long segmentOf(long location) {
        return location >>> 32;
    }

    /** Holds {@code this}. */
    private void nextSegment() {
        appendSegment++;
        appendBytes = 0;
        appendOrdinal = 0;
        appendOccupancy = null;
    }

    /** A replayed message is still live: keep its segment until its {@link #release}. */
    public void recovered(long location) {
        occupancy.computeIfAbsent(segmentOf(location), s -> new Occupancy()).live.incrementAndGet();
    }

    /** {@code count} messages held in the segment of {@code location} are dead (acked, or copied forward). */
    public void release(long location, long count) {
        long segment = segmentOf(location);
        Occupancy o = occupancy.get(segment);
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
        synchronized (this) {
            if (closing || failure != null || appendBytes < minBytes || live(appendSegment) > 0) {
                return false;
            }
            nextSegment();
            pending.add(new Pending(null, location(appendSegment, 0), null));
        }
        LockSupport.unpark(writer);
        return true;
    }

    /** Completes once every record appended before this call is durable. */
    public CompletableFuture<Void> flush() {
        CompletableFuture<Void> flushed = new CompletableFuture<>();
        synchronized (this) {
            if (closing || failure != null) {
                flushed.completeExceptionally(new IllegalStateException(closing ? "journal is closed"
                    : "journal failed: " + failure));
                return flushed;
            }
            pending.add(new Pending(null, -1, () -> flushed.complete(null)));
        }
        LockSupport.unpark(writer);
        return flushed;
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
        List<Pending> batch = new ArrayList<>(MAX_BATCH);
        int done = 0;
        long last = -1;
        try {
            queue = open(open);
            syncDirectory();
            appender = queue.createAppender();
            while (!closing || !pending.isEmpty()) {
                for (Pending p; batch.size() < MAX_BATCH && (p = pending.poll()) != null; ) {
                    batch.add(p);
                }
                if (batch.isEmpty()) {
                    // append unparks; the timeout only bounds how long close() waits to be noticed
                    LockSupport.parkNanos(this, 100_000_000);
                    continue;
                }
                for (done = 0; done < batch.size(); done++) {
                    Pending p = batch.get(done);
                    ByteBuf record = p.record();
                    if (record == null && p.location() < 0) {
                        continue; // a flush barrier
                    }
                    if (p.segment() != open) {
                        // the old segment is complete: make it durable before leaving it
                        sync(appender);
                        appender.close();
                        queue.close();
                        open = p.segment();
                        queue = open(open);
                        syncDirectory(); // the new segment's directory entry survives a power cut too
                        appender = queue.createAppender();
                        writerSegment = open;
                    }
                    if (record == null) {
                        continue; // a roll: the new segment is open
                    }
                    appender.writeBytes(Bytes.wrapForRead(record.nioBuffer()));
                    record.release();
                    written++;
                    last = p.location();
                }
                writtenThrough = last;
                sync(appender);
                for (Pending p : batch) {
                    if (p.durable() != null) {
                        try {
                            p.durable().run();
                        } catch (RuntimeException e) {
                            LOG.log(System.Logger.Level.ERROR, "journal callback failed", e);
                        }
                    }
                }
                batch.clear();
                done = 0;
            }
        } catch (Throwable t) {
            fail(t, batch, done);
        } finally {
            if (appender != null) {
                appender.close();
            }
            if (queue != null) {
                queue.close();
            }
            LOG.log(System.Logger.Level.INFO, "journal {0} closed: {1} records written in {2} syncs since the start",
                directory, written, syncs.get());
        }
    }

    /**
     * The writer cannot go on (a full disk, an I/O error, a bug): nothing more is confirmed or accepted, and what
     * was pending is let go unconfirmed. Its publishers wait for confirms that never come, which is the promise:
     * nothing is confirmed that is not on disk.
     */
    private void fail(Throwable cause, List<Pending> batch, int done) {
        LOG.log(System.Logger.Level.ERROR, "journal " + directory + " failed: durable messages are no longer "
            + "confirmed; restart the broker once the cause is fixed", cause);
        synchronized (this) {
            failure = cause;
        }
        for (int i = done; i < batch.size(); i++) {
            ByteBuf record = batch.get(i).record();
            if (record != null && record.refCnt() > 0) {
                record.release();
            }
        }
        for (Pending p; (p = pending.poll()) != null; ) {
            if (p.record() != null) {
                p.record().release();
            }
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
        synchronized (this) {
            closing = true;
        }
        if (writer.isAlive()) {
            LockSupport.unpark(writer);
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
