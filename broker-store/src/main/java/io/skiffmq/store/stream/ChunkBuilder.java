package io.skiffmq.store.stream;

import static io.skiffmq.store.stream.ChunkDescriptor.*;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.util.ArrayList;
import java.util.zip.CRC32;

/**
 * Builds the next chunk of a {@link StreamLog}: entries are copied as they come into one reusable direct buffer
 * (the only copy before the log file), their filter values into the Bloom filter, and {@link #commit} adds the
 * header, the CRC-32 of the data and the trailer (the producers' publishing ids) and writes the chunk.
 *
 * <p>Inside the buffer the data always starts at {@code 48 + filter size}, so nothing moves at commit: with a
 * Bloom filter the chunk starts at 0, without one the header is written just before the data.
 *
 * <p>Nothing is allocated per entry: the entry is copied, its records counted from its first bytes, its filter
 * value hashed in place. Owned by the log's writer thread; not thread-safe.
 */
public final class ChunkBuilder implements AutoCloseable {
    /** {@link #addEntry}: the entry is in the chunk. */
    public static final int ADDED = 0;
    /** {@link #addEntry}: the chunk is full (entries or bytes); commit it and add the entry again. */
    public static final int FULL = 1;
    /** {@link #addEntry}: the producer already stored this publishing id or a higher one; drop it, confirm it. */
    public static final int DUPLICATE = 2;

    private final StreamLog log;
    private final int filterSize;
    private final int dataStart;
    private final ByteBuf buf;
    private final CRC32 crc = new CRC32();
    /** Producers with an entry in this chunk, in the order they came. */
    private final ArrayList<TrackedPublisher> publishers = new ArrayList<>();
    private int entries;
    private long records;
    private int trailerLength;
    private boolean filtered;
    private boolean unfiltered;

    ChunkBuilder(StreamLog log, int filterSize) {
        this.log = log;
        this.filterSize = filterSize;
        this.dataStart = HEADER_LENGTH + filterSize;
        this.buf = Unpooled.directBuffer(64 * 1024, MAX_CHUNK_LENGTH + dataStart);
        reset();
    }

    /** As {@link #addEntry(ByteBuf, ByteBuf, TrackedPublisher, long)} with no filter value and no producer. */
    public int addEntry(ByteBuf entry) {
        return addEntry(entry, null, null, 0);
    }

    /**
     * Adds an entry as the stream protocol's publish carries it: a simple entry ({@code 0 bit | u31 length |
     * body}) or a sub-entry batch, kept opaque. Its readable bytes must be exactly one entry.
     *
     * @param entry not released, not moved
     * @param filterValue its filter value's UTF-8 bytes (readable ones), or null or empty for none
     * @param publisher its named producer, for deduplication, or null
     * @param publishingId the producer's id of this message (ignored without a producer)
     * @return {@link #ADDED}, {@link #FULL} or {@link #DUPLICATE}
     * @throws IllegalArgumentException when the bytes are not one entry, or one entry too big for any chunk
     */
    public int addEntry(ByteBuf entry, ByteBuf filterValue, TrackedPublisher publisher, long publishingId) {
        long entryRecords = records(entry);
        return add(entry, entry.readableBytes(), entryRecords, false, filterValue, publisher, publishingId);
    }

    /**
     * Adds a message body as a simple entry (the builder writes the entry's length in front of it).
     *
     * @see #addEntry(ByteBuf, ByteBuf, TrackedPublisher, long)
     */
    public int addMessage(ByteBuf body, ByteBuf filterValue, TrackedPublisher publisher, long publishingId) {
        return add(body, SIMPLE_ENTRY_HEADER + body.readableBytes(), 1, true, filterValue, publisher, publishingId);
    }

    private int add(ByteBuf bytes, int entryLength, long entryRecords, boolean writeHeader, ByteBuf filterValue,
            TrackedPublisher publisher, long publishingId) {
        if (publisher != null && publisher.isDuplicate(publishingId)) {
            return DUPLICATE;
        }
        int trailerGrowth = publisher != null && !publisher.inChunk ? Tracking.sequenceEntryLength(publisher) : 0;
        long length = (long) dataLength() + entryLength + trailerLength + trailerGrowth;
        if (entries == MAX_ENTRIES || ChunkDescriptor.length(filterSize, length, 0) > MAX_CHUNK_LENGTH) {
            if (entries == 0) {
                throw new IllegalArgumentException("an entry of " + entryLength + " bytes is larger than a chunk");
            }
            return FULL;
        }
        if (writeHeader) {
            buf.writeInt(bytes.readableBytes());
        }
        buf.writeBytes(bytes, bytes.readerIndex(), bytes.readableBytes());
        entries++;
        records += entryRecords;
        if (filterValue == null || !filterValue.isReadable()) {
            unfiltered = true;
        } else {
            filtered = true;
            Bloom.add(buf, HEADER_LENGTH, filterSize,
                Bloom.hash(filterValue, filterValue.readerIndex(), filterValue.readableBytes()));
        }
        if (publisher != null) {
            publisher.pending = publishingId;
            if (!publisher.inChunk) {
                publisher.inChunk = true;
                publishers.add(publisher);
                trailerLength += trailerGrowth;
            }
        }
        return ADDED;
    }

