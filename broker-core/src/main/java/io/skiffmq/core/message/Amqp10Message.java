package io.skiffmq.core.message;

import io.netty.buffer.ByteBuf;
import io.skiffmq.codec.amqp10.AmqpDecodeException;
import io.skiffmq.codec.amqp10.DeliveryEncoder;
import io.skiffmq.codec.amqp10.ProtonCodec;
import io.skiffmq.codec.amqp10.MessageSections;
import io.skiffmq.codec.amqp10.SectionCode;
import java.util.Map;
import org.apache.qpid.proton.amqp.Symbol;
import org.apache.qpid.proton.amqp.messaging.MessageAnnotations;
import java.util.concurrent.atomic.AtomicReferenceFieldUpdater;

/**
 * An AMQP 1.0 message: the bytes the publisher sent (sections as received, footer included), indexed lazily by
 * {@link MessageSections}. Delivered as a new header and message-annotations followed by the untouched bare
 * message; stored as these bytes. Thread-safety as {@link Message}.
 */
public sealed class Amqp10Message extends Message permits Amqp10Message.FromStream, Amqp10Message.DeadLettered {
    private static final AtomicReferenceFieldUpdater<Amqp10Message, Amqp091Message> CONVERTED =
        AtomicReferenceFieldUpdater.newUpdater(Amqp10Message.class, Amqp091Message.class, "converted");

    /**
     * The annotation (AMQP 1.0) and header (0-9-1) a message read from a stream carries its offset in, and the one a
     * publisher gives its filter value in.
     */
    public static final String X_STREAM_OFFSET = "x-stream-offset";
    public static final String X_STREAM_FILTER_VALUE = "x-stream-filter-value";

    /** Indexes the bytes, and holds them: its {@link MessageSections#buffer()} is the message's one reference. */
    private final MessageSections sections;
    private volatile Map<String, Object> headers;
    private volatile Amqp091Message converted;

    private Amqp10Message(ByteBuf bytes, MessageSections sections, boolean durable, int priority, long ttl,
            String exchange, String routingKey) {
        super(durable, priority, ttl, exchange, routingKey);
        if (sections.buffer() != bytes) {
            throw new IllegalArgumentException("the index is of another buffer");
        }
        this.sections = sections;
    }

    /** A message read from a stream: only these carry an offset, so other messages keep no field for it. */
    static final class FromStream extends Amqp10Message {
        private final long streamOffset;

        private FromStream(ByteBuf bytes, MessageSections sections, boolean durable, int priority, long ttl,
                String exchange, String routingKey, long streamOffset) {
            super(bytes, sections, durable, priority, ttl, exchange, routingKey);
            this.streamOffset = streamOffset;
        }

        @Override
        public long streamOffset() {
            return streamOffset;
        }
    }

    /** A dead-lettered copy that carries the delivery count it had in the queue it died in. */
    static final class DeadLettered extends Amqp10Message {
        private final long deliveryCount;

        private DeadLettered(ByteBuf bytes, MessageSections sections, boolean durable, int priority, String exchange,
                String routingKey, long deliveryCount) {
            super(bytes, sections, durable, priority, -1, exchange, routingKey);
            this.deliveryCount = deliveryCount;
        }

        @Override
        public long deliveryCount() {
            return deliveryCount;
        }
    }

    /**
     * Wraps the bytes of an AMQP 1.0 message, already indexed.
     *
     * @param bytes the encoded message; the message takes over this reference (the caller keeps it on failure)
     * @param sections the index of {@code bytes}, scanned from that very buffer (the message reaches its bytes
     *        through it)
     * @param durableIfNoHeader the durability of a message without a header (RabbitMQ: true; AMQP 1.0: false)
     * @throws AmqpDecodeException when the header is malformed
     */
    public static Amqp10Message of(ByteBuf bytes, MessageSections sections, boolean durableIfNoHeader,
            String exchange, String routingKey) throws AmqpDecodeException {
        long header = sections.headerBasics();
        boolean durable = sections.has(SectionCode.HEADER) ? MessageSections.durable(header) : durableIfNoHeader;
        return new Amqp10Message(bytes, sections, durable, MessageSections.priority(header),
            MessageSections.ttl(header), exchange, routingKey);
    }

    /**
     * A message read back from a stream, where it is kept as AMQP 1.0 bytes: its exchange and routing key are the
     * {@code x-exchange} and {@code x-routing-key} annotations stored with it (a 0-9-1 message is stored with them),
     * else the default exchange and the stream's name, as RabbitMQ 4 reads a stream's messages
     * ({@code rabbit_stream_queue:entry_to_msg/6}). A 0-9-1 consumer sees its offset as the header
     * {@code x-stream-offset}.
     *
     * @param bytes the stored message; the message takes over this reference (released here on failure)
     * @throws MalformedMessageException when the bytes are not an AMQP 1.0 message
     */
    public static Amqp10Message fromStream(ByteBuf bytes, long offset, String stream)
            throws MalformedMessageException {
        return fromStream(bytes, offset, stream, new StoredRouteNames());
    }

