package io.skiffmq.store.stream;

import static io.skiffmq.store.stream.ChunkDescriptor.*;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;
import net.openhft.chronicle.bytes.Bytes;
import net.openhft.chronicle.queue.ExcerptTailer;
import net.openhft.chronicle.queue.impl.single.SingleChronicleQueue;
import net.openhft.chronicle.wire.DocumentContext;

/**
 * Opens a stream log's segments, oldest first, and finds how far each is good.
 *
 * <ul>
 *   <li>A <b>sealed</b> segment (closed by a roll, a clean close or an earlier recovery) is trusted: its seal says
 *       how many index records are good, and only its last chunk's header is compared with the index.</li>
 *   <li>An <b>unsealed</b> one (being written when the broker stopped without closing it, kill -9 or power loss)
 *       is checked chunk by chunk, CRC included, then its Chronicle queue is read past the last good index record
 *       for chunks written but not indexed. The first damaged or torn chunk ends the segment: it and what follows
 *       are dropped, with a warning (none of it can have been confirmed under {@code sync}; under {@code os} a power
 *       loss may lose confirmed chunks, as documented). The segment is then sealed, and the log writes on in a new
 *       segment, so nothing is ever appended after damaged bytes.</li>
 *   <li>A segment with no chunk is deleted; one that cannot be read at all (its Chronicle files unreadable) is set
 *       aside as {@code damaged-segment-N}, logged, and left for an operator.</li>
 *   <li>Offsets must follow on across segments: a later segment starting below the end of the one before
 *       (impossible unless files were tampered with) is cut off with what follows it; one starting above it (a
 *       middle segment cut short) leaves a gap in the offsets, logged as an error.</li>
 * </ul>
 *
 * Then {@link #recoverTracking} replays stored offsets and producers' ids from the newest snapshot on. Runs on the
 * thread that opens the log, before anything else sees it.
 */
final class LogRecovery {
    private static final System.Logger LOG = System.getLogger(LogRecovery.class.getName());
    /** How long Chronicle may wait on a header it cannot read (its default, 10 s, is for a live writer). */
    private static final long SCAN_TIMEOUT_MS = 500;

    private final Path directory;
    private final int capacity;
    private final ChunkCheck check = new ChunkCheck();

    /** @param capacity chunks per segment, for an index that must be made anew */
    LogRecovery(Path directory, int capacity) {
        this.directory = directory;
        this.capacity = capacity;
    }

    /** The segments' numbers on disk, in order. */
    static List<Long> numbers(Path directory) {
        try (Stream<Path> files = Files.list(directory)) {
            return files.map(p -> p.getFileName().toString()).filter(n -> n.startsWith(Segment.PREFIX))
                .map(n -> Long.parseLong(n.substring(Segment.PREFIX.length()))).sorted().toList();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot list stream directory " + directory, e);
        }
    }

    /** @return the good segments, oldest first, each holding the log's reference */
    List<Segment> recover() {
        List<Long> numbers = numbers(directory);
        List<Segment> segments = new ArrayList<>();
        for (int i = 0; i < numbers.size(); i++) {
            Path path = Segment.path(directory, numbers.get(i));
            Segment segment = segment(numbers.get(i), path);
            if (segment == null) {
                continue;
            }
            if (!segments.isEmpty()) {
                long expected = segments.get(segments.size() - 1).nextOffset();
                if (segment.firstChunkId < expected) {
                    LOG.log(System.Logger.Level.ERROR, "stream {0}: {1} starts at offset {2}, below the end {3} of "
                        + "the segment before; it and every later segment are cut off", directory, segment,
                        segment.firstChunkId, expected);
                    segment.release();
                    for (long later : numbers.subList(i, numbers.size())) {
                        delete(Segment.path(directory, later));
                    }
                    break;
                }
                if (segment.firstChunkId > expected) {
                    LOG.log(System.Logger.Level.ERROR, "stream {0}: offsets {1} to {2} are missing before {3} (a "
                        + "segment was cut short)", directory, expected, segment.firstChunkId - 1, segment);
                }
            }
            segments.add(segment);
        }
        return segments;
    }

