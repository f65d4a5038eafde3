package io.skiffmq.codec.stream;

import io.netty.buffer.ByteBuf;
import java.nio.charset.StandardCharsets;

/**
 * A reusable view over a {@code publish} frame (0x02), v1 or v2, read without creating objects: {@link #wrap}
 * checks the whole frame once, then {@link #next} steps from message to message and the accessors give the current
 * one's publishing id, filter value and bytes as positions in the frame. Message bytes are neither copied nor
 * parsed; the entry (type bit, size and data) is laid out as a chunk stores it, so the log can take
 * {@link #entryIndex()}..{@link #entryLength()} as they are.
 *
 * <pre>
 *   fields:  publisher id (uint8) | count (uint32) | entry ...
 *   v1 entry: publishing id (uint64) | simple entry or sub-entry batch
 *   v2 entry: publishing id (uint64) | filter value (string, -1 = none) | simple entry
 *   simple entry:     0 (1 bit) | size (31 bits) | message (size bytes)
 *   sub-entry batch:  1 (1 bit) | compression (3 bits) | reserved (4 bits) | records (uint16)
 *                     | uncompressed size (uint32) | size (uint32) | data (size bytes)
 * </pre>
 *
 * <p>{@link #wrap} refuses a frame whose entries do not fill it exactly or do not match its count
 * ({@link DecodeFailure#BAD_VALUE}, {@link DecodeFailure#BAD_FIELDS}), and a sub-entry batch in v2, which RabbitMQ
 * does not parse ({@code rabbit_stream_utils:write_messages}). What RabbitMQ checks in a batch afterwards (records,
 * compression type, uncompressed size), answering with a publish error rather than closing, is the broker's. The
 * view holds a reference to the frame but does not retain it. Not thread-safe: one per connection, on its event
 * loop.
 */
public final class PublishFrame {
    /** Publisher id and count. */
    private static final int FIXED = 5;
    private static final int SUB_BATCH_HEADER = 11;

    private ByteBuf frame;
    private int version;
    private int publisherId;
    private int count;
    private int first;
    private int end;
    // the current entry
    private int next;
    private long publishingId;
    private int filterIndex;
    private int filterLength;
    private int entryIndex;
    private int entryLength;
    private int dataIndex;
    private int dataLength;
    private int records;
    private int compression;
    private long uncompressedLength;

    /**
     * Checks {@code frame} (a publish frame as the decoder emits it) and positions the view before its first
     * message. Indexes of the frame are left alone.
     *
     * @throws IllegalArgumentException when the frame is not a publish
     */
    public PublishFrame wrap(ByteBuf frame) throws StreamDecodeException {
        int v = StreamFrame.version(frame);
        int body = StreamFrame.body(frame, CommandKey.PUBLISH);
        int to = frame.writerIndex();
        if (to - body < FIXED) {
            throw StreamDecodeException.of(DecodeFailure.BAD_FIELDS, "publish with %d bytes of fields", to - body);
        }
        long declared = frame.getUnsignedInt(body + 1);
        // a message takes 12 bytes at least: publishing id and size (v2: and a filter length)
        if (declared * (v == 1 ? 12 : 14) > to - body - FIXED) {
            throw StreamDecodeException.of(DecodeFailure.BAD_VALUE, "%d messages in %d bytes", declared,
                to - body - FIXED);
        }
        int entries = 0;
        for (int at = body + FIXED; at < to; entries++) {
            at = checkEntry(frame, at, to, v);
        }
        if (entries != declared) {
            throw StreamDecodeException.of(DecodeFailure.BAD_VALUE, "publish of %d messages declares %d", entries,
                declared);
        }
        this.frame = frame;
        this.version = v;
        this.publisherId = frame.getUnsignedByte(body);
        this.count = entries;
        this.first = body + FIXED;
        this.end = to;
        rewind();
        return this;
    }

