package io.skiffmq.store.stream;

import static io.skiffmq.store.stream.ChunkDescriptor.*;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.skiffmq.core.stream.StreamOffset;
import io.skiffmq.store.Journal;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import net.openhft.chronicle.bytes.Bytes;
import net.openhft.chronicle.bytes.PointerBytesStore;
import net.openhft.chronicle.queue.ExcerptAppender;
import net.openhft.chronicle.queue.impl.single.SingleChronicleQueue;
import net.openhft.chronicle.wire.DocumentContext;

/**
 * The append-only log of one stream: chunks of messages in the stream protocol's stored layout
 * ({@link ChunkDescriptor}), dense offsets 0, 1, 2, … per message, in segments on Chronicle Queue.
 *
 * <p><b>Layout.</b> A directory per stream, a directory per segment ({@code segment-000000001}, …), each one
 * Chronicle queue of a single cycle (its clock frozen when opened, so Chronicle never rolls it: we roll, by size),
 * one excerpt per chunk, and a chunk index ({@link SegmentIndex}). A segment takes chunks until it holds
 * {@link StreamLogConfig#maxSegmentBytes} of file or {@link StreamLogConfig#maxSegmentChunks} chunks; the next
 * chunk goes to a new segment, which begins with a tracking snapshot. Every open starts a new segment too, so
 * nothing is ever appended behind bytes a crash may have torn. Chronicle's own index (cycle and sequence) is never
 * an offset: a chunk's id is the offset of its first record, counted by the log, and the chunk index maps ids,
 * timestamps and file positions.
 *
 * <p><b>Offsets and tracking.</b> A user chunk of {@code n} records takes offsets {@code id .. id + n - 1}; the
 * next chunk's id is {@code id + n}, across segments too. Tracking chunks (a stored offset, a segment's snapshot)
 * hold no record and take no offset (in RabbitMQ they take one each): their id is the next offset, shared with the
 * user chunk after them, so user offsets stay dense. Consumers never see tracking chunks.
 *
 * <p><b>Writing.</b> One writer thread at a time (the stream's owner; handing over needs a happens-before, such as
 * a task queue): {@link #chunkBuilder()} and its {@link ChunkBuilder#commit}, {@link #storeOffset},
 * {@link #appendChunk}, {@link #applyRetention} and {@link #close}. A chunk is written to the file (the OS page
 * cache: it survives a kill -9) when commit returns. It is <em>committed</em>, visible to readers and safe to
 * confirm, as the {@link Journal.SyncPolicy} says: at once under {@code OS}; under {@code SYNC} once a
 * {@link StreamSyncer} has forced the file (group commit, off the writer thread). {@link CommitListener}s hear of
 * each commit.
 *
 * <p><b>Reading.</b> {@link #reader} from any thread; each reader is used by one thread at a time.
 *
 * <p><b>Retention.</b> By size and by age, a whole segment at a time, oldest first, never the newest: after each
 * roll, and when the owner calls {@link #applyRetention} (for age, on a timer).
 */
public final class StreamLog implements AutoCloseable {
    /** What {@link #storedOffset} answers for a name with no offset stored. */
    public static final long NO_OFFSET = Tracking.NO_OFFSET;
    private static final System.Logger LOG = System.getLogger(StreamLog.class.getName());

    /** Hears commits: on the writer thread under {@code OS}, on the syncer thread under {@code SYNC}. */
    @FunctionalInterface
    public interface CommitListener {
        /**
         * Every record up to {@code committedOffset} is committed. Called often: hand work to your own thread,
         * never block.
         */
        void committed(long committedOffset);
    }

    private final Path directory;
    /** Replaced by {@link #retention} when a policy changes; the writer thread's. */
    private volatile StreamLogConfig config;
    private final boolean sync;
    private final StreamSyncer syncer;
    private final boolean ownSyncer;
    private final AtomicBoolean syncRequested = new AtomicBoolean();
    private final Tracking tracking = new Tracking();
    private final ChunkBuilder builder;
    /** Builds delta and snapshot chunks, so they never disturb a user chunk being built. */
    private final ChunkBuilder trackingBuilder;
    private final ChunkCheck check = new ChunkCheck();
    /** Points Chronicle at a chunk's memory, so writing it makes no object. */
    private final PointerBytesStore pointer = new PointerBytesStore();

