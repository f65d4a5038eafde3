package io.skiffmq.codec.amqp091;

import io.netty.buffer.ByteBuf;
import java.time.Instant;
import java.util.Map;

/**
 * The content-header properties of class {@code basic} [AMQP 0-9-1, 1.8]: what follows class-id, weight and
 * body-size in a content header frame, a 16-bit property-flags word and then the present properties in flag
 * order. A null component is an absent property. Immutable (the headers map is not copied: do not change it).
 * Short strings that are not UTF-8 decode with replacement characters; the broker keeps and delivers the bytes
 * as received, so only a conversion or a header lookup sees the replacement.
 *
 * <pre>
 *   flag bit: 15 content-type      14 content-encoding  13 headers     12 delivery-mode  11 priority
 *             10 correlation-id     9 reply-to           8 expiration   7 message-id      6 timestamp
 *              5 type               4 user-id            3 app-id       2 cluster-id      0 more flags follow
 * </pre>
 */
public record BasicProperties(String contentType, String contentEncoding, Map<String, Object> headers,
        Integer deliveryMode, Integer priority, String correlationId, String replyTo, String expiration,
        String messageId, Instant timestamp, String type, String userId, String appId, String clusterId) {

    /** No property present. */
    public static final BasicProperties EMPTY = new BasicProperties(null, null, null, null, null, null, null, null,
        null, null, null, null, null, null);

    /** The property flags [1.8], in the order of the fields; public for writers of the flags word elsewhere. */
    public static final int CONTENT_TYPE = 1 << 15;
    public static final int CONTENT_ENCODING = 1 << 14;
    public static final int HEADERS = 1 << 13;
    public static final int DELIVERY_MODE = 1 << 12;
    public static final int PRIORITY = 1 << 11;
    public static final int CORRELATION_ID = 1 << 10;
    public static final int REPLY_TO = 1 << 9;
    public static final int EXPIRATION = 1 << 8;
    public static final int MESSAGE_ID = 1 << 7;
    public static final int TIMESTAMP = 1 << 6;
    public static final int TYPE = 1 << 5;
    public static final int USER_ID = 1 << 4;
    public static final int APP_ID = 1 << 3;
    private static final int CLUSTER_ID = 1 << 2;
    /** Bits 1 and 0: reserved, and "another flags word follows", which class basic never needs. */
    private static final int UNUSED = 3;

    /** True for a persistent message (delivery-mode 2). */
    public boolean persistent() {
        return deliveryMode != null && deliveryMode == 2;
    }

    /**
     * Decodes the readable bytes of {@code in} (flags and property list, nothing else). Does not change
     * {@code in}'s indexes, retain or release it.
     *
     * @throws Amqp091DecodeException when the list is cut short, has bytes left over, sets a reserved flag or
     *         holds a malformed headers table
     */
    public static BasicProperties decode(ByteBuf in) throws Amqp091DecodeException {
        ByteBuf b = in.duplicate();
        int end = b.writerIndex();
        FieldTable.need(b, 2, end, "property flags");
        int flags = b.readUnsignedShort();
        if ((flags & UNUSED) != 0) {
            throw Amqp091DecodeException.of("property flags 0x%04x set a bit class basic does not define", flags);
        }
        String contentType = (flags & CONTENT_TYPE) != 0 ? FieldTable.readShortString(b, end) : null;
        String contentEncoding = (flags & CONTENT_ENCODING) != 0 ? FieldTable.readShortString(b, end) : null;
        Map<String, Object> headers = (flags & HEADERS) != 0 ? FieldTable.readTable(b) : null;
        Integer deliveryMode = (flags & DELIVERY_MODE) != 0 ? octet(b, end, "delivery-mode") : null;
        Integer priority = (flags & PRIORITY) != 0 ? octet(b, end, "priority") : null;
        String correlationId = (flags & CORRELATION_ID) != 0 ? FieldTable.readShortString(b, end) : null;
        String replyTo = (flags & REPLY_TO) != 0 ? FieldTable.readShortString(b, end) : null;
        String expiration = (flags & EXPIRATION) != 0 ? FieldTable.readShortString(b, end) : null;
        String messageId = (flags & MESSAGE_ID) != 0 ? FieldTable.readShortString(b, end) : null;
        Instant timestamp = null;
        if ((flags & TIMESTAMP) != 0) {
            FieldTable.need(b, 8, end, "timestamp");
            timestamp = FieldTable.timestamp(b.readLong(), b.readerIndex());
        }
        String type = (flags & TYPE) != 0 ? FieldTable.readShortString(b, end) : null;
        String userId = (flags & USER_ID) != 0 ? FieldTable.readShortString(b, end) : null;
        String appId = (flags & APP_ID) != 0 ? FieldTable.readShortString(b, end) : null;
        String clusterId = (flags & CLUSTER_ID) != 0 ? FieldTable.readShortString(b, end) : null;
        if (b.isReadable()) {
            throw Amqp091DecodeException.of("%d bytes after the last property", b.readableBytes());
        }
        return new BasicProperties(contentType, contentEncoding, headers, deliveryMode, priority, correlationId,
            replyTo, expiration, messageId, timestamp, type, userId, appId, clusterId);
    }

    /** The properties the broker needs on every message, read by {@link #summarize}. */
    public record Summary(int deliveryMode, int priority, String replyTo, String expiration, String userId) {
    }

    /**
     * The summaries of messages with no reply-to, expiration or user-id, made once: most messages are one of these
     * (delivery-mode absent, 1 or 2; priority absent or 0 to 9), so summarizing them allocates nothing. Index
     * {@code (deliveryMode + 1) * 11 + priority + 1}.
     */
    private static final Summary[] PLAIN = new Summary[4 * 11];

    static {
        for (int mode = -1; mode <= 2; mode++) {
            for (int priority = -1; priority <= 9; priority++) {
                PLAIN[(mode + 1) * 11 + priority + 1] = new Summary(mode, priority, null, null, null);
            }
        }
    }

    private static Summary summary(int deliveryMode, int priority, String replyTo, String expiration,
            String userId) {
        if (replyTo == null && expiration == null && userId == null && deliveryMode <= 2 && priority <= 9) {
            return PLAIN[(deliveryMode + 1) * 11 + priority + 1];
        }
        return new Summary(deliveryMode, priority, replyTo, expiration, userId);
    }

    /**
     * Reads delivery-mode, priority, reply-to, expiration and user-id (-1, -1 and nulls when absent) without
     * decoding the rest: strings and the headers table are skipped by their lengths. Reads {@code in} itself (a
     * duplicate would be an object per message) and puts its reader index back: the caller must be its only reader
     * meanwhile, as a publisher's channel is of the properties it just received.
     *
     * @throws Amqp091DecodeException when the properties are cut short before expiration
     */
    public static Summary summarize(ByteBuf in) throws Amqp091DecodeException {
        int start = in.readerIndex();
        try {
            return summarize(in, in.writerIndex());
        } finally {
            in.readerIndex(start);
        }
    }

    private static Summary summarize(ByteBuf b, int end) throws Amqp091DecodeException {
        FieldTable.need(b, 2, end, "property flags");
        int flags = b.readUnsignedShort();
        skipShortString(b, end, flags & CONTENT_TYPE);
        skipShortString(b, end, flags & CONTENT_ENCODING);
        if ((flags & HEADERS) != 0) {
            FieldTable.need(b, 4, end, "headers length");
            long length = b.readUnsignedInt();
            if (length > end - b.readerIndex()) {
                throw Amqp091DecodeException.of("headers of %d bytes, only %d left", length, end - b.readerIndex());
            }
            b.skipBytes((int) length);
        }
        int deliveryMode = (flags & DELIVERY_MODE) != 0 ? octet(b, end, "delivery-mode") : -1;
        int priority = (flags & PRIORITY) != 0 ? octet(b, end, "priority") : -1;
        skipShortString(b, end, flags & CORRELATION_ID);
        String replyTo = (flags & REPLY_TO) != 0 ? FieldTable.readShortString(b, end) : null;
        String expiration = (flags & EXPIRATION) != 0 ? FieldTable.readShortString(b, end) : null;
        String userId = null;
        if ((flags & USER_ID) != 0) {
            skipShortString(b, end, flags & MESSAGE_ID);
            if ((flags & TIMESTAMP) != 0) {
                FieldTable.need(b, 8, end, "timestamp");
                b.skipBytes(8);
            }
            skipShortString(b, end, flags & TYPE);
            userId = FieldTable.readShortString(b, end);
        }
        return summary(deliveryMode, priority, replyTo, expiration, userId);
    }

    /**
     * True when the headers table may hold a field named {@code name} (ASCII): its name, length byte first, occurs
     * among the table's bytes. A value can hold the same bytes, so true may be wrong; false never is. Reads in place
     * and allocates nothing, so a header that is rarely there costs messages without it no decoding. Does not change
     * {@code in}'s indexes; properties cut short before the headers end are reported as false (they do not decode).
     */
    public static boolean headersMayContain(ByteBuf in, String name) {
        int at = in.readerIndex();
        int end = in.writerIndex();
        if (end - at < 2) {
            return false;
        }
        int flags = in.getUnsignedShort(at);
        at += 2;
        if ((flags & CONTENT_TYPE) != 0 && at < end) {
            at += 1 + in.getUnsignedByte(at);
        }
        if ((flags & CONTENT_ENCODING) != 0 && at < end) {
            at += 1 + in.getUnsignedByte(at);
        }
        if ((flags & HEADERS) == 0 || end - at < 4) {
            return false;
        }
        long length = in.getUnsignedInt(at);
        at += 4;
        if (length > end - at) {
            return false;
        }
        int last = at + (int) length - 1 - name.length(); // the last place the length byte can be
        for (int i = at; i <= last; i++) {
            if (in.getUnsignedByte(i) == name.length() && nameAt(in, i + 1, name)) {
                return true;
            }
        }
        return false;
    }

    private static boolean nameAt(ByteBuf in, int at, String name) {
        for (int i = 0; i < name.length(); i++) {
            if (in.getUnsignedByte(at + i) != name.charAt(i)) {
                return false;
            }
        }
        return true;
    }

    private static void skipShortString(ByteBuf b, int end, int present) throws Amqp091DecodeException {
        if (present != 0) {
            FieldTable.need(b, 1, end, "short string length");
            int length = b.readUnsignedByte();
            FieldTable.need(b, length, end, "short string");
            b.skipBytes(length);
        }
    }

    private static int octet(ByteBuf b, int end, String what) throws Amqp091DecodeException {
        FieldTable.need(b, 1, end, what);
        return b.readUnsignedByte();
    }

    /**
     * Appends the flags and the present properties at {@code out}'s writer index.
     *
     * @throws IllegalArgumentException when a short string is longer than 255 UTF-8 bytes, an octet is out of
     *         0..255, or a header value has no 0-9-1 type ({@link FieldTable#writeTable})
     */
    public void encode(ByteBuf out) {
        int flagsAt = out.writerIndex();
        out.writeShort(0);
        int flags = 0;
        if (contentType != null) {
            flags |= CONTENT_TYPE;
            FieldTable.writeShortString(out, contentType);
        }
        if (contentEncoding != null) {
            flags |= CONTENT_ENCODING;
            FieldTable.writeShortString(out, contentEncoding);
        }
        if (headers != null) {
            flags |= HEADERS;
            FieldTable.writeTable(out, headers);
        }
        if (deliveryMode != null) {
            flags |= DELIVERY_MODE;
            out.writeByte(checkOctet(deliveryMode, "delivery-mode"));
        }
        if (priority != null) {
            flags |= PRIORITY;
            out.writeByte(checkOctet(priority, "priority"));
        }
        flags |= shortString(out, correlationId, CORRELATION_ID);
        flags |= shortString(out, replyTo, REPLY_TO);
        flags |= shortString(out, expiration, EXPIRATION);
        flags |= shortString(out, messageId, MESSAGE_ID);
        if (timestamp != null) {
            flags |= TIMESTAMP;
            out.writeLong(timestamp.getEpochSecond());
        }
        flags |= shortString(out, type, TYPE);
        flags |= shortString(out, userId, USER_ID);
        flags |= shortString(out, appId, APP_ID);
        flags |= shortString(out, clusterId, CLUSTER_ID);
        out.setShort(flagsAt, flags);
    }

    private static int shortString(ByteBuf out, String value, int flag) {
        if (value == null) {
            return 0;
        }
        FieldTable.writeShortString(out, value);
        return flag;
    }

    private static int checkOctet(int value, String what) {
        if (value < 0 || value > 255) {
            throw new IllegalArgumentException(what + " " + value + " is not an octet");
        }
        return value;
    }
}
