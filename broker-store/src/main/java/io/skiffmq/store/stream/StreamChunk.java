package io.skiffmq.store.stream;

import static io.skiffmq.store.stream.ChunkDescriptor.*;

import io.netty.buffer.ByteBuf;
import io.netty.channel.FileRegion;
import java.nio.ByteBuffer;

/**
 * A chunk as a {@link StreamReader} found it: its header fields, and its bytes as stored, for the stream
 * protocol to send as they are. A consumer gets the 48 header bytes, as stored, then the data: the Bloom filter
 * and the trailer stay behind. Three ways to send them, none re-encoding anything:
 *
 * <ul>
 *   <li>{@link #retainedHeader()} and {@link #retainedData()}: Netty buffers over the segment's mapped file, no copy
 *       at all in the JVM; the segment stays mapped until they are released. They work everywhere, TLS included.</li>
 *   <li>{@link #retainedDataRegion()}: a {@link FileRegion} of the data, for {@code sendfile} (plain TCP only),
 *       after the header bytes. Worth it for big chunks; for small ones a copy costs less than the system call.</li>
 *   <li>{@link #writeHeaderAndData}: one copy into a buffer of the caller's (a frame being built).</li>
 * </ul>
 *
 * Chronicle's own mapping is not used for this: its memory cannot be wrapped by Netty without opening JDK
 * internals, and it may be unmapped while a buffer is still queued in a channel; our mapping of the same file is
 * reference counted with the segment ({@link SegmentFile}).
 *
 * <p>A view, reused by its reader: valid until the reader's next call. The retained buffers and regions outlive it
 * and must be released once each. Threads: the reader's.
 */
public final class StreamChunk {
    private Segment segment;
    private ByteBuffer window;
    /** A duplicate of {@link #window} for bulk copies, made once per window. */
    private ByteBuffer view;
    private ByteBuffer viewOf;
    private int at;
    private long position;
    private int length;

    StreamChunk() {
    }

    void wrap(Segment segment, int i) {
        this.segment = segment;
        this.position = segment.index.position(i);
        this.length = segment.index.length(i);
        this.window = segment.file().window(position, length);
        this.at = SegmentFile.offsetIn(position);
    }

    public byte type() {
        return window.get(at + TYPE_OFFSET);
    }

    public int entries() {
        return window.getShort(at + ENTRIES_OFFSET) & 0xffff;
    }

    public long records() {
        return window.getInt(at + RECORDS_OFFSET) & 0xffff_ffffL;
    }

    public long timestamp() {
        return window.getLong(at + TIMESTAMP_OFFSET);
    }

    public long epoch() {
        return window.getLong(at + EPOCH_OFFSET);
    }

    /** The offset of its first record. */
    public long chunkId() {
        return window.getLong(at + CHUNK_ID_OFFSET);
    }

    public int crc() {
        return window.getInt(at + CRC_OFFSET);
    }

    public int dataLength() {
        return window.getInt(at + DATA_LENGTH_OFFSET);
    }

    public int trailerLength() {
        return window.getInt(at + TRAILER_LENGTH_OFFSET);
    }

    public int bloomSize() {
        return window.get(at + BLOOM_SIZE_OFFSET) & 0xff;
    }

    /** The bytes a consumer receives: the header and the data. */
    public int deliveredLength() {
        return HEADER_LENGTH + dataLength();
    }

    /** The whole chunk as stored: header, Bloom filter, data, trailer. */
    public int storedLength() {
        return length;
    }

    private int dataAt() {
        return at + HEADER_LENGTH + bloomSize();
    }

    /** The 48 header bytes as stored, over the mapped file; release it. */
    public ByteBuf retainedHeader() {
        return MappedChunkBuf.of(segment, window.slice(at, HEADER_LENGTH));
    }

    /** The data (the entries), over the mapped file; release it. */
    public ByteBuf retainedData() {
        return MappedChunkBuf.of(segment, window.slice(dataAt(), dataLength()));
    }

    /** The whole chunk as stored (what a replica copies), over the mapped file; release it. */
    public ByteBuf retainedChunk() {
        return MappedChunkBuf.of(segment, window.slice(at, length));
    }

    /** The data as a region of the segment's file, for {@code sendfile}; release it (the file stays open till). */
    public FileRegion retainedDataRegion() {
        return new ChunkFileRegion(segment, segment.file().channel(), position + HEADER_LENGTH + bloomSize(),
            dataLength());
    }

    /** Copies the header and the data into {@code out}: what a consumer receives, in one copy. */
    public void writeHeaderAndData(ByteBuf out) {
        if (viewOf != window) {
            view = window.duplicate();
            viewOf = window;
        }
        view.limit(at + HEADER_LENGTH).position(at);
        out.writeBytes(view);
        int data = dataAt();
        view.limit(data + dataLength()).position(data);
        out.writeBytes(view);
    }
}
