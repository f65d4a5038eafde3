package io.skiffmq.store.stream;

import io.netty.util.internal.PlatformDependent;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.zip.CRC32;

/**
 * The chunk index of one segment: a file of fixed records, one per chunk in the order they were written, mapped
 * into memory (no heap per chunk, however long the stream). Big-endian:
 *
 * <pre>
 *   0                               8                               16
 *   +-------------------------------+-------------------------------+
 *   |        chunk id (u64)         |     timestamp (i64, ms)       |
 *   +-------------------------------+-------------------------------+
 *   16              20              24              28  29  30  31  32
 *   +---------------+---------------+---------------+---+---+---+---+
 *   | file position | chunk length  |    records    |typ|blm|flg|chk|
 *   +---------------+---------------+---------------+---+---+---+---+
 * </pre>
 *
 * <ul>
 *   <li>file position: where the chunk starts in the segment's Chronicle file ({@link SegmentFile});</li>
 *   <li>flags: bit 0, the chunk has a trailer (tracking recovery reads only those);</li>
 *   <li>chk: the XOR of bytes 0..30, XOR {@code 0x5a}, so a zeroed or torn record is not taken for one.</li>
 * </ul>
 *
 * The file's length is its capacity (sparse until written). A segment that will take no more chunks is
 * <em>sealed</em>: a small file {@code sealed} ({@code [u32 magic][u32 count][u64 next offset][u32 CRC-32 of the
 * 16 bytes before]}) says how many records are good, so opening a sealed segment reads two records, not all.
 *
 * <p>Threads: the log's writer appends; readers on any thread read records below {@link #count()} (a volatile
 * publication of what was written before it). Closed (unmapped) only when no reader holds its {@link Segment}.
 */
final class SegmentIndex implements AutoCloseable {
    static final String FILE = "index";
    static final String SEAL_FILE = "sealed";
    static final int RECORD_LENGTH = 32;
    static final int FLAG_TRAILER = 1;

    private static final int TIMESTAMP = 8;
    private static final int POSITION = 16;
    private static final int LENGTH = 20;
    private static final int RECORDS = 24;
    private static final int TYPE = 28;
    private static final int BLOOM = 29;
    private static final int FLAGS = 30;
    private static final int CHECK = 31;
    private static final int SEAL_MAGIC = 0x534b5353; // "SKSS"
    private static final int SEAL_LENGTH = 20;

    private final Path directory;
    private final FileChannel channel;
    private final MappedByteBuffer map;
    private final int capacity;
    private volatile int count;

    private SegmentIndex(Path directory, FileChannel channel, int capacity) throws IOException {
        this.directory = directory;
        this.channel = channel;
        this.capacity = capacity;
        this.map = channel.map(FileChannel.MapMode.READ_WRITE, 0, (long) capacity * RECORD_LENGTH);
    }