    /** Oldest first; replaced (never changed) by the writer on a roll or a deletion. */
    private volatile Segment[] segments = new Segment[0];
    private final Commits commits;

    // the writer thread's
    private Segment active;
    private SingleChronicleQueue queue;
    private ExcerptAppender appender;
    private long lastTimestamp = Long.MIN_VALUE;
    private long lastEpoch;

    // written by the writer thread, read by any
    private volatile long nextOffset;
    private volatile long lastChunkId = -1;
    /** Where the last written chunk is: its segment number in the high 32 bits, its ordinal there in the low. */
    private volatile long writtenLocation = -1;

    private volatile Throwable failure;
    private volatile boolean closed;

    private StreamLog(Path directory, StreamLogConfig config) {
        this.directory = directory;
        this.config = config;
        this.sync = config.syncPolicy() == Journal.SyncPolicy.SYNC;
        this.ownSyncer = sync && config.syncer() == null;
        this.syncer = ownSyncer ? new StreamSyncer("skiffmq-stream-sync-" + directory.getFileName())
            : config.syncer();
        this.builder = new ChunkBuilder(this, config.filterSize());
        this.trackingBuilder = new ChunkBuilder(this, MIN_BLOOM_SIZE);
        this.lastEpoch = config.epoch();
        this.commits = new Commits(this::segments, directory);
    }

    /**
     * Opens (creating if need be) the stream log in {@code directory}: recovers its segments (cutting off a damaged
     * or torn tail, logged), its chunk index and its tracking, then starts a new segment. The calling thread may
     * write first.
     *
     * @throws UncheckedIOException when the directory cannot be made or written
     */
    public static StreamLog open(Path directory, StreamLogConfig config) {
        try {
            Files.createDirectories(directory);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create stream directory " + directory, e);
        }
        StreamLog log = new StreamLog(directory, config);
        try {
            log.start();
        } catch (RuntimeException e) {
            log.close();
            throw e;
        }
        return log;
    }

    private void start() {
        long began = System.nanoTime();
        List<Segment> recovered = new LogRecovery(directory, config.maxSegmentChunks()).recover();
        segments = recovered.toArray(new Segment[0]);
        LogRecovery.recoverTracking(recovered, tracking, directory);
        long number = 1;
        if (!recovered.isEmpty()) {
            Segment last = recovered.get(recovered.size() - 1);
            int n = last.index.count();
            number = last.number + 1;
            nextOffset = last.nextOffset();
            lastChunkId = last.index.chunkId(n - 1);
            lastTimestamp = last.lastTimestamp();
            ByteBuffer header = last.file().window(last.index.position(n - 1), HEADER_LENGTH);
            lastEpoch = Math.max(config.epoch(), header.getLong(SegmentFile.offsetIn(last.index.position(n - 1))
                + EPOCH_OFFSET));
            writtenLocation = location(last.number, n - 1);
            commits.through(writtenLocation);
        }
        newSegment(number);
        applyRetention(); // the broker may have been down longer than max-age
        LOG.log(System.Logger.Level.INFO, "stream {0} opened in {1} ms: offsets {2} to {3} in {4} segments",
            directory, (System.nanoTime() - began) / 1_000_000, firstOffset(), nextOffset - 1, segments.length);
    }

    static long location(long segment, int ordinal) {
        return segment << 32 | ordinal;
    }

    // ---------------------------------------------------------------- writing (the writer thread)

    /** The builder of the next user chunk; the writer thread's. */
    public ChunkBuilder chunkBuilder() {
        return builder;
    }

    /**
     * The named producer {@code reference}, to hand to {@link ChunkBuilder#addEntry} for deduplication; made on first
     * use (the writer thread's). Its {@link TrackedPublisher#sequence()} is what "query publisher sequence" answers.
     *
     * @throws IllegalArgumentException when the reference is empty or longer than 255 UTF-8 bytes
     */
    public TrackedPublisher publisher(String reference) {
        return tracking.publisher(reference);
    }