    private Segment segment(long number, Path path) {
        SegmentIndex index = null;
        SegmentFile file = null;
        try {
            index = SegmentIndex.open(path, capacity);
            file = SegmentFile.open(path);
            long[] seal = SegmentIndex.readSeal(path);
            if (seal != null && sealHolds(index, file, seal)) {
                index.recovered((int) seal[0]);
            } else {
                int indexed = index.validPrefix();
                int good = checked(index, file, indexed, path);
                index.recovered(good);
                if (good == indexed) {
                    scan(path, index, file); // else the segment is already cut inside what was indexed
                }
                int count = index.count();
                LOG.log(System.Logger.Level.INFO, "stream {0}: {1} recovered with {2} chunks ({3} indexed, {4} "
                    + "checked good, {5} found past the index)", directory, path.getFileName(), count, indexed, good,
                    count - good);
                index.seal(count == 0 ? 0 : index.nextOffset(count - 1), true);
            }
            if (index.count() == 0) {
                index.close();
                if (file != null) {
                    file.close();
                }
                delete(path);
                return null;
            }
            return new Segment(number, path, index, index.chunkId(0), file);
        } catch (IOException | RuntimeException e) {
            LOG.log(System.Logger.Level.ERROR, "stream " + directory + ": " + path.getFileName() + " cannot be "
                + "read and is set aside as damaged-" + path.getFileName(), e);
            if (index != null) {
                index.close();
            }
            if (file != null) {
                file.close();
            }
            setAside(path);
            return null;
        }
    }

    /** The seal is whole and agrees with the index and with the last chunk's header in the file. */
    private boolean sealHolds(SegmentIndex index, SegmentFile file, long[] seal) {
        long count = seal[0];
        if (count <= 0 || count > index.capacity() || file == null) {
            return false;
        }
        int last = (int) count - 1;
        if (!index.isWhole(last) || index.nextOffset(last) != seal[1]) {
            return false;
        }
        try {
            ByteBuffer b = file.window(index.position(last), index.length(last));
            int at = SegmentFile.offsetIn(index.position(last));
            return b.get(at) == MAGIC_VERSION && b.getLong(at + CHUNK_ID_OFFSET) == index.chunkId(last);
        } catch (UncheckedIOException e) {
            return false;
        }
    }

    /** How many of the first {@code n} indexed chunks are whole, with a good CRC and what the index says. */
    private int checked(SegmentIndex index, SegmentFile file, int n, Path path) {
        for (int i = 0; i < n; i++) {
            String problem = file == null ? "no file" : check(file, index.position(i), index.length(i));
            if (problem == null) {
                ByteBuffer b = file.window(index.position(i), index.length(i));
                int at = SegmentFile.offsetIn(index.position(i));
                if (b.getLong(at + CHUNK_ID_OFFSET) != index.chunkId(i) || b.get(at + TYPE_OFFSET) != index.type(i)) {
                    problem = "a chunk that is not the one indexed";
                }
            }
            if (problem != null) {
                LOG.log(System.Logger.Level.WARNING, "stream {0}: {1} is cut at indexed chunk {2} (offset {3}): {4}",
                    directory, path.getFileName(), i, index.chunkId(i), problem);
                return i;
            }
        }
        return n;
    }

    private String check(SegmentFile file, long position, long length) {
        if (length > MAX_CHUNK_LENGTH) {
            return "a chunk of " + length + " bytes";
        }
        try {
            return check.check(file.window(position, (int) length), SegmentFile.offsetIn(position), (int) length);
        } catch (UncheckedIOException e) {
            return e.getCause().getMessage();
        }
    }

    /**
     * Reads the segment's Chronicle queue past its last indexed chunk, indexing each whole chunk, up to the end or
     * the first damaged or torn one.
     *
     * @param file the segment's file, or null when it has none (then it has no chunk either)
     */
    private void scan(Path path, SegmentIndex index, SegmentFile file) {
        if (file == null) {
            return;
        }
        try (SingleChronicleQueue queue = Segment.queue(path, SCAN_TIMEOUT_MS);
             ExcerptTailer tailer = queue.createTailer()) {
            if (skipIndexed(queue, tailer, index)) {
                scan(path, index, file, tailer);
            }
        } catch (RuntimeException e) {
            // Chronicle could not read on (a file cut short, say): the segment ends at the last good chunk
            LOG.log(System.Logger.Level.WARNING, "stream {0}: {1} is cut after {2} chunks: {3}", directory,
                path.getFileName(), index.count(), e.toString());
        }
    }

    private void scan(Path path, SegmentIndex index, SegmentFile file, ExcerptTailer tailer) {
        while (true) {
            try (DocumentContext document = tailer.readingDocument()) {
                if (!document.isPresent()) {
                    return;
                }
                Bytes<?> bytes = document.wire().bytes();
                long position = bytes.readPosition();
                long length = bytes.readRemaining();
                String problem = check(file, position, length);
                int n = index.count();
                ByteBuffer b = problem == null ? file.window(position, (int) length) : null;
                int at = SegmentFile.offsetIn(position);
                if (problem == null && n > 0 && b.getLong(at + CHUNK_ID_OFFSET) != index.nextOffset(n - 1)) {
                    problem = "chunk id " + b.getLong(at + CHUNK_ID_OFFSET) + " after offset "
                        + (index.nextOffset(n - 1) - 1);
                }
                if (problem == null && n == index.capacity()) {
                    problem = "more chunks than the index holds";
                }
                if (problem != null) {
                    LOG.log(System.Logger.Level.WARNING, "stream {0}: {1} is cut after {2} chunks, at file "
                        + "position {3}: {4}", directory, path.getFileName(), n, position, problem);
                    return;
                }
                index.append(b.getLong(at + CHUNK_ID_OFFSET), b.getLong(at + TIMESTAMP_OFFSET), position,
                    (int) length, b.getInt(at + RECORDS_OFFSET) & 0xffff_ffffL, b.get(at + TYPE_OFFSET),
                    b.get(at + BLOOM_SIZE_OFFSET) & 0xff, b.getInt(at + TRAILER_LENGTH_OFFSET) != 0);
            }
        }
    }