    /**
     * As {@link #fromStream(ByteBuf, long, String)}, reading the exchange and routing key with a reader's
     * {@code names}, which keeps the strings of its last message.
     */
    public static Amqp10Message fromStream(ByteBuf bytes, long offset, String stream, StoredRouteNames names)
            throws MalformedMessageException {
        try {
            MessageSections sections = MessageSections.scan(bytes);
            String exchange = names.exchange(sections);
            String routingKey = names.routingKey(sections);
            if (exchange == null) {
                exchange = "";
            }
            if (routingKey == null) {
                routingKey = stream;
            }
            long header = sections.headerBasics();
            boolean durable = !sections.has(SectionCode.HEADER) || MessageSections.durable(header);
            return new FromStream(bytes, sections, durable, MessageSections.priority(header),
                MessageSections.ttl(header), exchange, routingKey, offset);
        } catch (AmqpDecodeException e) {
            bytes.release();
            throw new MalformedMessageException("stream message at offset " + offset + ": " + e.getMessage(), e);
        }
    }

    /**
     * A message that crossed from another node of the cluster (docs/cluster.md, "Messages between nodes"): its
     * exchange and routing key are the {@code x-exchange} and {@code x-routing-key} annotations it carries (where
     * it was first published; a 0-9-1 message converted carries them), else the default exchange and
     * {@code queue}. Durable unless its header says otherwise, as a message the node first took was.
     *
     * @param bytes the message; the message takes over this reference (the caller keeps it on failure)
     */
    public static Amqp10Message fromNode(ByteBuf bytes, MessageSections sections, String queue)
            throws AmqpDecodeException {
        StoredRouteNames names = new StoredRouteNames();
        String exchange = names.exchange(sections);
        String routingKey = names.routingKey(sections);
        return of(bytes, sections, true, exchange == null ? "" : exchange, routingKey == null ? queue : routingKey);
    }

    /** Its offset in the stream it was read from, -1 when it was not read from a stream. */
    public long streamOffset() {
        return -1;
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
        return sections.buffer();
    }

    @Override
    public int size() {
        return sections.buffer().readableBytes();
    }

    @Override
    public Amqp10Message deadLettered(String reason, String queue, java.time.Instant now, String exchange,
            String routingKey) {
        return deadLettered(reason, queue, now, exchange, routingKey, 0);
    }

    @Override
    public Amqp10Message deadLettered(String reason, String queue, java.time.Instant now, String exchange,
            String routingKey, long deliveryCount) {
        ByteBuf out = io.netty.buffer.ByteBufAllocator.DEFAULT.buffer(sections.buffer().readableBytes() + 256);
        try {
            Map<Object, Object> client = sections.messageAnnotations();
            Map<String, Object> named = new java.util.HashMap<>();
            Map<Symbol, Object> annotations = new java.util.LinkedHashMap<>();
            for (Map.Entry<Object, Object> e : client.entrySet()) {
                String key = e.getKey().toString();
                named.put(key, e.getValue());
                boolean replaced = key.equals(Death.X_OPT_DEATHS) || Death.FIRST_AND_LAST.contains(key)
                    || key.equals(X_EXCHANGE) || key.equals(X_ROUTING_KEY);
                if (!replaced && e.getKey() instanceof Symbol symbol) {
                    annotations.put(symbol, e.getValue());
                }
            }
            java.util.List<Death> history = Death.record(Death.fromAmqp10(named.get(Death.X_OPT_DEATHS)), reason,
                queue, now, exchange(), Death.routingKeys(routingKey(), ccRoutes()), ttl());
            annotations.put(Symbol.valueOf(Death.X_OPT_DEATHS), Death.toAmqp10(history));
            Death.firstAndLast(named, history).forEach((k, v) -> annotations.put(Symbol.valueOf(k), v));
            // a new header without the TTL (the history keeps it) and with the delivery count, new annotations, then
            // the bare message as sent
            DeliveryEncoder.writeHeader(out, durable(), priority(), -1, false, deliveryCount);
            ProtonCodec.current().encode(new MessageAnnotations(annotations), out);
            int bare = sections.bareMessageStart();
            out.writeBytes(sections.buffer(), bare, sections.end() - bare);
            MessageSections scanned = MessageSections.scan(out);
            return deliveryCount > 0
                ? new DeadLettered(out, scanned, durable(), priority(), exchange, routingKey, deliveryCount)
                : of(out, scanned, durable(), exchange, routingKey);
        } catch (AmqpDecodeException | RuntimeException e) {
            out.release();
            throw new IllegalStateException("cannot dead-letter an AMQP 1.0 message: " + e.getMessage(), e);
        }
    }