    /** {@link ChunkBuilder#commit}: writes the builder's chunk. */
    long commit(ChunkBuilder b) {
        writable();
        try {
            rollIfFull(true); // first, so the snapshot's timestamp is not after the chunk's
            long chunkId = nextOffset;
            write(b, b.finish(TYPE_USER, chunkId, timestamp(), config.epoch()));
            b.written(chunkId);
            return chunkId;
        } catch (RuntimeException | Error e) {
            throw fail(e);
        } finally {
            b.reset();
        }
    }

    /**
     * Stores a consumer's offset (a tracking delta chunk, written now): {@link #storedOffset} answers it at once
     * and after a restart. As in RabbitMQ, a stored offset may go backwards.
     *
     * @throws IllegalArgumentException when the name is empty or longer than 255 UTF-8 bytes, or the offset negative
     */
    public void storeOffset(String name, long offset) {
        if (offset < 0) {
            throw new IllegalArgumentException("offset " + offset);
        }
        byte[] id = Tracking.id(name);
        writable();
        ByteBuf body = Unpooled.buffer(2 + id.length + 8);
        try {
            Tracking.writeEntry(body, Tracking.TYPE_OFFSET, id, offset);
            writeTracking(TYPE_TRACKING_DELTA, body);
        } finally {
            body.release();
        }
        tracking.storeOffset(name, offset);
    }

    private void writeTracking(byte type, ByteBuf body) {
        try {
            rollIfFull(true);
            trackingBuilder.addMessage(body, null, null, 0);
            write(trackingBuilder, trackingBuilder.finish(type, nextOffset, timestamp(), config.epoch()));
        } catch (RuntimeException | Error e) {
            throw fail(e);
        } finally {
            trackingBuilder.reset();
        }
    }

    /**
     * Appends a chunk made elsewhere, byte for byte (a replica copying its leader's log): its id, epoch and timestamp
     * are kept. It must be whole and sound ({@link ChunkCheck}), start at {@link #nextOffset()}, and have an epoch
     * no older than the last chunk's. Its tracking (trailer, delta, snapshot) is applied. Rolling to a new segment
     * here writes no snapshot of our own: the leader's chunks are copied as they are.
     *
     * @param chunk exactly one chunk; not released, not moved
     * @return its chunk id
     * @throws IllegalArgumentException when it is not such a chunk (nothing is written)
     */
    public long appendChunk(ByteBuf chunk) {
        writable();
        int length = chunk.readableBytes();
        if (length > MAX_CHUNK_LENGTH) {
            throw new IllegalArgumentException("a chunk of " + length + " bytes");
        }
        ByteBuffer b = chunk.nioBuffer(chunk.readerIndex(), length);
        String problem = check.check(b, 0, length);
        if (problem != null) {
            throw new IllegalArgumentException("not a whole chunk: " + problem);
        }
        long chunkId = b.getLong(CHUNK_ID_OFFSET);
        long epoch = b.getLong(EPOCH_OFFSET);
        if (chunkId != nextOffset) {
            throw new IllegalArgumentException("chunk id " + chunkId + ", the log's next offset is " + nextOffset);
        }
        if (epoch < lastEpoch) {
            throw new IllegalArgumentException("epoch " + epoch + " is older than the log's " + lastEpoch);
        }
        try {
            write(chunk, chunk.readerIndex(), length, false);
        } catch (RuntimeException | Error e) {
            throw fail(e);
        }
        lastEpoch = epoch;
        lastTimestamp = Math.max(lastTimestamp, b.getLong(TIMESTAMP_OFFSET));
        byte type = b.get(TYPE_OFFSET);
        int data = HEADER_LENGTH + (b.get(BLOOM_SIZE_OFFSET) & 0xff);
        int dataLength = b.getInt(DATA_LENGTH_OFFSET);
        if (type == TYPE_USER) {
            tracking.applyDelta(b, data + dataLength, b.getInt(TRAILER_LENGTH_OFFSET), chunkId);
        } else if (type == TYPE_TRACKING_DELTA) {
            tracking.applyDelta(b, data + SIMPLE_ENTRY_HEADER, dataLength - SIMPLE_ENTRY_HEADER, chunkId);
        } else {
            tracking.applySnapshot(b, data + SIMPLE_ENTRY_HEADER, dataLength - SIMPLE_ENTRY_HEADER);
        }
        return chunkId;
    }