    /**
     * The records of one entry, checking that the readable bytes are exactly that entry.
     *
     * @throws IllegalArgumentException when they are not
     */
    static long records(ByteBuf entry) {
        int at = entry.readerIndex();
        int length = entry.readableBytes();
        if (length < SIMPLE_ENTRY_HEADER) {
            throw new IllegalArgumentException("an entry of " + length + " bytes");
        }
        int first = entry.getByte(at);
        if ((first & 0x80) == 0) {
            int bodyLength = entry.getInt(at);
            if (bodyLength != length - SIMPLE_ENTRY_HEADER) {
                throw new IllegalArgumentException("a simple entry of " + bodyLength + " bytes in " + length);
            }
            return 1;
        }
        if (length < SUB_BATCH_HEADER || entry.getInt(at + 7) != length - SUB_BATCH_HEADER) {
            throw new IllegalArgumentException("a sub-entry batch whose length is not its " + length + " bytes");
        }
        return entry.getUnsignedShort(at + 1);
    }

    /** Entries added since the last commit. */
    public int entries() {
        return entries;
    }

    /** Records (messages) added since the last commit. */
    public long records() {
        return records;
    }

    /** Bytes of entries added since the last commit. */
    public int dataLength() {
        return buf.writerIndex() - dataStart;
    }

    /**
     * Writes the chunk built so far (nothing when it is empty) and starts the next one.
     *
     * @return its chunk id (the offset of its first record; its records are {@code id .. id + records - 1}), or
     *         -1 when there was nothing to write
     * @throws IllegalStateException when the log is closed or has failed
     */
    public long commit() {
        if (entries == 0) {
            return -1;
        }
        return log.commit(this);
    }

    /**
     * Finishes the chunk in the buffer: trailer, header (with what the log assigns), CRC, Bloom filter.
     *
     * @return where the whole chunk starts in {@link #buffer()}; it ends at the buffer's writer index
     */
    int finish(byte type, long chunkId, long timestamp, long epoch) {
        int dataLength = dataLength();
        for (TrackedPublisher p : publishers) {
            Tracking.writeEntry(buf, Tracking.TYPE_SEQUENCE, p.id, p.pending);
        }
        int bloomSize = filtered ? filterSize : 0;
        if (filtered && unfiltered) {
            Bloom.set(buf, HEADER_LENGTH, 0);
        }
        crc.reset();
        crc.update(buf.internalNioBuffer(dataStart, dataLength));
        int start = dataStart - bloomSize - HEADER_LENGTH;
        buf.setByte(start + MAGIC_VERSION_OFFSET, MAGIC_VERSION)
            .setByte(start + TYPE_OFFSET, type)
            .setShort(start + ENTRIES_OFFSET, entries)
            .setInt(start + RECORDS_OFFSET, (int) (type == TYPE_USER ? records : 0))
            .setLong(start + TIMESTAMP_OFFSET, timestamp)
            .setLong(start + EPOCH_OFFSET, epoch)
            .setLong(start + CHUNK_ID_OFFSET, chunkId)
            .setInt(start + CRC_OFFSET, (int) crc.getValue())
            .setInt(start + DATA_LENGTH_OFFSET, dataLength)
            .setInt(start + TRAILER_LENGTH_OFFSET, trailerLength)
            .setInt(start + BLOOM_SIZE_OFFSET, bloomSize << 24);
        return start;
    }

    /** The buffer the chunk is built in. */
    ByteBuf buffer() {
        return buf;
    }

    /** After the chunk is written: its producers' ids are stored, in chunk {@code chunkId}. */
    void written(long chunkId) {
        for (TrackedPublisher p : publishers) {
            p.written(p.pending, chunkId);
            p.inChunk = false;
        }
    }

    /** Forgets the chunk (written, or abandoned on a failure) and starts the next. */
    void reset() {
        for (TrackedPublisher p : publishers) {
            p.inChunk = false;
            p.pending = p.hasSequence() ? p.sequence() : -1;
        }
        publishers.clear();
        buf.clear().writeZero(dataStart);
        entries = 0;
        records = 0;
        trailerLength = 0;
        filtered = false;
        unfiltered = false;
    }

    @Override
    public void close() {
        buf.release();
    }
}
