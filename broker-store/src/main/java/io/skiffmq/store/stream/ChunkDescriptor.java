package io.skiffmq.store.stream;

/**
 * The layout of one stored chunk, exactly as the stream protocol delivers it and as RabbitMQ's osiris stores it
 * ({@code osiris_log.erl}, "Chunk format"; {@code ServerFrameHandler.handleDeliver} of the Java stream client reads
 * the same bytes). Big-endian.
 *
 * <pre>
 *   0       1       2               4                               8
 *   +---+---+-------+---------------+-------------------------------+
 *   |mag|ver| type  |    entries    |            records            |
 *   +---+---+-------+---------------+-------------------------------+
 *   8                                                               16
 *   +---------------------------------------------------------------+
 *   |                     timestamp (i64, ms)                       |
 *   +---------------------------------------------------------------+
 *   16                                                              24
 *   +---------------------------------------------------------------+
 *   |                          epoch (u64)                          |
 *   +---------------------------------------------------------------+
 *   24                                                              32
 *   +---------------------------------------------------------------+
 *   |            chunk id = offset of the first record (u64)        |
 *   +---------------------------------------------------------------+
 *   32                              36                              40
 *   +-------------------------------+-------------------------------+
 *   |      CRC-32 of the data       |        data length (u32)      |
 *   +-------------------------------+-------------------------------+
 *   40                              44      45                      48
 *   +-------------------------------+-------+-----------------------+
 *   |     trailer length (u32)      | bloom |    reserved (0 0 0)   |
 *   +-------------------------------+-------+-----------------------+
 *   48
 *   +---------------------------------------------------------------+
 *   |  Bloom filter (bloom bytes: 0, or 16 to 255)                  |
 *   +---------------------------------------------------------------+
 *   |  data: the entries (data length bytes)                        |
 *   +---------------------------------------------------------------+
 *   |  trailer: tracking entries (trailer length bytes)             |
 *   +---------------------------------------------------------------+
 * </pre>
 *
 * <ul>
 *   <li>The first byte is {@link #MAGIC_VERSION}: magic 5 in the high nibble, chunk format version 0 in the low
 *       one. (osiris' comment says version 1; its code, {@code ?VERSION}, writes 0, and so do we.)</li>
 *   <li>{@code type}: {@link #TYPE_USER} (messages), {@link #TYPE_TRACKING_DELTA} and
 *       {@link #TYPE_TRACKING_SNAPSHOT} (stored offsets and publisher sequences, {@link Tracking}).</li>
 *   <li>{@code entries} counts the entries of the data (at most 65,535); {@code records} counts messages: a
 *       simple entry is one record, a sub-entry batch as many as its header says.</li>
 *   <li>The CRC is {@link java.util.zip.CRC32} over the data alone: not the header, the Bloom filter or the
 *       trailer (as osiris, and as the Java client checks it).</li>
 *   <li>A consumer receives the 48 header bytes as stored (Bloom size and trailer length included) followed by
 *       the data: the Bloom bytes and the trailer are left out.</li>
 * </ul>
 *
 * A simple entry, the body as the client sent it:
 *
 * <pre>
 *   0                               4
 *   +-+-----------------------------+---------------------------------+
 *   |0|     body length (u31)       |  body                           |
 *   +-+-----------------------------+---------------------------------+
 * </pre>
 *
 * A sub-entry batch, kept opaque (never decompressed); it counts {@code records} records:
 *
 * <pre>
 *   0       1               3               7               11
 *   +-+---+-+---------------+---------------+---------------+----------------+
 *   |1|cmp|r|   records     | uncompressed  |    length     | body (length)  |
 *   +-+---+-+---------------+---------------+---------------+----------------+
 *    1 bit, compression in 3 bits, 4 reserved bits
 * </pre>
 */
public final class ChunkDescriptor {
    /** Magic 5, chunk format version 0. */
    public static final byte MAGIC_VERSION = 0x50;

    public static final byte TYPE_USER = 0;
    public static final byte TYPE_TRACKING_DELTA = 1;
    public static final byte TYPE_TRACKING_SNAPSHOT = 2;

    public static final int MAGIC_VERSION_OFFSET = 0;
    public static final int TYPE_OFFSET = 1;
    public static final int ENTRIES_OFFSET = 2;
    public static final int RECORDS_OFFSET = 4;
    public static final int TIMESTAMP_OFFSET = 8;
    public static final int EPOCH_OFFSET = 16;
    public static final int CHUNK_ID_OFFSET = 24;
    public static final int CRC_OFFSET = 32;
    public static final int DATA_LENGTH_OFFSET = 36;
    public static final int TRAILER_LENGTH_OFFSET = 40;
    public static final int BLOOM_SIZE_OFFSET = 44;
    public static final int HEADER_LENGTH = 48;

    /** A simple entry's header: the type bit and the 31-bit body length. */
    public static final int SIMPLE_ENTRY_HEADER = 4;
    /** A sub-entry batch's header: type and compression, records, uncompressed length, length. */
    public static final int SUB_BATCH_HEADER = 11;
    /** Entries of one chunk at most: the header counts them in 16 bits. */
    public static final int MAX_ENTRIES = 0xffff;

    /** Bloom filter bytes, when a chunk has one (osiris: 16..255, default 16). */
    public static final int MIN_BLOOM_SIZE = 16;
    public static final int MAX_BLOOM_SIZE = 255;
    public static final int DEFAULT_BLOOM_SIZE = 16;

    /**
     * The longest chunk the log stores (header, Bloom filter, data and trailer), 64 MiB: far above a stream
     * protocol frame (1 MiB by default) and AMQP's 16 MiB message limit, and it bounds what a reader maps at once.
     */
    public static final int MAX_CHUNK_LENGTH = 64 << 20;

    private ChunkDescriptor() {
    }

    /** The total stored length of a chunk with these section lengths. */
    public static long length(int bloomSize, long dataLength, long trailerLength) {
        return HEADER_LENGTH + bloomSize + dataLength + trailerLength;
    }
}