    private long timestamp() {
        lastTimestamp = Math.max(config.clock().getAsLong(), lastTimestamp); // never backwards: searches bisect
        return lastTimestamp;
    }

    private void writable() {
        if (failure != null) {
            throw new IllegalStateException("stream log " + directory + " failed: " + failure, failure);
        }
        if (closed) {
            throw new IllegalStateException("stream log " + directory + " is closed");
        }
    }

    /** Writes the chunk a builder finished, from {@code at} to the end of its buffer. */
    private void write(ChunkBuilder b, int at) {
        ByteBuf buf = b.buffer();
        write(buf, at, buf.writerIndex() - at, true);
    }

    /**
     * Writes a whole chunk into the active segment, rolling first when that one is full, indexes it, and commits it
     * or asks for a sync.
     *
     * @param leader a roll begins the new segment with a snapshot of our own
     */
    private void write(ByteBuf chunk, int at, int length, boolean leader) {
        rollIfFull(leader);
        Segment segment = active;
        long position;
        DocumentContext document = appender.writingDocument();
        try {
            Bytes<?> bytes = document.wire().bytes();
            position = bytes.writePosition();
            if (chunk.hasMemoryAddress()) {
                pointer.set(chunk.memoryAddress() + at, length);
                bytes.write(pointer, 0L, length);
            } else {
                bytes.write(Bytes.wrapForRead(chunk.nioBuffer(at, length)));
            }
        } catch (RuntimeException | Error e) {
            document.rollbackOnClose();
            throw e;
        } finally {
            document.close();
        }
        long chunkId = chunk.getLong(at + CHUNK_ID_OFFSET);
        long records = chunk.getUnsignedInt(at + RECORDS_OFFSET);
        int ordinal = segment.index.count();
        segment.index.append(chunkId, chunk.getLong(at + TIMESTAMP_OFFSET), position, length, records,
            chunk.getByte(at + TYPE_OFFSET), chunk.getUnsignedByte(at + BLOOM_SIZE_OFFSET),
            chunk.getInt(at + TRAILER_LENGTH_OFFSET) != 0);
        segment.bytes = position + length;
        if (ordinal == 0) {
            segment.file(); // open before any reader can see the chunk: retention may delete the files later
        }
        lastChunkId = chunkId;
        nextOffset = chunkId + records;
        long location = location(segment.number, ordinal);
        writtenLocation = location;
        if (sync) {
            if (syncRequested.compareAndSet(false, true)) {
                syncer.request(this);
            }
        } else {
            commits.tell(commits.through(location));
        }
    }

    /**
     * Rolls when the active segment takes no more chunks: it is at its size or its count. A segment holding only the
     * snapshot it began with takes one chunk more whatever its size: with a segment size below Chronicle's file
     * header (about 66 KB; {@code x-stream-max-segment-size-bytes} is the client's) it would otherwise roll again at
     * once, leaving a segment of nothing but a snapshot before every chunk.
     */
    private void rollIfFull(boolean leader) {
        Segment segment = active;
        int count = segment.index.count();
        boolean onlySnapshot = count == 1 && segment.index.type(0) == TYPE_TRACKING_SNAPSHOT;
        if (count > 0 && !onlySnapshot && (segment.index.isFull() || segment.bytes >= config.maxSegmentBytes())) {
            roll(leader);
        }
    }

    /** Makes a new segment the active one (a snapshot first, when we lead) and leaves the full one, sealed. */
    private void roll(boolean leader) {
        Segment full = active;
        try {
            if (sync) {
                full.file().force();
            }
            full.index.seal(full.nextOffset(), sync);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot seal stream segment " + full, e);
        }
        appender.close();
        queue.close();
        appender = null;
        queue = null;
        openSegment(full.number + 1);
        if (leader) {
            writeSnapshot();
        }
        applyRetention();
    }

    private void newSegment(long number) {
        openSegment(number);
        writeSnapshot();
    }

