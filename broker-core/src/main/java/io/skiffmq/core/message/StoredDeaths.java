package io.skiffmq.core.message;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/**
 * A dead-letter history in a stored AMQP 0-9-1 message ({@link Amqp091Message#writeStored}), so that the first and
 * last time of each death survive a restart to the millisecond, as RabbitMQ 4 keeps them in the message container's
 * {@code deaths} annotation; the {@code x-death} header holds seconds only. Each death (big-endian): queue, reason,
 * u64 count, i64 first time (ms since the epoch), i64 last time, exchange, u32 routing key count and the keys, i64
 * TTL (-1 for none); each string a u32 length and UTF-8. Stateless.
 */
final class StoredDeaths {
    private StoredDeaths() {
    }

    /** Bytes {@link #write} writes for {@code history}: a u32 count and the deaths. */
    static int size(List<Death> history) {
        int size = 4;
        for (Death d : history) {
            size += utf8(d.queue()) + utf8(d.reason()) + 8 + 8 + 8 + utf8(d.exchange()) + 4 + 8;
            for (String key : d.routingKeys()) {
                size += utf8(key);
            }
        }
        return size;
    }

    static void write(List<Death> history, ByteBuf out) {
        out.writeInt(history.size());
        for (Death d : history) {
            writeString(d.queue(), out);
            writeString(d.reason(), out);
            out.writeLong(d.count());
            out.writeLong(d.firstTime().toEpochMilli());
            out.writeLong(d.lastTime().toEpochMilli());
            writeString(d.exchange(), out);
            out.writeInt(d.routingKeys().size());
            for (String key : d.routingKeys()) {
                writeString(key, out);
            }
            out.writeLong(d.ttl());
        }
    }

    /**
     * Reads a history {@link #write} wrote, from {@code in}'s reader index, which it moves past it.
     *
     * @throws MalformedMessageException when the bytes are cut short or a count is out of range
     */
    static List<Death> read(ByteBuf in) throws MalformedMessageException {
        int deaths = count(in, 1);
        List<Death> history = new ArrayList<>(deaths);
        for (int i = 0; i < deaths; i++) {
            String queue = readString(in);
            String reason = readString(in);
            need(in, 24);
            long count = in.readLong();
            Instant first = Instant.ofEpochMilli(in.readLong());
            Instant last = Instant.ofEpochMilli(in.readLong());
            String exchange = readString(in);
            int keys = count(in, 4);
            List<String> routingKeys = new ArrayList<>(keys);
            for (int k = 0; k < keys; k++) {
                routingKeys.add(readString(in));
            }
            need(in, 8);
            history.add(new Death(queue, reason, count, first, last, exchange, List.copyOf(routingKeys),
                in.readLong()));
        }
        return List.copyOf(history);
    }

    private static int utf8(String s) {
        return 4 + ByteBufUtil.utf8Bytes(s);
    }

    private static void writeString(String s, ByteBuf out) {
        int at = out.writerIndex();
        out.writeInt(0);
        int length = out.writeCharSequence(s, StandardCharsets.UTF_8);
        out.setInt(at, length);
    }

    private static String readString(ByteBuf in) throws MalformedMessageException {
        int length = count(in, 1);
        String s = in.toString(in.readerIndex(), length, StandardCharsets.UTF_8);
        in.skipBytes(length);
        return s;
    }

    /** A u32 count of items at least {@code minBytes} each, checked against what is left. */
    private static int count(ByteBuf in, int minBytes) throws MalformedMessageException {
        need(in, 4);
        long count = in.readUnsignedInt();
        if (count * minBytes > in.readableBytes()) {
            throw new MalformedMessageException("stored death history: " + count + " items run past the record",
                null);
        }
        return (int) count;
    }

    private static void need(ByteBuf in, int bytes) throws MalformedMessageException {
        if (in.readableBytes() < bytes) {
            throw new MalformedMessageException("stored death history cut short", null);
        }
    }
}