    /** Moves the tailer past the indexed chunks; false when they are not all in the queue (nothing is past them). */
    private static boolean skipIndexed(SingleChronicleQueue queue, ExcerptTailer tailer, SegmentIndex index) {
        int n = index.count();
        if (n == 0) {
            tailer.toStart();
            return true;
        }
        if (queue.firstCycle() == Integer.MAX_VALUE) {
            return false; // an empty queue
        }
        if (tailer.moveToIndex(queue.rollCycle().toIndex(queue.firstCycle(), n - 1)) && lastIsAt(tailer, index, n)) {
            return true;
        }
        // Chronicle's own index of the cycle disagrees: walk the excerpts instead
        tailer.toStart();
        for (int i = 0; i < n - 1; i++) {
            try (DocumentContext document = tailer.readingDocument()) {
                if (!document.isPresent()) {
                    return false;
                }
            }
        }
        return lastIsAt(tailer, index, n);
    }

    private static boolean lastIsAt(ExcerptTailer tailer, SegmentIndex index, int n) {
        try (DocumentContext document = tailer.readingDocument()) {
            return document.isPresent() && document.wire().bytes().readPosition() == index.position(n - 1);
        }
    }

    /**
     * Replays tracking from the newest snapshot on (from the start when there is none): snapshots replace, deltas
     * and user chunks' trailers update.
     */
    static void recoverTracking(List<Segment> segments, Tracking tracking, Path directory) {
        int fromSegment = 0;
        int fromChunk = 0;
        search:
        for (int s = segments.size() - 1; s >= 0; s--) {
            SegmentIndex index = segments.get(s).index;
            for (int i = index.count() - 1; i >= 0; i--) {
                if (index.type(i) == TYPE_TRACKING_SNAPSHOT) {
                    fromSegment = s;
                    fromChunk = i;
                    break search;
                }
            }
        }
        for (int s = fromSegment; s < segments.size(); s++) {
            Segment segment = segments.get(s);
            SegmentIndex index = segment.index;
            for (int i = s == fromSegment ? fromChunk : 0; i < index.count(); i++) {
                byte type = index.type(i);
                if (type == TYPE_USER && !index.hasTrailer(i)) {
                    continue;
                }
                long position = index.position(i);
                ByteBuffer b = segment.file().window(position, index.length(i));
                int at = SegmentFile.offsetIn(position);
                int data = at + HEADER_LENGTH + (b.get(at + BLOOM_SIZE_OFFSET) & 0xff);
                int dataLength = b.getInt(at + DATA_LENGTH_OFFSET);
                int from = type == TYPE_USER ? data + dataLength : data + SIMPLE_ENTRY_HEADER;
                int length = type == TYPE_USER ? b.getInt(at + TRAILER_LENGTH_OFFSET) : dataLength - SIMPLE_ENTRY_HEADER;
                if (!Tracking.valid(b, from, length, type == TYPE_TRACKING_SNAPSHOT)) {
                    LOG.log(System.Logger.Level.WARNING, "stream {0}: the tracking entries of chunk {1} in {2} are "
                        + "damaged and skipped", directory, index.chunkId(i), segment);
                } else if (type == TYPE_TRACKING_SNAPSHOT) {
                    tracking.applySnapshot(b, from, length);
                } else {
                    tracking.applyDelta(b, from, length, index.chunkId(i));
                }
            }
        }
    }

    private void setAside(Path path) {
        Path aside = path.resolveSibling("damaged-" + path.getFileName());
        if (Files.exists(aside)) {
            aside = path.resolveSibling(aside.getFileName() + "-" + System.currentTimeMillis());
        }
        try {
            Files.move(path, aside);
        } catch (IOException e) {
            LOG.log(System.Logger.Level.ERROR, "cannot set aside " + path, e);
        }
    }

    static void delete(Path path) {
        try (Stream<Path> walk = Files.walk(path)) {
            for (Path p : walk.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot delete " + path, e);
        }
    }
}