    /** Checks the entry at {@code at}; returns where the next one starts. */
    private static int checkEntry(ByteBuf frame, int at, int to, int version) throws StreamDecodeException {
        at = need(at, 8, to, "publishing id");
        if (version == 2) {
            need(at, 2, to, "filter value length");
            int filter = frame.getShort(at);
            if (filter < -1) {
                throw StreamDecodeException.of(DecodeFailure.BAD_VALUE, "filter value of length %d", filter);
            }
            at = need(at + 2, Math.max(filter, 0), to, "filter value");
        }
        need(at, 1, to, "entry");
        if ((frame.getUnsignedByte(at) & 0x80) == 0) {
            need(at, 4, to, "message size");
            // the type bit is 0, so the 31-bit size reads as a non-negative int
            return need(at + 4, frame.getInt(at), to, "message");
        }
        if (version == 2) {
            throw StreamDecodeException.of(DecodeFailure.BAD_VALUE, "sub-entry batch in publish v2");
        }
        need(at, SUB_BATCH_HEADER, to, "sub-entry batch");
        return need(at + SUB_BATCH_HEADER, frame.getUnsignedInt(at + 7), to, "sub-entry batch");
    }

    /** {@code at + length}, or a failure when that passes {@code to}. */
    private static int need(int at, long length, int to, String what) throws StreamDecodeException {
        if (length > to - at) {
            throw StreamDecodeException.of(DecodeFailure.BAD_FIELDS, "%s of %d bytes, only %d left", what, length,
                to - at);
        }
        return at + (int) length;
    }

    /** Goes back before the first message. */
    public void rewind() {
        next = first;
    }

    /** Moves to the next message; false after the last. */
    public boolean next() {
        if (next >= end) {
            return false;
        }
        int at = next;
        publishingId = frame.getLong(at);
        at += 8;
        filterLength = -1;
        filterIndex = -1;
        if (version == 2) {
            filterLength = frame.getShort(at);
            at += 2;
            if (filterLength >= 0) {
                filterIndex = at;
                at += filterLength;
            }
        }
        entryIndex = at;
        int type = frame.getUnsignedByte(at);
        if ((type & 0x80) == 0) {
            records = 1;
            compression = 0;
            dataIndex = at + 4;
            dataLength = frame.getInt(at);
            uncompressedLength = dataLength;
        } else {
            compression = (type >> 4) & 0x07;
            records = frame.getUnsignedShort(at + 1);
            uncompressedLength = frame.getUnsignedInt(at + 3);
            dataLength = frame.getInt(at + 7);
            dataIndex = at + SUB_BATCH_HEADER;
        }
        next = dataIndex + dataLength;
        entryLength = next - entryIndex;
        return true;
    }

    /** 1 or 2: 2 carries a filter value per message. */
    public int version() {
        return version;
    }

    public int publisherId() {
        return publisherId;
    }

    /** Messages (entries: a sub-entry batch counts once) in the frame. */
    public int count() {
        return count;
    }

    /** The buffer the positions refer to. */
    public ByteBuf frame() {
        return frame;
    }

    /** The current message's publishing id (a uint64). */
    public long publishingId() {
        return publishingId;
    }

    public boolean hasFilterValue() {
        return filterLength >= 0;
    }

    /** Where the current filter value's UTF-8 bytes start; -1 when it has none. */
    public int filterValueIndex() {
        return filterIndex;
    }

    /** The UTF-8 length of the current filter value; -1 when it has none. */
    public int filterValueLength() {
        return filterLength;
    }

    /** The current filter value as a string (allocates), or null. */
    public String filterValue() {
        return filterLength < 0 ? null : frame.toString(filterIndex, filterLength, StandardCharsets.UTF_8);
    }

    /** Where the current entry starts: its type bit and size, then its data, as a chunk stores it. */
    public int entryIndex() {
        return entryIndex;
    }

    public int entryLength() {
        return entryLength;
    }

    /** True when the current entry is a sub-entry batch (v1 only). */
    public boolean isSubEntryBatch() {
        return (frame.getUnsignedByte(entryIndex) & 0x80) != 0;
    }

    /** The records in the current entry: 1, or a sub-entry batch's count. */
    public int records() {
        return records;
    }

    /** A sub-entry batch's compression (0 none, 1 gzip, 2 snappy, 3 lz4, 4 zstd); 0 for a simple entry. */
    public int compression() {
        return compression;
    }

    /** A sub-entry batch's uncompressed size; a simple entry's size. */
    public long uncompressedLength() {
        return uncompressedLength;
    }

    /** Where the current message's bytes (or the batch's data) start. */
    public int messageIndex() {
        return dataIndex;
    }

    public int messageLength() {
        return dataLength;
    }
}
