package io.skiffmq.store;

import static io.skiffmq.store.RecordDescriptor.ACK_RANGE_LENGTH;
import static io.skiffmq.store.RecordDescriptor.CRC_OFFSET;
import static io.skiffmq.store.RecordDescriptor.DELIVERY_COUNT_OFFSET;
import static io.skiffmq.store.RecordDescriptor.FLAGS_MASK;
import static io.skiffmq.store.RecordDescriptor.FLAGS_OFFSET;
import static io.skiffmq.store.RecordDescriptor.FORMAT_AMQP_1_0;
import static io.skiffmq.store.RecordDescriptor.FORMAT_SHIFT;
import static io.skiffmq.store.RecordDescriptor.HEADER_LENGTH;
import static io.skiffmq.store.RecordDescriptor.LENGTH_OFFSET;
import static io.skiffmq.store.RecordDescriptor.QUEUE_ID_OFFSET;
import static io.skiffmq.store.RecordDescriptor.SEQUENCE_OFFSET;
import static io.skiffmq.store.RecordDescriptor.TYPE_OFFSET;
import static io.skiffmq.store.RecordDescriptor.VERSION;
import static io.skiffmq.store.RecordDescriptor.VERSION_1;
import static io.skiffmq.store.RecordDescriptor.VERSION_2;
import static io.skiffmq.store.RecordDescriptor.VERSION_OFFSET;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.util.concurrent.FastThreadLocal;
import io.skiffmq.core.message.Message;
import io.skiffmq.core.message.MessageFormat;
import java.nio.charset.StandardCharsets;
import java.util.zip.CRC32C;

/**
 * Writes and reads journal records in the layout of {@link RecordDescriptor}. Writing appends to a buffer; reading
 * checks version, type, length and checksum before trusting anything, and reports a record that fails as
 * {@link Corrupt} (recovery cuts the journal there). Safe from any thread: its one state is a scratch array per
 * thread for checksums.
 */
public final class JournalRecord {
    /** Where off-heap bytes are copied to be checksummed, a few KiB at a time; one per thread. */
    private static final FastThreadLocal<byte[]> CRC_SCRATCH = new FastThreadLocal<>() {
        @Override
        protected byte[] initialValue() {
            return new byte[4096];
        }
    };

    private JournalRecord() {
    }

    /**
     * A record as read back. {@code version} the layout it was written in; {@code flags} without the format tag; {@code format} the tag of a publish record's
     * message (1, AMQP 1.0, for a version 1 record), 0 for other types. {@code message} (a publish's) and
     * {@code ackRanges} (an {@link RecordType#ACKS}'s body) are slices of the input, null for other types: valid
     * while the input is.
     */
    public record Read(int version, RecordType type, int flags, long queueId, long sequence, int deliveryCount,
            String exchange, String routingKey, int format, ByteBuf message, ByteBuf ackRanges) {
        /** The ranges of an {@link RecordType#ACKS} record. */
        public int ackRangeCount() {
            return ackRanges.readableBytes() / ACK_RANGE_LENGTH;
        }

        /** The first sequence of range {@code i}. */
        public long ackFirst(int i) {
            return ackRanges.getLong(ackRanges.readerIndex() + i * ACK_RANGE_LENGTH);
        }

        /** How many sequences range {@code i} holds, from {@link #ackFirst}. */
        public int ackCount(int i) {
            return ackRanges.getInt(ackRanges.readerIndex() + i * ACK_RANGE_LENGTH + 8);
        }
    }

    /** A record that is cut short or does not match its checksum: where the good journal ends. */
    public static final class Corrupt extends Exception {
        private static final long serialVersionUID = 1L;

        Corrupt(String message) {
            super(message, null, false, false);
        }
    }

    /**
     * Appends a {@link RecordType#PUBLISH} record of {@code message}'s stored form, tagged with its format.
     *
     * @param message read, not retained or released
     */
    public static void writePublish(ByteBuf out, long queueId, long sequence, int flags, int deliveryCount,
            Message message) {
        int start = startPublish(out, queueId, sequence, flags, message.format().tag(), deliveryCount,
            message.exchange(), message.routingKey());
        message.writeStored(out);
        finish(out, start);
    }

