package io.skiffmq.core.message;

import io.netty.buffer.ByteBuf;
import io.skiffmq.codec.amqp10.AmqpDecodeException;
import io.skiffmq.codec.amqp10.MessageSections;
import io.skiffmq.codec.amqp10.SectionCode;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReferenceFieldUpdater;

/**
 * An AMQP 1.0 message: the bytes the publisher sent (sections as received, footer included), indexed lazily by
 * {@link MessageSections}. Delivered as a new header and message-annotations followed by the untouched bare
 * message; stored as these bytes. Thread-safety as {@link Message}.
 */
public final class Amqp10Message extends Message {
    private static final AtomicReferenceFieldUpdater<Amqp10Message, Amqp091Message> CONVERTED =
        AtomicReferenceFieldUpdater.newUpdater(Amqp10Message.class, Amqp091Message.class, "converted");

    private final ByteBuf bytes;
    private final MessageSections sections;
    private volatile Map<String, Object> headers;
    private volatile Amqp091Message converted;

    private Amqp10Message(ByteBuf bytes, MessageSections sections, boolean durable, int priority, long ttl,
            String exchange, String routingKey) {
        super(durable, priority, ttl, exchange, routingKey);
        this.bytes = bytes;
        this.sections = sections;
    }

    /**
     * Wraps the bytes of an AMQP 1.0 message, already indexed.
     *
     * @param bytes the encoded message; the message takes over this reference (the caller keeps it on failure)
     * @param sections the index of {@code bytes}
     * @param durableIfNoHeader the durability of a message without a header (RabbitMQ: true; AMQP 1.0: false)
     * @throws AmqpDecodeException when the header is malformed
     */
    public static Amqp10Message of(ByteBuf bytes, MessageSections sections, boolean durableIfNoHeader,
            String exchange, String routingKey) throws AmqpDecodeException {
        boolean durable = sections.has(SectionCode.HEADER) ? sections.durable() : durableIfNoHeader;
        return new Amqp10Message(bytes, sections, durable, sections.priority(), sections.ttl(), exchange,
            routingKey);
    }

    static Amqp10Message readStored(ByteBuf stored, boolean durableIfNoHeader, String exchange, String routingKey)
            throws MalformedMessageException {
        try {
            return of(stored, MessageSections.scan(stored), durableIfNoHeader, exchange, routingKey);
        } catch (AmqpDecodeException e) {
            stored.release();
            throw new MalformedMessageException("stored AMQP 1.0 message: " + e.getMessage(), e);
        }
    }

    @Override
    public MessageFormat format() {
        return MessageFormat.AMQP_1_0;
    }

    /** The section index of {@link #bytes()}. */
    public MessageSections sections() {
        return sections;
    }

    /** The encoded message as the publisher sent it: read it, never change or release it. */
    public ByteBuf bytes() {
        return bytes;
    }

    @Override
    public int size() {
        return bytes.readableBytes();
    }

    /** The application-properties, in the neutral value model; decoded on first use. */
    @Override
    public Map<String, Object> headers() {
        Map<String, Object> h = headers;
        if (h == null) {
            try {
                h = HeaderValues.normaliseMap(sections.applicationProperties());
            } catch (AmqpDecodeException e) {
                throw new IllegalArgumentException(e.getMessage(), e);
            }
            headers = h;
        }
        return h;
    }

    @Override
    public Amqp10Message toAmqp10() {
        return this;
    }

    @Override
    public Amqp091Message toAmqp091() {
        Amqp091Message c = converted;
        if (c == null) {
            c = Amqp10ToAmqp091.convert(this);
            if (!CONVERTED.compareAndSet(this, null, c)) {
                c.release(); // another thread converted first
                c = converted;
            }
        }
        return c;
    }

    @Override
    public int storedSize() {
        return bytes.readableBytes();
    }

    @Override
    public void writeStored(ByteBuf out) {
        out.writeBytes(bytes, bytes.readerIndex(), bytes.readableBytes());
    }

    @Override
    public Amqp10Message retain() {
        super.retain();
        return this;
    }

    @Override
    public Amqp10Message touch(Object hint) {
        bytes.touch(hint);
        return this;
    }

    @Override
    protected void deallocate() {
        bytes.release();
        Amqp091Message c = converted;
        if (c != null) {
            c.release();
        }
    }
}
