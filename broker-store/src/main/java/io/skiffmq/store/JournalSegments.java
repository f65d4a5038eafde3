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

    private final Path directory;
    private final Journal.SyncPolicy policy;

    JournalSegments(Path directory, Journal.SyncPolicy policy) {
        this.directory = directory;
        this.policy = policy;
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

    /** Opens (creating if need be) a segment's queue, syncing as the journal's policy says. */
    SingleChronicleQueue open(long segment) {
        return SingleChronicleQueueBuilder.binary(path(segment))
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

    private Path path(long segment) {
        return directory.resolve(String.format("%s%09d", SEGMENT_PREFIX, segment));
    }
}
