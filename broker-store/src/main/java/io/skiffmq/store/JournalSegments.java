package io.skiffmq.store;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Instant;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.Stream;
import net.openhft.chronicle.bytes.SyncMode;
import net.openhft.chronicle.core.time.SetTimeProvider;
import net.openhft.chronicle.queue.impl.single.SingleChronicleQueue;
import net.openhft.chronicle.queue.impl.single.SingleChronicleQueueBuilder;

/**
 * A journal's segments on disk: each a Chronicle queue in its own directory ({@code segment-000000001}, …) under
 * the journal's directory, opened as one cycle with a frozen clock so that ordinals are Chronicle sequence numbers.
 * Directory changes (a new segment, a deleted one) are made durable with a sync of the journal's directory, so they
 * reach the disk in order. Holds no mutable state: any thread may call it, and the {@link Journal} decides who does.
 */
final class JournalSegments {
    private static final String SEGMENT_PREFIX = "segment-";

    /** Chronicle's default block: the mapping unit of a segment's file. */
    static final long DEFAULT_BLOCK_SIZE = 64L << 20;
    /**
     * Room in a record beyond its message: the record's own fields, the exchange and routing key, a 0-9-1
     * message's properties (one content header frame).
     */
    static final long RECORD_HEADROOM = 1L << 20;
    /** Bytes a deleted segment's file is shortened by at a time, and the pause after each ({@link #shrink}). */
    static final long SHRINK_STEP = 1L << 20;
    static final long SHRINK_PAUSE_NANOS = 5_000_000;

    private final Path directory;
    private final Journal.SyncPolicy policy;
    private final long blockSize;

    /** @param blockSize Chronicle's block size for the segments' files ({@link #blockSizeFor}) */
    JournalSegments(Path directory, Journal.SyncPolicy policy, long blockSize) {
        this.directory = directory;
        this.policy = policy;
        this.blockSize = blockSize;
        try {
            Files.createDirectories(directory);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create journal directory " + directory, e);
        }
    }

    Path directory() {
        return directory;
    }

    /** The segments on disk, oldest first. */
    List<Long> list() {
        try (Stream<Path> files = Files.list(directory)) {
            return files.map(p -> p.getFileName().toString()).filter(n -> n.startsWith(SEGMENT_PREFIX))
                .map(n -> Long.parseLong(n.substring(SEGMENT_PREFIX.length()))).sorted().toList();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot list journal directory " + directory, e);
        }
    }

    /**
     * A block size whose excerpts hold a record of a message of {@code maxMessageBytes}: Chronicle writes no excerpt
     * larger than a quarter of a block, and a larger record failed the journal, with every durable message after
     * it (16 MiB messages in 64 MiB blocks). The default block, or four records' worth in whole MiB.
     */
    static long blockSizeFor(long maxMessageBytes) {
        long quarter = maxMessageBytes + RECORD_HEADROOM;
        return Math.max(DEFAULT_BLOCK_SIZE, (4 * quarter + (1 << 20) - 1) & -(1L << 20));
    }

    /** Opens (creating if need be) a segment's queue, syncing as the journal's policy says. */
    SingleChronicleQueue open(long segment) {
        return SingleChronicleQueueBuilder.binary(path(segment)).blockSize(blockSize)
            .syncMode(policy == Journal.SyncPolicy.SYNC ? SyncMode.SYNC : SyncMode.NONE)
            // one cycle per segment: a frozen clock never rolls it, so ordinals are Chronicle sequence numbers
            .timeProvider(new SetTimeProvider(Instant.now())).build();
    }

