package io.skiffmq.codec.stream;

import io.netty.buffer.ByteBuf;

/**
 * A reusable view over a {@code deliver} frame (0x08), as a client reads it: subscription id (uint8), in v2 the
 * committed chunk id (uint64), then one chunk as the log stores it. A server does not build these frames: it writes
 * the header with {@link StreamFrameWriter#writeDeliverHeader} and the stored chunk after it as its own buffer or
 * file region.
 *
 * <p>The chunk starts with osiris's 48-byte header (PROTOCOL.adoc "Deliver", {@code osiris_log}), read here in
 * place; for a consumer RabbitMQ sends the header and the entries, without the Bloom filter or the trailer:
 *
 * <pre>
 *   0            1     2        4         8           16      24         32    36          40         44     45       48
 *   | magic 5, v0 | type | entries | records | timestamp | epoch | chunk id | crc | data size | trailer | bloom | reserved |
 *   | 0x50        | u8   | u16     | u32     | i64 (ms)  | u64   | u64      | u32 | u32       | u32     | u8    | 3 bytes  |
 * </pre>
 *
 * <p>Holds a reference to the frame without retaining it. Not thread-safe: one per connection.
 */
public final class DeliverFrame {
    /** The chunk header: magic and version, type, counts, timestamp, epoch, chunk id, CRC, sizes, Bloom size. */
    public static final int CHUNK_HEADER_SIZE = 48;
    /** Magic 5 and version 0, in the chunk's first byte. */
    public static final int CHUNK_MAGIC_VERSION = 0x50;

    private ByteBuf frame;
    private int version;
    private int chunk;

    /** @throws IllegalArgumentException when the frame is not a deliver */
    public DeliverFrame wrap(ByteBuf frame) throws StreamDecodeException {
        int body = StreamFrame.body(frame, CommandKey.DELIVER);
        int v = StreamFrame.version(frame);
        int before = v == 1 ? 1 : 9;
        StreamFrame.atLeast(frame, body, before + CHUNK_HEADER_SIZE, CommandKey.DELIVER);
        this.frame = frame;
        this.version = v;
        this.chunk = body + before;
        return this;
    }

    /** 1 or 2: 2 carries the committed chunk id. */
    public int version() {
        return version;
    }

    public int subscriptionId() {
        return frame.getUnsignedByte(frame.readerIndex() + StreamFrame.BODY_OFFSET);
    }

    /** The id of the last chunk the stream's replicas committed; 0 in v1, as the Java client takes it. */
    public long committedChunkId() {
        return version == 1 ? 0 : frame.getLong(chunk - 8);
    }

    /** The buffer the positions refer to. */
    public ByteBuf frame() {
        return frame;
    }

    /** Where the chunk (its header first) starts. */
    public int chunkIndex() {
        return chunk;
    }

    /** The chunk's bytes in the frame: header, entries, and whatever else the server chose to send. */
    public int chunkLength() {
        return frame.writerIndex() - chunk;
    }

    /** The first byte: {@link #CHUNK_MAGIC_VERSION}. */
    public int magicVersion() {
        return frame.getUnsignedByte(chunk);
    }

    /** 0 user, 1 tracking delta, 2 tracking snapshot: consumers get user chunks only. */
    public int chunkType() {
        return frame.getUnsignedByte(chunk + 1);
    }

    /** Entries: simple entries and sub-entry batches. */
    public int entries() {
        return frame.getUnsignedShort(chunk + 2);
    }

    /** Records: messages, those inside sub-entry batches counted. */
    public long records() {
        return frame.getUnsignedInt(chunk + 4);
    }

    /** Milliseconds since the epoch. */
    public long timestamp() {
        return frame.getLong(chunk + 8);
    }

    public long epoch() {
        return frame.getLong(chunk + 16);
    }

    /** The offset of the chunk's first record; the others follow one by one. */
    public long chunkId() {
        return frame.getLong(chunk + 24);
    }

    /** CRC-32 of the entries (as {@code java.util.zip.CRC32} computes it). */
    public long crc() {
        return frame.getUnsignedInt(chunk + 32);
    }

    /** The entries' size. */
    public long dataLength() {
        return frame.getUnsignedInt(chunk + 36);
    }

    public long trailerLength() {
        return frame.getUnsignedInt(chunk + 40);
    }

    public int bloomFilterSize() {
        return frame.getUnsignedByte(chunk + 44);
    }

    /** Where the entries start. */
    public int dataIndex() {
        return chunk + CHUNK_HEADER_SIZE;
    }
}