    /**
     * Opens a segment's index, making it with room for {@code capacity} chunks if it does not exist yet. Its count
     * is 0 until the caller sets it ({@link #recovered}).
     */
    static SegmentIndex open(Path directory, int capacity) throws IOException {
        Path file = directory.resolve(FILE);
        FileChannel channel = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.READ,
            StandardOpenOption.WRITE);
        try {
            long size = channel.size();
            if (size < RECORD_LENGTH) {
                // a new index, or one whose making was cut short: sparse until written
                try (var raf = new java.io.RandomAccessFile(file.toFile(), "rw")) {
                    raf.setLength((long) capacity * RECORD_LENGTH);
                }
                size = (long) capacity * RECORD_LENGTH;
            }
            return new SegmentIndex(directory, channel, (int) (size / RECORD_LENGTH));
        } catch (IOException | RuntimeException e) {
            channel.close();
            throw e;
        }
    }

    int capacity() {
        return capacity;
    }

    int count() {
        return count;
    }

    boolean isFull() {
        return count == capacity;
    }

    long chunkId(int i) {
        return map.getLong(i * RECORD_LENGTH);
    }

    long timestamp(int i) {
        return map.getLong(i * RECORD_LENGTH + TIMESTAMP);
    }

    long position(int i) {
        return map.getInt(i * RECORD_LENGTH + POSITION) & 0xffff_ffffL;
    }

    int length(int i) {
        return map.getInt(i * RECORD_LENGTH + LENGTH);
    }

    long records(int i) {
        return map.getInt(i * RECORD_LENGTH + RECORDS) & 0xffff_ffffL;
    }

    byte type(int i) {
        return map.get(i * RECORD_LENGTH + TYPE);
    }

    int bloomSize(int i) {
        return map.get(i * RECORD_LENGTH + BLOOM) & 0xff;
    }

    boolean hasTrailer(int i) {
        return (map.get(i * RECORD_LENGTH + FLAGS) & FLAG_TRAILER) != 0;
    }

    /** The offset after chunk {@code i}: its id plus its records. */
    long nextOffset(int i) {
        return chunkId(i) + records(i);
    }

    /** Writer thread: records a written chunk and publishes it. */
    void append(long chunkId, long timestamp, long position, int length, long records, byte type, int bloomSize,
            boolean trailer) {
        int n = count;
        if (n == capacity) {
            throw new IllegalStateException("segment index full at " + capacity + " chunks");
        }
        int at = n * RECORD_LENGTH;
        map.putLong(at, chunkId)
            .putLong(at + TIMESTAMP, timestamp)
            .putInt(at + POSITION, (int) position)
            .putInt(at + LENGTH, length)
            .putInt(at + RECORDS, (int) records)
            .put(at + TYPE, type)
            .put(at + BLOOM, (byte) bloomSize)
            .put(at + FLAGS, (byte) (trailer ? FLAG_TRAILER : 0))
            .put(at + CHECK, check(map, at));
        count = n + 1;
    }

    private static byte check(ByteBuffer b, int at) {
        int x = 0x5a;
        for (int i = 0; i < CHECK; i++) {
            x ^= b.get(at + i);
        }
        return (byte) x;
    }

    /** True when record {@code i} is whole: its check byte agrees. */
    boolean isWhole(int i) {
        int at = i * RECORD_LENGTH;
        return map.get(at + CHECK) == check(map, at);
    }

    /** Recovery: how many leading records are whole (their check byte) and follow on from each other. */
    int validPrefix() {
        for (int i = 0; i < capacity; i++) {
            if (!isWhole(i)
                    || (i > 0 && (chunkId(i) != nextOffset(i - 1) || position(i) <= position(i - 1)))) {
                return i;
            }
        }
        return capacity;
    }

    /** Recovery: the first {@code n} records are the segment's; what follows is cleared. */
    void recovered(int n) {
        for (int at = n * RECORD_LENGTH, end = capacity * RECORD_LENGTH; at < end; at += RECORD_LENGTH) {
            if (map.getLong(at) == 0 && map.getLong(at + 8) == 0 && map.getLong(at + 16) == 0
                    && map.getLong(at + 24) == 0) {
                break; // the rest was never written
            }
            for (int i = 0; i < RECORD_LENGTH; i += 8) {
                map.putLong(at + i, 0);
            }
        }
        count = n;
    }

    /** The last chunk whose id is at or below {@code offset} (the one that holds it), or -1. */
    int floor(long offset) {
        int low = 0;
        int high = count - 1;
        int found = -1;
        while (low <= high) {
            int mid = (low + high) >>> 1;
            if (chunkId(mid) <= offset) {
                found = mid;
                low = mid + 1;
            } else {
                high = mid - 1;
            }
        }
        return found;
    }

    /** The first chunk with a timestamp at or after {@code timestamp}, or {@link #count()} when none. */
    int ceilingTimestamp(long timestamp, int count) {
        int low = 0;
        int high = count;
        while (low < high) {
            int mid = (low + high) >>> 1;
            if (timestamp(mid) < timestamp) {
                low = mid + 1;
            } else {
                high = mid;
            }
        }
        return low;
    }

    /** Makes the records written so far durable. */
    void force() {
        map.force();
    }

    /**
     * Seals the segment: no chunk will be added; the next open trusts the first {@link #count()} records.
     *
     * @param sync make the index and the seal durable before returning
     */
    void seal(long nextOffset, boolean sync) throws IOException {
        if (sync) {
            map.force();
        }
        ByteBuffer seal = ByteBuffer.allocate(SEAL_LENGTH).putInt(SEAL_MAGIC).putInt(count).putLong(nextOffset);
        CRC32 crc = new CRC32();
        crc.update(seal.array(), 0, 16);
        seal.putInt((int) crc.getValue()).flip();
        try (FileChannel out = FileChannel.open(directory.resolve(SEAL_FILE), StandardOpenOption.CREATE,
                StandardOpenOption.WRITE, StandardOpenOption.TRUNCATE_EXISTING)) {
            while (seal.hasRemaining()) {
                out.write(seal);
            }
            if (sync) {
                out.force(true);
            }
        }
    }

    /**
     * The seal of a segment, if it has a whole one.
     *
     * @return {@code {count, next offset}}, or null
     */
    static long[] readSeal(Path directory) {
        try {
            byte[] bytes = Files.readAllBytes(directory.resolve(SEAL_FILE));
            if (bytes.length != SEAL_LENGTH) {
                return null;
            }
            ByteBuffer seal = ByteBuffer.wrap(bytes);
            CRC32 crc = new CRC32();
            crc.update(bytes, 0, 16);
            if (seal.getInt(0) != SEAL_MAGIC || seal.getInt(16) != (int) crc.getValue()) {
                return null;
            }
            return new long[] {seal.getInt(4) & 0xffff_ffffL, seal.getLong(8)};
        } catch (IOException e) {
            return null;
        }
    }

    static boolean isSealed(Path directory) {
        return Files.exists(directory.resolve(SEAL_FILE));
    }

    @Override
    public void close() {
        try {
            channel.close();
        } catch (IOException e) {
            // nothing was pending: the records are in the mapping, which goes next
        }
        PlatformDependent.freeDirectBuffer(map);
    }
}