    /**
     * Opens a segment before it is written, with its cycle file made and, under {@link Journal.SyncPolicy#SYNC},
     * durable with Chronicle's metadata and the directory entries; a roll to it then only swaps queues. Made on the
     * writer thread at each roll, they held every confirm for 12 to 30 ms (docs/storage.md, "Segments made ahead").
     */
    SingleChronicleQueue prepare(long segment) throws IOException {
        SingleChronicleQueue queue = open(segment);
        try {
            queue.closeStore(queue.storeForCycle(queue.cycle(), queue.epoch(), true, null));
            if (policy == Journal.SyncPolicy.SYNC) {
                // the cycle file, and Chronicle's metadata, whose directory listing a replay finds the cycle by
                try (Stream<Path> made = Files.list(path(segment))) {
                    for (Path file : made.toList()) {
                        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.WRITE)) {
                            channel.force(true);
                        }
                    }
                }
                syncDirectory(path(segment));
                syncDirectory(directory);
            }
            return queue;
        } catch (IOException | RuntimeException e) {
            queue.close();
            throw e;
        }
    }

    /**
     * Deletes a segment's files, durably: a later segment never goes while an earlier one comes back.
     *
     * @param paced free the data file's blocks a {@link #SHRINK_STEP} at a time first ({@link #shrink}), unless the
     *        thread is interrupted; false for a file that holds nothing
     */
    void delete(long segment, boolean paced) {
        // cleared while the files go, as NIO closes a channel used on an interrupted thread; then set again
        boolean interrupted = Thread.interrupted();
        try (Stream<Path> walk = Files.walk(path(segment))) {
            for (Path p : walk.sorted(Comparator.reverseOrder()).toList()) {
                if (paced && !interrupted && p.getFileName().toString().endsWith(SingleChronicleQueue.SUFFIX)) {
                    interrupted = shrink(p);
                }
                Files.delete(p);
            }
            syncDirectory();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot delete journal segment " + segment, e);
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /**
     * Truncates a file to nothing a step at a time, with a pause after each. Freeing a 64 MiB segment's blocks at
     * once made the file system's next journal commit take 50 to 100 ms on a disk mounted with {@code discard}, and
     * every journal sync waited for that commit; a step of 1 MiB costs the sync that commits it 1 to 3 ms
     * (docs/storage.md, "Segments deleted a step at a time").
     *
     * @return true when an interrupt (the store closing) ended the pacing, cleared: the rest goes at once
     */
    private static boolean shrink(Path file) throws IOException {
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            long written = writtenEnd(channel);
            if (written < channel.size()) {
                channel.truncate(written); // a hole: it has no blocks to free, and pacing it would only wait
            }
            for (long size = written; size > 0; ) {
                size = Math.max(0, size - SHRINK_STEP);
                channel.truncate(size);
                LockSupport.parkNanos(SHRINK_PAUSE_NANOS);
                if (Thread.interrupted()) {
                    return true;
                }
            }
        }
        return false;
    }

    /**
     * Where the written part of a segment's file ends, rounded up to a {@link #SHRINK_STEP}: the end of the last step
     * that does not read as zeros. Chronicle writes a segment from the front, and its file (a block and more, 85 MiB at
     * the default block) is sparse past what was written, so a 16 MiB segment's file is mostly hole; paced over its
     * whole length, its deletion took as long as a full one's.
     */
    static long writtenEnd(FileChannel channel) throws IOException {
        ByteBuffer step = ByteBuffer.allocate((int) SHRINK_STEP);
        byte[] zeros = new byte[(int) SHRINK_STEP];
        long end = channel.size();
        while (end > 0) {
            long start = (end - 1) / SHRINK_STEP * SHRINK_STEP;
            step.clear().limit((int) (end - start));
            for (long at = start; step.hasRemaining(); ) {
                int read = channel.read(step, at);
                if (read < 0) {
                    break; // shortened meanwhile: what is missing reads as zeros
                }
                at += read;
            }
            if (Arrays.mismatch(step.array(), 0, step.position(), zeros, 0, step.position()) >= 0) {
                return end;
            }
            end = start;
        }
        return 0;
    }

    /** Makes the journal directory's entries (segments made or deleted) durable. */
    void syncDirectory() throws IOException {
        syncDirectory(directory);
    }

    private static void syncDirectory(Path dir) throws IOException {
        try (FileChannel channel = FileChannel.open(dir, StandardOpenOption.READ)) {
            channel.force(true);
        }
    }

    /** The file a segment's records are in (Chronicle's one cycle file); it exists once a record is written. */
    Path dataFile(long segment) {
        try (Stream<Path> files = Files.list(path(segment))) {
            return files.filter(p -> p.getFileName().toString().endsWith(SingleChronicleQueue.SUFFIX)).findFirst()
                .orElseThrow(() -> new IllegalStateException("journal segment " + segment + " has no data file"));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot list journal segment " + segment, e);
        }
    }

    private Path path(long segment) {
        return directory.resolve(String.format("%s%09d", SEGMENT_PREFIX, segment));
    }
}
