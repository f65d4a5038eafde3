package io.skiffmq.store.stream;

import static io.skiffmq.store.stream.ChunkDescriptor.*;

import java.nio.ByteBuffer;
import java.util.zip.CRC32;

/**
 * Checks a whole stored chunk (recovery reading the files back, a replica's {@link StreamLog#appendChunk}): the
 * header's magic and version, type and Bloom size, that the sections add up to the chunk's length, the CRC-32 of
 * the data, that the entries are whole and count what the header says, and that the tracking entries (trailer,
 * delta or snapshot) are whole. Anything else is damage. Not thread-safe (one CRC each); owned by its caller.
 */
final class ChunkCheck {
    private final CRC32 crc = new CRC32();

    /**
     * @param b the bytes; absolute reads only, its position and limit are left alone
     * @param at where the chunk starts
     * @param length the bytes it should occupy
     * @return null when the chunk is whole and sound, else what is wrong
     */
    String check(ByteBuffer b, int at, int length) {
        if (length < HEADER_LENGTH) {
            return "a chunk of " + length + " bytes is shorter than its header";
        }
        if (b.get(at + MAGIC_VERSION_OFFSET) != MAGIC_VERSION) {
            return String.format("magic and version 0x%02x, not 0x50", b.get(at) & 0xff);
        }
        int type = b.get(at + TYPE_OFFSET);
        if (type != TYPE_USER && type != TYPE_TRACKING_DELTA && type != TYPE_TRACKING_SNAPSHOT) {
            return "chunk type " + type;
        }
        int bloomSize = b.get(at + BLOOM_SIZE_OFFSET) & 0xff;
        if (bloomSize != 0 && bloomSize < MIN_BLOOM_SIZE) {
            return "a Bloom filter of " + bloomSize + " bytes";
        }
        long dataLength = b.getInt(at + DATA_LENGTH_OFFSET) & 0xffff_ffffL;
        long trailerLength = b.getInt(at + TRAILER_LENGTH_OFFSET) & 0xffff_ffffL;
        long expected = ChunkDescriptor.length(bloomSize, dataLength, trailerLength);
        if (expected != length) {
            return "sections of " + expected + " bytes in a chunk of " + length;
        }
        int data = at + HEADER_LENGTH + bloomSize;
        crc.reset();
        crc.update(b.duplicate().limit(data + (int) dataLength).position(data));
        if ((int) crc.getValue() != b.getInt(at + CRC_OFFSET)) {
            return String.format("CRC-32 0x%08x of the data, the header says 0x%08x", crc.getValue(),
                b.getInt(at + CRC_OFFSET));
        }
        String entries = checkEntries(b, at, data, (int) dataLength, type);
        if (entries != null) {
            return entries;
        }
        if (type == TYPE_USER && !Tracking.valid(b, data + (int) dataLength, (int) trailerLength, false)) {
            return "a trailer that is not whole tracking entries";
        }
        return null;
    }

    private static String checkEntries(ByteBuffer b, int at, int data, int dataLength, int type) {
        int entries = 0;
        long records = 0;
        int end = data + dataLength;
        for (int e = data; e < end; entries++) {
            if (end - e < SIMPLE_ENTRY_HEADER) {
                return "a cut entry at data byte " + (e - data);
            }
            long next;
            if ((b.get(e) & 0x80) == 0) {
                next = e + SIMPLE_ENTRY_HEADER + (b.getInt(e) & 0xffff_ffffL);
                records++;
            } else {
                if (type != TYPE_USER || end - e < SUB_BATCH_HEADER) {
                    return "a cut or misplaced sub-entry batch at data byte " + (e - data);
                }
                next = e + SUB_BATCH_HEADER + (b.getInt(e + 7) & 0xffff_ffffL);
                records += b.getShort(e + 1) & 0xffff;
            }
            if (next > end) {
                return "an entry running past the data";
            }
            if (type != TYPE_USER && !Tracking.valid(b, e + SIMPLE_ENTRY_HEADER, (int) next - e - SIMPLE_ENTRY_HEADER,
                    type == TYPE_TRACKING_SNAPSHOT)) {
                return "tracking entries that are not whole";
            }
            e = (int) next;
        }
        int headerEntries = b.getShort(at + ENTRIES_OFFSET) & 0xffff;
        long headerRecords = b.getInt(at + RECORDS_OFFSET) & 0xffff_ffffL;
        if (type != TYPE_USER) {
            return entries == 1 && headerEntries == 1 && headerRecords == 0 ? null
                : "a tracking chunk of " + entries + " entries and " + headerRecords + " records, not 1 and 0";
        }
        if (entries != headerEntries || records != headerRecords) {
            return entries + " entries and " + records + " records, the header says " + headerEntries + " and "
                + headerRecords;
        }
        return null;
    }
}
