package io.skiffmq.codec.amqp10;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.CompositeByteBuf;

/**
 * Builds the bytes of a message as delivered to a consumer: a fresh {@code header} [3.2.1], the client's
 * {@code message-annotations} merged with the broker's, then the bare message and footer exactly as the
 * publisher sent them [3.2: "the bare message is immutable within the AMQP network"]. The publisher's
 * {@code delivery-annotations} are for the next hop only, which was us, so they are not passed on.
 *
 * <p>Stateless; safe from any thread.
 */
public final class DeliveryEncoder {
    private static final int DEFAULT_PRIORITY = 4;

    private DeliveryEncoder() {
    }

    /**
     * Appends a header section, omitting trailing fields at their defaults, and nothing at all when every
     * field is at its default (a receiver then assumes the defaults [3.2.1]).
     *
     * @param ttl milliseconds, or -1 for none
     */
    public static void writeHeader(ByteBuf out, boolean durable, int priority, long ttl, boolean firstAcquirer,
            long deliveryCount) {
        int count = deliveryCount != 0 ? 5 : firstAcquirer ? 4 : ttl >= 0 ? 3 : priority != DEFAULT_PRIORITY ? 2
            : durable ? 1 : 0;
        if (count == 0) {
            return;
        }
        TypeWriter.writeDescriptor(out, SectionCode.HEADER);
        int list = TypeWriter.beginCompound(out, false, 16);
        TypeWriter.writeBoolean(out, durable);
        if (count > 1) {
            if (priority == DEFAULT_PRIORITY) {
                TypeWriter.writeNull(out);
            } else {
                TypeWriter.writeUByte(out, priority);
            }
        }
        if (count > 2) {
            TypeWriter.writeUIntOrNull(out, ttl);
        }
        if (count > 3) {
            TypeWriter.writeBoolean(out, firstAcquirer);
        }
        if (count > 4) {
            TypeWriter.writeUInt(out, deliveryCount);
        }
        TypeWriter.endCompound(out, list, count);
    }

    /**
     * Appends the message-annotations section: the client's annotations, minus those whose key the broker
     * sets, followed by the broker's. Each of the client's entries is copied byte for byte. Nothing is written
     * when both are empty.
     */
    public static void writeMessageAnnotations(ByteBuf out, MessageSections message, BrokerAnnotations added)
            throws AmqpDecodeException {
        ByteBuf buf = message.buffer();
        int value = message.messageAnnotationsValue();
        boolean clientHas = value >= 0 && buf.getUnsignedByte(value) != FormatCode.NULL;
        if (added.isEmpty()) {
            if (clientHas) {
                int start = message.messageAnnotationsStart();
                TypeWriter.copy(out, buf, start, message.messageAnnotationsEnd() - start);
            }
            return;
        }
        int limit = clientHas ? message.messageAnnotationsEnd() : value;
        int clientCount = clientHas ? TypeReader.mapCount(buf, value, limit) : 0;
        int position = clientHas ? TypeReader.compoundContentStart(buf, value) : 0;
        int clientBytes = clientHas ? limit - position : 0;

        TypeWriter.writeDescriptor(out, SectionCode.MESSAGE_ANNOTATIONS);
        int map = TypeWriter.beginCompound(out, true, clientBytes + added.encodedLength());
        int count = 0;
        for (int i = 0; i < clientCount; i += 2) {
            int key = position;
            int keyCode = TypeReader.formatCode(buf, key, limit);
            int valueStart = TypeReader.valueEnd(buf, key, limit);
            position = TypeReader.valueEnd(buf, valueStart, limit);
            boolean replaced = (keyCode == FormatCode.SYM8 || keyCode == FormatCode.SYM32)
                && added.containsKey(buf, key, limit);
            if (!replaced) {
                TypeWriter.copy(out, buf, key, position - key);
                count += 2;
            }
        }
        added.writePairs(out);
        TypeWriter.endCompound(out, map, count + 2 * added.size());
    }

    /** Appends header and message-annotations: everything that precedes the bare message on delivery. */
    public static void writeAnnotations(ByteBuf out, MessageSections message, boolean durable, int priority,
            long ttl, boolean firstAcquirer, long deliveryCount, BrokerAnnotations added) throws AmqpDecodeException {
        writeHeader(out, durable, priority, ttl, firstAcquirer, deliveryCount);
        writeMessageAnnotations(out, message, added);
    }

    /**
     * The whole delivered message as a composite of a new buffer (header and annotations) and a retained slice
     * of the bare message and footer: the publisher's bytes are not copied.
     *
     * @return a buffer the caller owns and must release; it holds one reference to {@code message}'s buffer
     */
    public static ByteBuf encode(ByteBufAllocator alloc, MessageSections message, boolean durable, int priority,
            long ttl, boolean firstAcquirer, long deliveryCount, BrokerAnnotations added) throws AmqpDecodeException {
        ByteBuf prefix = alloc.buffer(64);
        try {
            writeAnnotations(prefix, message, durable, priority, ttl, firstAcquirer, deliveryCount, added);
        } catch (AmqpDecodeException | RuntimeException e) {
            prefix.release();
            throw e;
        }
        int bare = message.bareMessageStart();
        CompositeByteBuf delivered = alloc.compositeBuffer(2);
        delivered.addComponent(true, prefix);
        delivered.addComponent(true, message.buffer().retainedSlice(bare, message.end() - bare));
        return delivered;
    }
}