    private void openSegment(long number) {
        Path path = Segment.path(directory, number);
        try {
            Files.createDirectories(path);
            SegmentIndex index = SegmentIndex.open(path, config.maxSegmentChunks());
            Segment segment = new Segment(number, path, index, nextOffset, null);
            queue = Segment.queue(path);
            appender = queue.createAppender();
            appender.singleThreadedCheckDisabled(true); // the writer is one thread at a time, not always the same
            syncDirectory(); // the new segment survives a power loss
            active = segment;
            Segment[] current = segments;
            Segment[] next = Arrays.copyOf(current, current.length + 1);
            next[current.length] = segment;
            segments = next;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot make stream segment " + path, e);
        }
    }

    private void writeSnapshot() {
        ByteBuf body = Unpooled.buffer();
        try {
            tracking.writeSnapshot(body, firstOffset());
            writeTracking(TYPE_TRACKING_SNAPSHOT, body);
        } finally {
            body.release();
        }
    }

    /**
     * New retention limits and segment size (a policy changed them), in force from the next segment roll and the
     * next {@link #applyRetention}. The writer thread's.
     *
     * @param maxSegmentBytes in 1..{@link StreamLogConfig#MAX_SEGMENT_BYTES_LIMIT}
     */
    public void retention(long maxLengthBytes, long maxAgeMillis, long maxSegmentBytes) {
        config = config.withRetention(maxLengthBytes, maxAgeMillis).withMaxSegmentBytes(maxSegmentBytes);
    }

    /**
     * Deletes the oldest segments that retention no longer keeps: those beyond {@code maxLengthBytes} counted from
     * the newest (osiris' rule: the newest always stays, older ones while the total fits), and those whose last
     * chunk is older than {@code maxAgeMillis}. Never the newest segment. The first offset moves to the first
     * chunk of the oldest segment left. Readers in a deleted segment read on to its end. The writer thread's.
     *
     * @return how many segments were deleted
     */
    public int applyRetention() {
        Segment[] current = segments;
        int drop = 0;
        if (config.maxLengthBytes() > 0) {
            long total = 0;
            for (int i = current.length - 1; i > 0; i--) {
                total += current[i].bytes;
                if (total + current[i - 1].bytes > config.maxLengthBytes()) {
                    drop = i;
                    break;
                }
            }
        }
        if (config.maxAgeMillis() > 0) {
            long oldest = config.clock().getAsLong() - config.maxAgeMillis();
            while (drop < current.length - 1 && current[drop].lastTimestamp() < oldest) {
                drop++;
            }
        }
        if (drop == 0) {
            return 0;
        }
        segments = Arrays.copyOfRange(current, drop, current.length);
        for (int i = 0; i < drop; i++) {
            current[i].release();
            LogRecovery.delete(current[i].directory);
        }
        try {
            syncDirectory();
        } catch (IOException e) {
            LOG.log(System.Logger.Level.WARNING, "cannot sync stream directory " + directory, e);
        }
        LOG.log(System.Logger.Level.DEBUG, "stream {0}: retention deleted {1} segments, the first offset is {2}",
            directory, drop, firstOffset());
        return drop;
    }

    private void syncDirectory() throws IOException {
        try (FileChannel dir = FileChannel.open(directory, StandardOpenOption.READ)) {
            dir.force(true);
        }
    }

    private RuntimeException fail(Throwable cause) {
        if (failure == null && !closed) {
            failure = cause;
            LOG.log(System.Logger.Level.ERROR, "stream log " + directory + " failed: nothing more is written or "
                + "confirmed", cause);
        }
        return cause instanceof RuntimeException r ? r : new IllegalStateException(cause);
    }

    // ---------------------------------------------------------------- committing

    /** The syncer's: forces what was written and commits it. */
    void sync() {
        syncRequested.set(false);
        long committed;
        synchronized (this) {
            long location = writtenLocation;
            if (closed || location <= commits.location()) {
                return;
            }
            Segment segment = Segment.retained(segments, location >>> 32);
            if (segment != null) { // else retention deleted it, after the roll that forced it
                try {
                    segment.file().force(); // older segments were forced when they were left
                } catch (IOException | RuntimeException e) {
                    fail(e);
                    return;
                } finally {
                    segment.release();
                }
            }
            committed = commits.through(location);
        }
        commits.tell(committed);
    }

