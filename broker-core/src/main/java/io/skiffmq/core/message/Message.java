package io.skiffmq.core.message;

import io.netty.buffer.ByteBuf;
import io.netty.util.AbstractReferenceCounted;
import io.skiffmq.codec.amqp10.AmqpDecodeException;
import io.skiffmq.codec.amqp10.MessageSections;
import io.skiffmq.codec.amqp10.SectionCode;

/**
 * A message inside the broker: the AMQP 1.0 bytes the publisher sent, their section index, and what the broker
 * decided about it on the way in (durable, the exchange and routing key it was published to). Protocol-neutral
 * in the sense that queues, routing and the store use only this; they never re-encode the bytes.
 *
 * <p>Reference counted: each queue that holds the message holds one reference, and each delivery in flight to a
 * consumer one more. The last {@link #release()} releases the bytes. Immutable apart from the count, so it can
 * cross threads (queue, connection) freely.
 */
public final class Message extends AbstractReferenceCounted {
    private final ByteBuf bytes;
    private final MessageSections sections;
    private final boolean durable;
    private final int priority;
    private final long ttl;
    private final String exchange;
    private final String routingKey;

    private Message(ByteBuf bytes, MessageSections sections, boolean durable, int priority, long ttl,
            String exchange, String routingKey) {
        this.bytes = bytes;
        this.sections = sections;
        this.durable = durable;
        this.priority = priority;
        this.ttl = ttl;
        this.exchange = exchange;
        this.routingKey = routingKey;
    }

    /**
     * Wraps the bytes of an AMQP 1.0 message, already indexed.
     *
     * @param bytes the encoded message; the message takes over this reference
     * @param sections the index of {@code bytes}
     * @param durableIfNoHeader the durability of a message without a header (RabbitMQ: true; AMQP 1.0: false)
     */
    public static Message fromAmqp(ByteBuf bytes, MessageSections sections, boolean durableIfNoHeader,
            String exchange, String routingKey) throws AmqpDecodeException {
        boolean durable = sections.has(SectionCode.HEADER) ? sections.durable() : durableIfNoHeader;
        return new Message(bytes, sections, durable, sections.priority(), sections.ttl(), exchange, routingKey);
    }

    public MessageSections sections() {
        return sections;
    }

    public boolean durable() {
        return durable;
    }

    public int priority() {
        return priority;
    }

    /** Milliseconds, -1 for none. */
    public long ttl() {
        return ttl;
    }

    /** The exchange the message was published to ("" for the default exchange). */
    public String exchange() {
        return exchange;
    }

    public String routingKey() {
        return routingKey;
    }

    /** The encoded message as the publisher sent it: read it, never change or release it. */
    public ByteBuf bytes() {
        return bytes;
    }

    /** Size of the encoded message in bytes. */
    public int size() {
        return bytes.readableBytes();
    }

    @Override
    public Message retain() {
        super.retain();
        return this;
    }

    @Override
    public Message touch(Object hint) {
        bytes.touch(hint);
        return this;
    }

    @Override
    protected void deallocate() {
        bytes.release();
    }

}
