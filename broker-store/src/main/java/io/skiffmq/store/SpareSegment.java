package io.skiffmq.store;

import java.io.IOException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import net.openhft.chronicle.queue.impl.single.SingleChronicleQueue;

/**
 * The journal's next segment, made ready on a thread of its own while the writer fills the current one
 * ({@link JournalSegments#prepare}), so that a roll does not wait for a Chronicle queue to be built, its cycle file
 * made and synced, and its directories synced.
 *
 * <p>Threads: {@link #prepare}, {@link #take} and {@link #close} are the journal writer's; the preparation runs on
 * the spare's own thread and hands its queue over through the future.
 */
final class SpareSegment {
    private static final System.Logger LOG = System.getLogger(SpareSegment.class.getName());
    private static final long IDLE_SECONDS = 10;

    private final JournalSegments files;
    private final ExecutorService thread;
    /** The segment being made ready, and its queue once it is; null when none is. */
    private CompletableFuture<SingleChronicleQueue> spare;
    private long number;

    SpareSegment(JournalSegments files) {
        this.files = files;
        // one thread at most, gone when idle: a segment is made every few seconds at the most under load
        this.thread = new ThreadPoolExecutor(0, 1, IDLE_SECONDS, TimeUnit.SECONDS, new LinkedBlockingQueue<>(),
            task -> {
                Thread t = new Thread(task, "skiffmq-jspare-" + files.directory().getFileName());
                t.setDaemon(true);
                return t;
            });
    }

    /** Starts making {@code segment} ready. */
    void prepare(long segment) {
        number = segment;
        spare = CompletableFuture.supplyAsync(() -> {
            try {
                return files.prepare(segment);
            } catch (Exception e) {
                LOG.log(System.Logger.Level.WARNING, "journal segment " + segment + " could not be made ready ahead; "
                    + "the writer makes it when it gets there", e);
                return null;
            }
        }, thread);
    }

    /**
     * The queue of {@code segment}, made ready (waiting for it if it is not yet), or opened now, with the journal's
     * directory synced, when no spare of that number was made.
     */
    SingleChronicleQueue take(long segment) throws IOException {
        SingleChronicleQueue queue = spare != null && number == segment ? spare.join() : null;
        if (queue == null) {
            discard();
            queue = files.open(segment);
            files.syncDirectory(); // the new segment's directory entry survives a power cut too
        }
        spare = null;
        return queue;
    }

    /** Closes the spare, if any, and removes it: it holds no record. */
    void close() {
        discard();
        thread.shutdown();
    }

    private void discard() {
        if (spare == null) {
            return;
        }
        SingleChronicleQueue queue = spare.join();
        spare = null;
        if (queue != null) {
            queue.close();
            try {
                files.delete(number, false);
            } catch (RuntimeException e) {
                LOG.log(System.Logger.Level.WARNING, "journal segment " + number + ", made ready and never written, "
                    + "stays on disk; it is reclaimed as an empty segment", e);
            }
        }
    }
}