    /**
     * Appends a {@link RecordType#PUBLISH} record of stored message bytes of format {@code format} (a
     * {@link MessageFormat#tag()}). The bytes are copied into {@code out} as they are.
     *
     * @param message the stored message: its readable bytes are written, its indexes unchanged
     */
    public static void writePublish(ByteBuf out, long queueId, long sequence, int flags, int deliveryCount,
            String exchange, String routingKey, int format, ByteBuf message) {
        int start = startPublish(out, queueId, sequence, flags, format, deliveryCount, exchange, routingKey);
        out.writeBytes(message, message.readerIndex(), message.readableBytes());
        finish(out, start);
    }

    private static int startPublish(ByteBuf out, long queueId, long sequence, int flags, int format,
            int deliveryCount, String exchange, String routingKey) {
        if ((flags & ~FLAGS_MASK) != 0 || format < 1 || format > 0xff) {
            throw new IllegalArgumentException("flags 0x" + Integer.toHexString(flags) + ", format " + format);
        }
        int start = writeHeader(out, RecordType.PUBLISH, flags | format << FORMAT_SHIFT, queueId, sequence,
            deliveryCount);
        writeString(out, exchange);
        writeString(out, routingKey == null ? "" : routingKey);
        return start;
    }

    /** Appends a record with no body (ack, requeue, expire, queue deleted). */
    public static void write(ByteBuf out, RecordType type, long queueId, long sequence, int flags, int deliveryCount) {
        if (type == RecordType.PUBLISH || type == RecordType.ACKS) {
            throw new IllegalArgumentException("a " + type + " record has a body: use writePublish or writeAcks");
        }
        finish(out, writeHeader(out, type, flags, queueId, sequence, deliveryCount));
    }

    /**
     * Appends an {@link RecordType#ACKS} record: the sequences {@code firsts[i]} to {@code firsts[i] + counts[i] -
     * 1} of queue {@code queueId}, for each of the first {@code ranges} ranges.
     */
    public static void writeAcks(ByteBuf out, long queueId, long[] firsts, int[] counts, int ranges) {
        if (ranges < 1) {
            throw new IllegalArgumentException("an acks record holds at least one range");
        }
        int start = writeHeader(out, RecordType.ACKS, 0, queueId, 0, 0);
        for (int i = 0; i < ranges; i++) {
            if (counts[i] < 1) {
                throw new IllegalArgumentException("range of " + counts[i] + " sequences");
            }
            out.writeLong(firsts[i]);
            out.writeInt(counts[i]);
        }
        finish(out, start);
    }

    private static int writeHeader(ByteBuf out, RecordType type, int flags, long queueId, long sequence,
            int deliveryCount) {
        int start = out.writerIndex();
        out.writeByte(VERSION);
        out.writeByte(type.code());
        out.writeShort(flags);
        out.writeLong(queueId);
        out.writeLong(sequence);
        out.writeInt(deliveryCount);
        out.writeInt(0); // length, set by finish
        out.writeInt(0); // CRC-32C, set by finish
        return start;
    }

    private static void writeString(ByteBuf out, String value) {
        int length = ByteBufUtil.utf8Bytes(value);
        if (length > 0xffff) {
            throw new IllegalArgumentException("name longer than 65535 bytes");
        }
        out.writeShort(length);
        ByteBufUtil.reserveAndWriteUtf8(out, value, length); // encoded in place: no byte[] per name
    }

    private static void finish(ByteBuf out, int start) {
        int length = out.writerIndex() - start - HEADER_LENGTH;
        out.setInt(start + LENGTH_OFFSET, length);
        out.setInt(start + CRC_OFFSET, (int) crc(out, start, length));
    }

    private static long crc(ByteBuf buf, int start, int bodyLength) {
        CRC32C crc = new CRC32C();
        update(crc, buf, start, CRC_OFFSET);
        update(crc, buf, start + HEADER_LENGTH, bodyLength);
        return crc.getValue();
    }

