package io.skiffmq.store;

import io.netty.util.concurrent.FastThreadLocalThread;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Consumer;
import java.util.function.LongConsumer;
import java.util.function.LongFunction;

/**
 * Confirms what a {@link Journal}'s writer has written: with {@link Journal.SyncPolicy#SYNC}, on a sync thread of
 * its own, so that the writer copies the next batch into the segment while this one is being synced; with
 * {@link Journal.SyncPolicy#OS}, on the writer thread, straight away (there is nothing to wait for).
 *
 * <p>The writer hands over ring sequences: {@link #written} says every record below {@code through} is in the
 * segment's mapping. The sync thread reads that position, syncs the segment's file (an {@code fdatasync}, which on
 * Linux writes the mapping's dirty pages as Chronicle's {@code msync} does), and only then runs the callbacks of
 * the records below the position it read and frees their slots in the {@link AppendRing}. A record's confirm thus
 * never runs before a sync that began after it was written.
 *
 * <p>A roll: before the writer closes a segment it {@link #awaitSynced waits} until everything written to it is
 * synced, then tells the new segment with {@link #segment} before it hands over any record of it, so a position
 * and the segment it is read with always agree (the writer cannot roll while a position of the old segment is
 * unsynced). A failed sync ends the sync thread: no callback runs after it, and the writer fails at its next
 * hand-over ({@link #check}). {@link #stop} drains: it returns once everything handed over is synced and confirmed
 * (or the sync failed).
 *
 * <p>Threads: {@link #written}, {@link #segment}, {@link #awaitSynced}, {@link #check} and {@link #stop} are the
 * writer thread's; {@link #handed} and {@link #segment} are written by it only. {@link #synced}, the open file and
 * the slots' callbacks between {@link #synced} and {@link #handed} are the sync thread's; it writes the ring's
 * consumed position and the sync counters (with OS, the writer does, as there is no sync thread).
 */
final class JournalSync {
    private static final System.Logger LOG = System.getLogger(JournalSync.class.getName());

    /** Runs the callbacks of ring sequences {@code [from, to)} and frees their slots. */
    interface Confirmer {
        void confirm(long from, long to);
    }

    private final Confirmer confirmer;
    private final LongFunction<Path> fileOf;
    private final JournalCounters counters;
    /** Called with the ring sequence a sync covers, on the sync thread, as it begins: for tests to hold a sync. */
    private final LongConsumer beforeSync;
    private final Runnable wakeWriter;
    /** The sync thread; null with {@link Journal.SyncPolicy#OS}. */
    private final Thread thread;

    /** Ring sequences below this are written to the segment; the writer's. */
    private volatile long handed;
    /** Ring sequences below this are synced and confirmed. */
    private volatile long synced;
    /** The segment being written; set before any of its records is handed over. */
    private volatile long segment = -1;
    private volatile boolean stopping;
    private volatile Throwable failure;
    /** The sync thread's open file, and the segment it belongs to. */
    private FileChannel file;
    private long fileSegment = -1;

    /**
     * @param syncs false with {@link Journal.SyncPolicy#OS}: confirms run at once, on the writer thread
     * @param start the ring sequence of the first record
     * @param fileOf the file of a segment to sync
     * @param wakeWriter unparks the writer, so it sees a failed sync
     * @param confirmsOn told the sync thread before it starts: callbacks run there
     */
    JournalSync(boolean syncs, String name, long start, Confirmer confirmer, LongFunction<Path> fileOf,
            JournalCounters counters, LongConsumer beforeSync, Runnable wakeWriter, Consumer<Thread> confirmsOn) {
        this.confirmer = confirmer;
        this.fileOf = fileOf;
        this.counters = counters;
        this.beforeSync = beforeSync;
        this.wakeWriter = wakeWriter;
        this.handed = start;
        this.synced = start;
        if (syncs) {
            // a Netty thread, as the writer is: callbacks release records, which go back to the pool through its
            // thread cache (named apart from "skiffmq-journal-", which tools take for the writer)
            thread = new FastThreadLocalThread(this::syncLoop, "skiffmq-jsync-" + name);
            thread.setDaemon(true);
            confirmsOn.accept(thread);
            thread.start();
        } else {
            thread = null;
        }
    }

    /** Writer thread: the records of {@code number} are handed over from now on. */
    void segment(long number) {
        segment = number;
    }

    /**
     * Writer thread: every record below ring sequence {@code through} is written; with no sync thread their
     * callbacks run now.
     *
     * @throws IOException when a sync has failed: nothing more is confirmed
     */
    void written(long through) throws IOException {
        check();
        if (through == handed) {
            return;
        }
        if (thread == null) {
            long from = handed;
            handed = through;
            confirmer.confirm(from, through);
            synced = through;
            return;
        }
        handed = through;
        LockSupport.unpark(thread);
    }

    /** Writer thread: waits until every record handed over is synced and confirmed (before a roll). */
    void awaitSynced() throws IOException {
        long target = handed;
        while (synced < target) {
            check();
            LockSupport.parkNanos(this, 50_000);
        }
    }

    /** Writer thread: throws if a sync failed. */
    void check() throws IOException {
        Throwable t = failure;
        if (t != null) {
            throw new IOException("journal sync failed", t);
        }
    }

    /** Ring sequences below this are synced and confirmed. */
    long synced() {
        return synced;
    }

    /** Writer thread: drains (everything handed over is synced and confirmed, unless a sync failed) and ends. */
    void stop() {
        if (thread == null) {
            return;
        }
        stopping = true;
        LockSupport.unpark(thread);
        boolean interrupted = false;
        while (thread.isAlive()) {
            try {
                thread.join();
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    private void syncLoop() {
        try {
            while (true) {
                long through = handed;
                if (through == synced) {
                    if (stopping && handed == synced) {
                        return;
                    }
                    LockSupport.park(this); // the writer unparks after each hand-over, and to stop
                    continue;
                }
                // read after the position: the segment it was written to, as a roll waits for this sync
                long number = segment;
                beforeSync.accept(through);
                long start = System.nanoTime();
                sync(number);
                counters.synced(System.nanoTime() - start);
                confirmer.confirm(synced, through);
                synced = through;
            }
        } catch (Throwable t) {
            LOG.log(System.Logger.Level.ERROR, "journal sync failed: nothing more is confirmed", t);
            failure = t;
            wakeWriter.run();
        } finally {
            closeFile();
        }
    }

    private void sync(long number) throws IOException {
        if (fileSegment != number) {
            closeFile();
            file = FileChannel.open(fileOf.apply(number), StandardOpenOption.READ, StandardOpenOption.WRITE);
            fileSegment = number;
        }
        file.force(false);
    }

    private void closeFile() {
        if (file != null) {
            try {
                file.close();
            } catch (IOException e) {
                LOG.log(System.Logger.Level.WARNING, "cannot close journal segment " + fileSegment, e);
            } finally {
                file = null;
                fileSegment = -1;
            }
        }
    }
}
