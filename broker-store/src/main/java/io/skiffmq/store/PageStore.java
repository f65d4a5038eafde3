package io.skiffmq.store;

import io.skiffmq.core.queue.PageFile;
import io.skiffmq.core.queue.QueuePages;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;

/**
 * Where a virtual host's queues page the messages past their memory limit: {@code paging/queue-N/lane-P/page-…}
 * ({@link SegmentPageFile}), one directory per queue made and one per priority lane that paged. Nothing here is
 * synced or recovered: whatever a previous run left is deleted when the store opens. Durable messages are in the
 * journal as well, which is what recovery reads.
 *
 * <p>Threads: {@link #queuePages} from any thread; each queue's pages on that queue's thread, but for their writes,
 * which one thread of the store's does (see {@link SegmentPageFile}).
 */
public final class PageStore {
    /** Bytes per page segment: reading frees disk a segment at a time. */
    public static final long DEFAULT_SEGMENT_BYTES = 16L << 20;

    private final Path directory;
    private final long segmentBytes;
    private final AtomicLong queues = new AtomicLong();
    /** Writes every page file's appended bytes, so no queue's thread waits for the disk to take them. */
    private final ExecutorService writer;
    /** Bytes appended and not written yet, all page files together (see {@link SegmentPageFile}). */
    private final AtomicLong unwritten = new AtomicLong();
    private final long unwrittenLimit;

    /**
     * Deletes what a previous run left in {@code directory}.
     *
     * @param unwrittenLimit bytes appended to page files and not yet written past which an append waits for the disk
     */
    public PageStore(Path directory, long segmentBytes, long unwrittenLimit) {
        this.directory = directory;
        this.segmentBytes = segmentBytes;
        this.unwrittenLimit = unwrittenLimit;
        deleteTree(directory);
        this.writer = Executors.newSingleThreadExecutor(task -> {
            Thread thread = new Thread(task, "skiffmq-page-writer");
            thread.setDaemon(true);
            return thread;
        });
    }

    /** Stops the writer once it has done what it was given; page files are not appended to after this. */
    public void close() {
        writer.shutdown();
    }

    /** The pages of a new queue; its directories are made when a lane first pages. */
    public QueuePages queuePages() {
        return new DirectoryPages(directory.resolve(String.format("queue-%06d", queues.incrementAndGet())));
    }

    private static void deleteTree(Path root) {
        if (!Files.exists(root)) {
            return;
        }
        try (Stream<Path> walk = Files.walk(root)) {
            for (Path p : walk.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot delete " + root, e);
        }
    }

    /** One queue's directory. Owned by the queue's thread. */
    private final class DirectoryPages implements QueuePages {
        private final Path queueDirectory;

        DirectoryPages(Path queueDirectory) {
            this.queueDirectory = queueDirectory;
        }

        @Override
        public PageFile lane(int lane) {
            Path laneDirectory = queueDirectory.resolve("lane-" + lane);
            try {
                Files.createDirectories(laneDirectory);
            } catch (IOException e) {
                throw new UncheckedIOException("cannot create " + laneDirectory, e);
            }
            return new SegmentPageFile(laneDirectory, segmentBytes, writer, unwritten, unwrittenLimit);
        }

        @Override
        public void delete() {
            deleteTree(queueDirectory);
        }

        /** Past half the bound: the queues' publishers are held before an append would wait at the bound. */
        @Override
        public boolean writesBehind() {
            return unwritten.get() > unwrittenLimit / 2;
        }
    }
}