    /**
     * A new message: the sections before the message-annotations as sent, the message-annotations with
     * {@code added} in place of those of the same keys (symbol keys kept, as {@link #deadLettered} keeps them), then
     * the bare message and footer as sent.
     */
    @Override
    public Amqp10Message annotated(Map<String, Object> added) {
        ByteBuf out = io.netty.buffer.ByteBufAllocator.DEFAULT.buffer(sections.buffer().readableBytes() + 128);
        try {
            Map<Symbol, Object> annotations = new java.util.LinkedHashMap<>();
            for (Map.Entry<Object, Object> e : sections.messageAnnotations().entrySet()) {
                if (e.getKey() instanceof Symbol symbol) {
                    annotations.put(symbol, e.getValue());
                }
            }
            added.forEach((k, v) -> annotations.put(Symbol.valueOf(k), v));
            int before = sections.bareMessageStart();
            int after = before;
            for (MessageSections.Section section : sections.sections()) {
                if (section.code() == SectionCode.MESSAGE_ANNOTATIONS) {
                    before = section.offset();
                    after = section.endOffset();
                }
            }
            out.writeBytes(sections.buffer(), sections.start(), before - sections.start());
            ProtonCodec.current().encode(new MessageAnnotations(annotations), out);
            out.writeBytes(sections.buffer(), after, sections.end() - after);
            MessageSections scanned = MessageSections.scan(out);
            return new Amqp10Message(out, scanned, durable(), priority(), ttl(), exchange(), routingKey());
        } catch (AmqpDecodeException | RuntimeException e) {
            out.release();
            throw new IllegalStateException("cannot annotate an AMQP 1.0 message: " + e.getMessage(), e);
        }
    }

    /** Read in place: a message without message annotations, or without {@code x-cc} among them, costs nothing. */
    @Override
    public java.util.List<String> headerRoutes() {
        if (!sections.has(SectionCode.MESSAGE_ANNOTATIONS)) {
            return null;
        }
        try {
            return HeaderRoutes.ofAmqp10(sections.messageAnnotation(HeaderRoutes.X_CC));
        } catch (AmqpDecodeException e) {
            throw new IllegalArgumentException(e.getMessage(), e);
        }
    }

    @Override
    public java.util.List<String> ccRoutes() {
        try {
            return headerRoutes();
        } catch (RuntimeException e) {
            return null; // refused when published: only a message kept from before could have it
        }
    }

    @Override
    public java.util.List<Death> deaths() {
        try {
            return Death.fromAmqp10(sections.messageAnnotation(Death.X_OPT_DEATHS));
        } catch (AmqpDecodeException e) {
            return java.util.List.of();
        }
    }

    /** The body sections' bytes (data, amqp-sequence or amqp-value, with their descriptors). */
    @Override
    public int bodySize() {
        int size = 0;
        for (MessageSections.Section section : sections.sections()) {
            if (section.code() >= SectionCode.DATA && section.code() <= SectionCode.AMQP_VALUE) {
                size += section.endOffset() - section.offset();
            }
        }
        return size;
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

    /**
     * One application property, read in place (no map is built) unless {@link #headers()} was decoded already: what
     * a selector asks of each message. The lookup uses no lazy cache of the section index, so publishers and queues
     * may ask at the same time.
     */
    @Override
    public Object header(String name) {
        Map<String, Object> h = headers;
        if (h != null) {
            return h.get(name);
        }
        try {
            Object value = HeaderValues.normalise(sections.applicationProperty(name));
            return value == HeaderValues.UNSUPPORTED ? null : value;
        } catch (AmqpDecodeException e) {
            throw new IllegalArgumentException(e.getMessage(), e);
        }
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
        return sections.buffer().readableBytes();
    }

    @Override
    public void writeStored(ByteBuf out) {
        out.writeBytes(sections.buffer(), sections.buffer().readerIndex(), sections.buffer().readableBytes());
    }

    @Override
    public Amqp10Message retain() {
        super.retain();
        return this;
    }

    @Override
    public Amqp10Message touch(Object hint) {
        sections.buffer().touch(hint);
        return this;
    }

    @Override
    protected void deallocate() {
        sections.buffer().release();
        Amqp091Message c = converted;
        if (c != null) {
            c.release();
        }
    }
}