    /** Adds bytes to {@code crc} from a heap buffer's array, or through a scratch array: no ByteBuffer per call. */
    private static void update(CRC32C crc, ByteBuf buf, int index, int length) {
        if (buf.hasArray()) {
            crc.update(buf.array(), buf.arrayOffset() + index, length);
            return;
        }
        byte[] scratch = CRC_SCRATCH.get();
        for (int n; length > 0; index += n, length -= n) {
            n = Math.min(length, scratch.length);
            buf.getBytes(index, scratch, 0, n);
            crc.update(scratch, 0, n);
        }
    }

    /** Bytes the record at {@code buf}'s reader index takes, or -1 when fewer than a header are readable. */
    public static int length(ByteBuf buf) {
        if (buf.readableBytes() < HEADER_LENGTH) {
            return -1;
        }
        return HEADER_LENGTH + buf.getInt(buf.readerIndex() + LENGTH_OFFSET);
    }

    /**
     * Reads the record at {@code buf}'s reader index and moves past it.
     *
     * @throws Corrupt when it is cut short, of an unknown version or type, or fails its checksum; the reader index
     *         is then unchanged
     */
    public static Read read(ByteBuf buf) throws Corrupt {
        int start = buf.readerIndex();
        if (buf.readableBytes() < HEADER_LENGTH) {
            throw new Corrupt("record header cut short at " + start + " (" + buf.readableBytes() + " bytes)");
        }
        byte version = buf.getByte(start + VERSION_OFFSET);
        if (version < VERSION_1 || version > VERSION) {
            throw new Corrupt("record version " + version + " at " + start + ", this broker reads " + VERSION_1
                + " to " + VERSION);
        }
        RecordType type = RecordType.of(buf.getByte(start + TYPE_OFFSET));
        int length = buf.getInt(start + LENGTH_OFFSET);
        if (type == null || length < 0 || length > buf.readableBytes() - HEADER_LENGTH) {
            throw new Corrupt("record at " + start + " is cut short or has an unknown type");
        }
        if ((int) crc(buf, start, length) != buf.getInt(start + CRC_OFFSET)) {
            throw new Corrupt("record at " + start + " fails its checksum");
        }
        int flagsWord = buf.getUnsignedShort(start + FLAGS_OFFSET);
        int flags = flagsWord & FLAGS_MASK;
        int format = flagsWord >>> FORMAT_SHIFT;
        if (version == VERSION_1) {
            format = type == RecordType.PUBLISH ? FORMAT_AMQP_1_0 : 0;
        } else if ((type == RecordType.PUBLISH) != (format != 0)) {
            throw new Corrupt(type + " record at " + start + " has format tag " + format);
        }
        long queueId = buf.getLong(start + QUEUE_ID_OFFSET);
        long sequence = buf.getLong(start + SEQUENCE_OFFSET);
        int deliveryCount = buf.getInt(start + DELIVERY_COUNT_OFFSET);
        String exchange = null;
        String routingKey = null;
        ByteBuf message = null;
        ByteBuf ackRanges = null;
        int body = start + HEADER_LENGTH;
        if (type == RecordType.ACKS) {
            if (version <= VERSION_2 || flags != 0 || length == 0 || length % ACK_RANGE_LENGTH != 0) {
                throw new Corrupt("acks record at " + start + " of version " + version + ", flags " + flags
                    + ", body of " + length + " bytes");
            }
            ackRanges = buf.slice(body, length);
            for (int i = 8; i < length; i += ACK_RANGE_LENGTH) {
                if (ackRanges.getInt(i) < 1) {
                    throw new Corrupt("acks record at " + start + " has a range of " + ackRanges.getInt(i));
                }
            }
        }
        if (type == RecordType.PUBLISH) {
            int position = body;
            int exchangeLength = buf.getUnsignedShort(position);
            exchange = buf.toString(position + 2, exchangeLength, StandardCharsets.UTF_8);
            position += 2 + exchangeLength;
            int keyLength = buf.getUnsignedShort(position);
            routingKey = buf.toString(position + 2, keyLength, StandardCharsets.UTF_8);
            position += 2 + keyLength;
            if (position > body + length) {
                throw new Corrupt("publish record at " + start + " has names longer than its body");
            }
            message = buf.slice(position, body + length - position);
        }
        buf.readerIndex(body + length);
        return new Read(version, type, flags, queueId, sequence, deliveryCount, exchange, routingKey, format,
            message, ackRanges);
    }
}
