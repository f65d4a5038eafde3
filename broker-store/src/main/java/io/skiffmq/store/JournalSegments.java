package io.skiffmq.store;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Instant;
import java.util.Comparator;
import java.util.List;
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

    /** Deletes a segment's files, durably: a later segment never goes while an earlier one comes back. */
    void delete(long segment) {
        try (Stream<Path> walk = Files.walk(path(segment))) {
            for (Path p : walk.sorted(Comparator.reverseOrder()).toList()) {
                Files.delete(p);
            }
            syncDirectory();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot delete journal segment " + segment, e);
        }
    }

    /** Makes the journal directory's entries (segments made or deleted) durable. */
    void syncDirectory() throws IOException {
        try (FileChannel dir = FileChannel.open(directory, StandardOpenOption.READ)) {
            dir.force(true);
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
