package io.skiffmq.server.peer;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.skiffmq.core.message.MalformedMessageException;
import io.skiffmq.core.message.Message;
import io.skiffmq.core.message.MessageFormat;
import java.nio.charset.StandardCharsets;

/**
 * A 0-9-1 message as it crosses between nodes: in the form the broker stores it (its content header's properties
 * as the publisher sent them, and its body), not converted to AMQP 1.0, so that it reaches a 0-9-1 consumer on any
 * node exactly as it would on its home (nested tables and arrays in headers included, which AMQP 1.0's
 * application-properties cannot hold). Only node connections use it, in transfers whose message-format is
 * {@link #AMQP_091}:
 *
 * <pre>
 * flags (1 byte: 1 = first acquirer) | delivery-count (8) | returns (8) |
 * exchange (4-byte length, UTF-8) | routing key (4-byte length, UTF-8) | the stored form
 * </pre>
 *
 * The counts travel from the home node to a consumer's node only (the redelivered flag, x-delivery-count). Stateless.
 */
public final class NodeForm {
    /** The message-format: "SKF" in the upper three octets, version 1 in the lowest [3.2.16]. */
    public static final int AMQP_091 = 0x534B4601;

    private NodeForm() {
    }

    /** True for a message that crosses in this form. */
    public static boolean carries(Message message) {
        return message.format() == MessageFormat.AMQP_0_9_1;
    }

    /** The message in this form, in a new buffer the caller owns; the message keeps its reference. */
    public static ByteBuf write(ByteBufAllocator alloc, Message message, boolean firstAcquirer, long deliveryCount,
            long returns) {
        ByteBuf out = alloc.buffer(1 + 8 + 8 + 4 + 4 + 2 * message.exchange().length()
            + 2 * (message.routingKey() == null ? 0 : message.routingKey().length()) + message.storedSize());
        writeTo(out, message, firstAcquirer, deliveryCount, returns);
        return out;
    }

    /** Appends the message in this form to {@code out}. */
    static void writeTo(ByteBuf out, Message message, boolean firstAcquirer, long deliveryCount, long returns) {
        out.writeByte(firstAcquirer ? 1 : 0).writeLong(deliveryCount).writeLong(returns);
        string(out, message.exchange());
        string(out, message.routingKey() == null ? "" : message.routingKey());
        message.writeStored(out);
    }

    /** A 4-byte length and the UTF-8 bytes, written in place (no byte[] per string). */
    private static void string(ByteBuf out, String s) {
        int at = out.writerIndex();
        out.writeInt(0);
        int length = out.writeCharSequence(s, StandardCharsets.UTF_8);
        out.setInt(at, length);
    }

    /** A message read from this form, with the counts it came with. */
    public record Read(Message message, boolean firstAcquirer, long deliveryCount, long returns) {
    }

    /**
     * Reads the form; {@code bytes} is released.
     *
     * @throws MalformedMessageException when it is not this form
     */
    public static Read read(ByteBuf bytes) throws MalformedMessageException {
        try {
            boolean firstAcquirer = (bytes.readByte() & 1) != 0;
            long deliveryCount = bytes.readLong();
            long returns = bytes.readLong();
            String exchange = string(bytes);
            String key = string(bytes);
            Message message = Message.readStored(MessageFormat.AMQP_0_9_1, bytes.retainedSlice(), true, exchange,
                key);
            return new Read(message, firstAcquirer, deliveryCount, returns);
        } catch (IndexOutOfBoundsException e) {
            throw new MalformedMessageException("truncated 0-9-1 message from another node", e);
        } finally {
            bytes.release();
        }
    }

    private static String string(ByteBuf bytes) {
        int length = bytes.readInt();
        if (length < 0 || length > bytes.readableBytes()) {
            throw new IndexOutOfBoundsException("length " + length);
        }
        String s = bytes.toString(bytes.readerIndex(), length, StandardCharsets.UTF_8);
        bytes.skipBytes(length);
        return s;
    }
}
