package io.skiffmq.store;

import static io.skiffmq.store.RecordDescriptor.ACK_RANGE_LENGTH;
import static io.skiffmq.store.RecordDescriptor.CRC_OFFSET;
import static io.skiffmq.store.RecordDescriptor.DELIVERY_COUNT_OFFSET;
import static io.skiffmq.store.RecordDescriptor.FLAGS_MASK;
import static io.skiffmq.store.RecordDescriptor.FLAGS_OFFSET;
import static io.skiffmq.store.RecordDescriptor.FLAG_EXPIRES;
import static io.skiffmq.store.RecordDescriptor.FLAG_RETURNS;
import static io.skiffmq.store.RecordDescriptor.FORMAT_AMQP_1_0;
import static io.skiffmq.store.RecordDescriptor.FORMAT_SHIFT;
import static io.skiffmq.store.RecordDescriptor.HEADER_LENGTH;
import static io.skiffmq.store.RecordDescriptor.LENGTH_OFFSET;
import static io.skiffmq.store.RecordDescriptor.QUEUE_ID_OFFSET;
import static io.skiffmq.store.RecordDescriptor.SEQUENCE_OFFSET;
import static io.skiffmq.store.RecordDescriptor.TYPE_OFFSET;
import static io.skiffmq.store.RecordDescriptor.VERSION;
import static io.skiffmq.store.RecordDescriptor.VERSION_1;
import static io.skiffmq.store.RecordDescriptor.VERSION_5;
import static io.skiffmq.store.RecordDescriptor.VERSION_6;
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
     * A record as read back. {@code version} the layout it was written in; {@code flags} without the format tag;
     * {@code format} the tag of a publish record's message (1, AMQP 1.0, for a version 1 record), 0 for other types;
     * {@code expiresAt} when a publish record's message expires (ms since the epoch, {@link #NO_EXPIRY} when the
     * record says none: always before version 5). {@code message} (a publish's) and {@code ranges} (the body of an
     * {@link RecordType#ACKS} or {@link RecordType#DELIVERED}) are slices of the input, null for other types: valid
     * while the input is. {@code returns}: a publish or requeue record's count of returns, {@link #NO_RETURNS} when
     * it has none (the delivery count stands for it). {@code reason}: a {@link RecordType#DEAD_LETTERING} record's
     * (why the message died), -1 for other types.
     */
    public record Read(int version, RecordType type, int flags, long queueId, long sequence, int deliveryCount,
            String exchange, String routingKey, int format, long expiresAt, ByteBuf message, ByteBuf ranges,
            long returns, int reason) {
        /** The ranges of an {@link RecordType#ACKS} or {@link RecordType#DELIVERED} record. */
        public int rangeCount() {
            return ranges.readableBytes() / ACK_RANGE_LENGTH;
        }

        /** The first sequence of range {@code i}. */
        public long rangeFirst(int i) {
            return ranges.getLong(ranges.readerIndex() + i * ACK_RANGE_LENGTH);
        }

        /** How many sequences range {@code i} holds, from {@link #rangeFirst}. */
        public int rangeLength(int i) {
            return ranges.getInt(ranges.readerIndex() + i * ACK_RANGE_LENGTH + 8);
        }
    }

    /** {@link Read#returns} of a record without the returns flag. */
    public static final long NO_RETURNS = -1;

    /** {@link Read#expiresAt} of a message that never expires (its queue's expiry of one). */
    public static final long NO_EXPIRY = Long.MAX_VALUE;

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
     * @param expiresAt when the message expires in its queue (ms since the epoch), {@link #NO_EXPIRY} for never: 8
     *        bytes more, only in the records of messages that expire
     * @param message read, not retained or released
     */
    public static void writePublish(ByteBuf out, long queueId, long sequence, int flags, int deliveryCount,
            long expiresAt, Message message) {
        writePublish(out, queueId, sequence, flags, deliveryCount, NO_RETURNS, expiresAt, message);
    }

    /**
     * As {@link #writePublish(ByteBuf, long, long, int, int, long, Message)}, with the message's count of returns
     * ({@link #NO_RETURNS} for none: 4 bytes more, only when there is one).
     */
    public static void writePublish(ByteBuf out, long queueId, long sequence, int flags, int deliveryCount,
            long returns, long expiresAt, Message message) {
        int start = startPublish(out, queueId, sequence, flags, message.format().tag(), deliveryCount,
            message.exchange(), message.routingKey(), expiresAt, returns);
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
        int start = startPublish(out, queueId, sequence, flags, format, deliveryCount, exchange, routingKey,
            NO_EXPIRY, NO_RETURNS);
        out.writeBytes(message, message.readerIndex(), message.readableBytes());
        finish(out, start);
    }

    private static int startPublish(ByteBuf out, long queueId, long sequence, int flags, int format,
            int deliveryCount, String exchange, String routingKey, long expiresAt, long returns) {
        if ((flags & ~FLAGS_MASK) != 0 || (flags & (FLAG_EXPIRES | FLAG_RETURNS)) != 0 || format < 1
                || format > 0xff) {
            throw new IllegalArgumentException("flags 0x" + Integer.toHexString(flags) + ", format " + format);
        }
        if (expiresAt != NO_EXPIRY) {
            flags |= FLAG_EXPIRES;
        }
        if (returns != NO_RETURNS) {
            flags |= FLAG_RETURNS;
        }
        int start = writeHeader(out, RecordType.PUBLISH, flags | format << FORMAT_SHIFT, queueId, sequence,
            deliveryCount);
        writeString(out, exchange);
        writeString(out, routingKey == null ? "" : routingKey);
        if (expiresAt != NO_EXPIRY) {
            out.writeLong(expiresAt);
        }
        if (returns != NO_RETURNS) {
            out.writeInt((int) Math.min(returns, Integer.MAX_VALUE));
        }
        return start;
    }

    /**
     * Appends a record with no body (ack, requeue, expire, queue deleted; clean stop and started, with queue id and
     * sequence 0).
     */
    public static void write(ByteBuf out, RecordType type, long queueId, long sequence, int flags, int deliveryCount) {
        if (hasRanges(type) || type == RecordType.PUBLISH || type == RecordType.DEAD_LETTERING) {
            throw new IllegalArgumentException("a " + type + " record has a body: use writePublish, writeRanges or "
                + "writeDeadLettering");
        }
        finish(out, writeHeader(out, type, flags, queueId, sequence, deliveryCount));
    }

    /** Appends a {@link RecordType#DEAD_LETTERING} record: the message waits to be dead-lettered, for {@code reason}. */
    public static void writeDeadLettering(ByteBuf out, long queueId, long sequence, int reason) {
        int start = writeHeader(out, RecordType.DEAD_LETTERING, 0, queueId, sequence, 0);
        out.writeByte(reason);
        finish(out, start);
    }

    /** Appends a {@link RecordType#REQUEUE} record that holds the message's count of returns. */
    public static void writeRequeue(ByteBuf out, long queueId, long sequence, int deliveryCount, long returns) {
        int start = writeHeader(out, RecordType.REQUEUE, FLAG_RETURNS, queueId, sequence, deliveryCount);
        out.writeInt((int) Math.min(returns, Integer.MAX_VALUE));
        finish(out, start);
    }

    private static boolean hasRanges(RecordType type) {
        return type == RecordType.ACKS || type == RecordType.DELIVERED;
    }

    /** {@link #writeRanges} of an {@link RecordType#ACKS} record. */
    public static void writeAcks(ByteBuf out, long queueId, long[] firsts, int[] counts, int ranges) {
        writeRanges(out, RecordType.ACKS, queueId, firsts, counts, ranges);
    }

    /**
     * Appends an {@link RecordType#ACKS} or {@link RecordType#DELIVERED} record: the sequences {@code firsts[i]}
     * to {@code firsts[i] + counts[i] - 1} of queue {@code queueId}, for each of the first {@code ranges} ranges.
     */
    public static void writeRanges(ByteBuf out, RecordType type, long queueId, long[] firsts, int[] counts,
            int ranges) {
        if (!hasRanges(type)) {
            throw new IllegalArgumentException("a " + type + " record holds no ranges");
        }
        if (ranges < 1) {
            throw new IllegalArgumentException("a " + type + " record holds at least one range");
        }
        int start = writeHeader(out, type, 0, queueId, 0, 0);
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
        if (version < type.since()) {
            throw new Corrupt(type + " record at " + start + " of version " + version + ", before the type was");
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
        if ((flags & FLAG_EXPIRES) != 0 && (type != RecordType.PUBLISH || version < VERSION_5)) {
            throw new Corrupt(type + " record at " + start + " of version " + version + " has an expiry");
        }
        boolean hasReturns = (flags & FLAG_RETURNS) != 0;
        if (hasReturns && (type != RecordType.PUBLISH && type != RecordType.REQUEUE || version < VERSION_6
                || type == RecordType.REQUEUE && length < 4)) {
            throw new Corrupt(type + " record at " + start + " of version " + version + " has returns");
        }
        long returns = NO_RETURNS;
        if (hasReturns && type == RecordType.REQUEUE) {
            returns = buf.getUnsignedInt(start + HEADER_LENGTH);
        }
        int reason = -1;
        if (type == RecordType.DEAD_LETTERING) {
            if (length != 1) {
                throw new Corrupt(type + " record at " + start + " has a body of " + length + " bytes");
            }
            reason = buf.getUnsignedByte(start + HEADER_LENGTH);
        }
        String exchange = null;
        String routingKey = null;
        long expiresAt = NO_EXPIRY;
        ByteBuf message = null;
        ByteBuf ranges = null;
        int body = start + HEADER_LENGTH;
        if (hasRanges(type)) {
            if (flags != 0 || length == 0 || length % ACK_RANGE_LENGTH != 0) {
                throw new Corrupt(type + " record at " + start + " of version " + version + ", flags " + flags
                    + ", body of " + length + " bytes");
            }
            ranges = buf.slice(body, length);
            for (int i = 8; i < length; i += ACK_RANGE_LENGTH) {
                if (ranges.getInt(i) < 1) {
                    throw new Corrupt(type + " record at " + start + " has a range of " + ranges.getInt(i));
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
            if ((flags & FLAG_EXPIRES) != 0) {
                expiresAt = position + 8 <= body + length ? buf.getLong(position) : NO_EXPIRY;
                position += 8;
            }
            if (hasReturns) {
                returns = position + 4 <= body + length ? buf.getUnsignedInt(position) : NO_RETURNS;
                position += 4;
            }
            if (position > body + length) {
                throw new Corrupt("publish record at " + start + " has names longer than its body");
            }
            message = buf.slice(position, body + length - position);
        }
        buf.readerIndex(body + length);
        return new Read(version, type, flags, queueId, sequence, deliveryCount, exchange, routingKey, format,
            expiresAt, message, ranges, returns, reason);
    }
}