    /** The first segment after {@code number}, retained for the caller, or null when there is none. */
    Segment segmentAfter(long number) {
        while (true) {
            Segment[] all = segments;
            Segment after = null;
            for (Segment s : all) {
                if (s.number > number) {
                    after = s;
                    break;
                }
            }
            if (after == null || after.tryRetain()) {
                return after;
            }
            // deleted by retention meanwhile: look again
        }
    }

    Segment[] segments() {
        return segments;
    }

    long committedLocation() {
        return commits.location();
    }

    /** Adds a listener of commits (see {@link CommitListener} for its thread); any thread. */
    public void addListener(CommitListener listener) {
        commits.add(listener);
    }

    public void removeListener(CommitListener listener) {
        commits.remove(listener);
    }

    // ---------------------------------------------------------------- reading (any thread)

    /**
     * A reader of the user chunks from {@code spec} on, skipping those {@code filter} rules out.
     *
     * @param filter null to take every chunk
     * @throws IllegalStateException when the log is closed
     */
    public StreamReader reader(StreamOffset spec, StreamFilter filter) {
        return new StreamReader(this, spec, filter);
    }

    /** The offset a consumer stored under {@code name}, or {@link #NO_OFFSET}. */
    public long storedOffset(String name) {
        return tracking.offset(name);
    }

    /** The highest publishing id stored for producer {@code reference}, 0 when none (as RabbitMQ answers). */
    public long publisherSequence(String reference) {
        return tracking.sequence(reference);
    }

    /** Every stored offset by consumer name (osiris' tracking {@code offsets}), a copy. Any thread. */
    public java.util.Map<String, Long> storedOffsets() {
        return tracking.offsets();
    }

    /** The producers with a publishing id in the log (osiris' tracking {@code sequences}). Any thread. */
    public List<TrackedPublisher> trackedPublishers() {
        return tracking.sequences();
    }

    /** The epoch of the leader that writes it (osiris' {@code epoch}). */
    public long epoch() {
        return config.epoch();
    }

    /** The offset of the first record still in the log (retention moves it forward). */
    public long firstOffset() {
        Segment[] all = segments;
        return all.length == 0 ? nextOffset : all[0].firstChunkId;
    }

    /** The offset the next record written will take. */
    public long nextOffset() {
        return nextOffset;
    }

    /** The last committed offset, -1 when none: records up to it may be delivered and confirmed. */
    public long committedOffset() {
        return commits.offset();
    }

    /** The id of the last committed user chunk, -1 when none (the stream protocol's committed chunk id). */
    public long committedChunkId() {
        return commits.chunkId();
    }

    /** The id of the last chunk written, tracking chunks included, -1 when none. */
    public long lastChunkId() {
        return lastChunkId;
    }

    public int segmentCount() {
        return segments.length;
    }

    /** The bytes the segments' files use (what {@code max-length-bytes} limits). */
    public long bytes() {
        long total = 0;
        for (Segment s : segments) {
            total += s.bytes;
        }
        return total;
    }

    public Path directory() {
        return directory;
    }

    // ----------------------------------------------------------------

    /**
     * Seals the active segment (forced first under {@code SYNC}), commits what was written and closes the files;
     * the writer thread's. Readers still open read on to the end of what they can see.
     */
    @Override
    public void close() {
        long committed = Commits.UNCHANGED;
        synchronized (this) {
            if (closed) {
                return;
            }
            try {
                if (failure == null && active != null && active.index.count() > 0) {
                    if (sync) {
                        active.file().force();
                    }
                    active.index.seal(active.nextOffset(), sync);
                    committed = commits.through(writtenLocation);
                }
            } catch (IOException | RuntimeException e) {
                LOG.log(System.Logger.Level.WARNING, "stream log " + directory + " closed without its seal", e);
            }
            closed = true;
            if (appender != null) {
                appender.close();
                queue.close();
            }
        }
        commits.tell(committed);
        if (ownSyncer) {
            syncer.close();
        }
        builder.close();
        trackingBuilder.close();
        Segment[] all = segments;
        segments = new Segment[0];
        for (Segment s : all) {
            s.release();
        }
    }
}
