package io.skiffmq.store.stream;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.zip.CRC32;

/**
 * A chunk decoded by the tests' own reading of the stream protocol's chunk layout (osiris' "Chunk format", the
 * Java client's {@code handleDeliver}), written apart from the log's code so that a shared mistake cannot hide.
 * Decoding checks what a client checks: the magic and version byte, the CRC-32 of the data, whole entries.
 */
record DecodedChunk(int type, int entries, long records, long timestamp, long epoch, long chunkId, int bloomSize,
        byte[] bloom, List<byte[]> bodies, byte[] trailer) {

    /** Decodes the whole stored chunk in {@code bytes} (header, Bloom filter, data, trailer). */
    static DecodedChunk stored(byte[] bytes) {
        ByteBuffer b = ByteBuffer.wrap(bytes);
        if (b.get(0) != (byte) 0x50) {
            throw new AssertionError("magic and version " + b.get(0));
        }
        int bloomSize = b.get(44) & 0xff;
        long dataLength = b.getInt(36) & 0xffffffffL;
        long trailerLength = b.getInt(40) & 0xffffffffL;
        if (48 + bloomSize + dataLength + trailerLength != bytes.length) {
            throw new AssertionError("sections of " + (48 + bloomSize + dataLength + trailerLength) + " bytes in "
                + bytes.length);
        }
        if (b.get(45) != 0 || b.get(46) != 0 || b.get(47) != 0) {
            throw new AssertionError("reserved bytes are not 0");
        }
        byte[] bloom = new byte[bloomSize];
        b.get(48, bloom);
        byte[] data = new byte[(int) dataLength];
        b.get(48 + bloomSize, data);
        byte[] trailer = new byte[(int) trailerLength];
        b.get(48 + bloomSize + (int) dataLength, trailer);
        return decode(b, bloom, data, trailer);
    }

    /** Decodes what a consumer receives: the 48 header bytes then the data. */
    static DecodedChunk delivered(byte[] bytes) {
        ByteBuffer b = ByteBuffer.wrap(bytes);
        long dataLength = b.getInt(36) & 0xffffffffL;
        if (48 + dataLength != bytes.length) {
            throw new AssertionError("a delivery of " + bytes.length + " bytes for " + dataLength + " of data");
        }
        byte[] data = new byte[(int) dataLength];
        b.get(48, data);
        return decode(b, new byte[0], data, new byte[0]);
    }

    private static DecodedChunk decode(ByteBuffer header, byte[] bloom, byte[] data, byte[] trailer) {
        CRC32 crc = new CRC32();
        crc.update(data);
        if ((int) crc.getValue() != header.getInt(32)) {
            throw new AssertionError("CRC-32 mismatch at chunk " + header.getLong(24));
        }
        ByteBuffer d = ByteBuffer.wrap(data);
        List<byte[]> bodies = new ArrayList<>();
        long records = 0;
        while (d.hasRemaining()) {
            int first = d.get(d.position()) & 0xff;
            if (first < 0x80) {
                byte[] body = new byte[d.getInt()];
                d.get(body);
                bodies.add(body);
                records++;
            } else {
                d.get();
                records += d.getShort() & 0xffff;
                d.getInt();
                byte[] batch = new byte[d.getInt()];
                d.get(batch);
                bodies.add(batch);
            }
        }
        int entries = header.getShort(2) & 0xffff;
        long headerRecords = header.getInt(4) & 0xffffffffL;
        int type = header.get(1);
        if (bodies.size() != entries || (type == 0 && records != headerRecords)) {
            throw new AssertionError(bodies.size() + " entries and " + records + " records, the header says "
                + entries + " and " + headerRecords);
        }
        return new DecodedChunk(type, entries, headerRecords, header.getLong(8), header.getLong(16),
            header.getLong(24), header.get(44) & 0xff, bloom, bodies, trailer);
    }

    List<String> texts() {
        return bodies.stream().map(b -> new String(b, StandardCharsets.UTF_8)).toList();
    }
}
