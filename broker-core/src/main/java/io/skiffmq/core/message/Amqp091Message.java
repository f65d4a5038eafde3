package io.skiffmq.core.message;

import io.netty.buffer.ByteBuf;
import io.skiffmq.codec.amqp091.Amqp091DecodeException;
import io.skiffmq.codec.amqp091.BasicProperties;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReferenceFieldUpdater;

/**
 * An AMQP 0-9-1 message: the content-header properties exactly as received (property flags and property list,
 * what follows class-id, weight and body-size in the content header frame) and the body as received, decoded
 * lazily. Once dead-lettered by the broker it also holds its death history to the millisecond, as RabbitMQ 4 keeps
 * it beside the message ({@code mc} annotations): the {@code x-death} header it gets then holds whole seconds and
 * the first time only.
 *
 * <p>Stored in one of two forms, told apart by the first byte. Version 1, a message that never died here:
 * {@code [u32 properties length | properties | body]}, the length below 2^31 (it fits in the record), so its first
 * byte has the high bit clear. Version 2, a message with a death history: {@code [u8 0x82 | history
 * (StoredDeaths) | u32 properties length | properties | body]}. Both are read; version 1 is still written when there
 * is no history, so a publisher's bytes are stored as before. Thread-safety as {@link Message}.
 */
public final class Amqp091Message extends Message {
    private static final AtomicReferenceFieldUpdater<Amqp091Message, Extras> EXTRAS =
        AtomicReferenceFieldUpdater.newUpdater(Amqp091Message.class, Extras.class, "extras");
    private static final AtomicReferenceFieldUpdater<Extras, Amqp10Message> CONVERTED =
        AtomicReferenceFieldUpdater.newUpdater(Extras.class, Amqp10Message.class, "converted");
    /** The first byte of a version 2 stored form: the high bit marks a versioned form, the rest its version. */
    private static final int STORED_VERSION_2 = 0x82;

    private final ByteBuf properties;
    private final ByteBuf body;
    /**
     * What most messages lack or never need, in an object of its own: the properties few messages have, made with
     * the message, and the decoded properties and the AMQP 1.0 form, made on first use. Null while the message has
     * none of them, the usual case: the message is 48 bytes (with compressed references) rather than 56.
     */
    private volatile Extras extras;

    private Amqp091Message(ByteBuf properties, ByteBuf body, boolean durable, int priority, long ttl,
            String exchange, String routingKey, String replyTo, String userId, String invalidExpiration,
            java.util.List<Death> deaths, long deliveryCount) {
        super(durable, priority, ttl, exchange, routingKey);
        this.properties = properties;
        this.body = body;
        if (replyTo != null || userId != null || invalidExpiration != null || deaths != null || deliveryCount != 0) {
            this.extras = new Extras(replyTo, userId, invalidExpiration, deaths, deliveryCount);
        }
    }

    /**
     * A message's rare properties, set when it is made, and its lazy forms, each set once on first use (published
     * safely: volatile). Read and written by any thread that holds the message.
     */
    private static final class Extras {
        /** A message without extras reads these; nothing is ever written to it. */
        private static final Extras NONE = new Extras(null, null, null, null, 0);

        final String replyTo;
        final String userId;
        final String invalidExpiration;
        final java.util.List<Death> deaths;
        final long deliveryCount;
        volatile BasicProperties decoded;
        volatile Amqp10Message converted;

        /**
         * @param replyTo read with the summary, for the publishing channel (direct reply-to), as {@code userId} (the
         *        user-id check) and {@code invalidExpiration}; null in a converted message, where nobody asks for them
         * @param deaths the death history to the millisecond, most recent first; null when only the x-death header
         *        tells it
         * @param deliveryCount what a dead-lettered copy carries ({@link #deliveryCount()})
         */
        Extras(String replyTo, String userId, String invalidExpiration, java.util.List<Death> deaths,
                long deliveryCount) {
            this.replyTo = replyTo;
            this.userId = userId;
            this.invalidExpiration = invalidExpiration;
            this.deaths = deaths;
            this.deliveryCount = deliveryCount;
        }
    }

    /** The message's extras, or {@link Extras#NONE} (to read, never to write) when it has none. */
    private Extras known() {
        Extras e = extras;
        return e == null ? Extras.NONE : e;
    }

    /** The message's extras, made now if it had none, for a lazy form to be kept in. */
    private Extras made() {
        Extras e = extras;
        if (e == null) {
            e = new Extras(null, null, null, null, 0);
            if (!EXTRAS.compareAndSet(this, null, e)) {
                e = extras; // another thread made them first
            }
        }
        return e;
    }

    @Override
    public long deliveryCount() {
        return known().deliveryCount;
    }

    /** The death history kept to the millisecond, or null. */
    private java.util.List<Death> history() {
        return known().deaths;
    }

    /**
     * Wraps a message as an AMQP 0-9-1 publisher sent it. Reads delivery-mode, priority and expiration now; the
     * rest of the properties on first use.
     *
     * @param properties the property flags and list; the message takes over this reference (the caller keeps it
     *        on failure)
     * @param body the body, possibly a composite of the body frames; taken over likewise
     * @throws Amqp091DecodeException when the properties are cut short before expiration
     */
    public static Amqp091Message of(ByteBuf properties, ByteBuf body, String exchange, String routingKey)
            throws Amqp091DecodeException {
        return of(properties, body, exchange, routingKey, null, 0);
    }

    private static Amqp091Message of(ByteBuf properties, ByteBuf body, String exchange, String routingKey,
            java.util.List<Death> deaths, long deliveryCount) throws Amqp091DecodeException {
        BasicProperties.Summary s = BasicProperties.summarize(properties);
        // RabbitMQ: a message is persistent only with delivery-mode 2, and one without a priority counts as 0; an
        // expiration that is not a number of milliseconds is refused at publish (precondition-failed) by the
        // channel, so here it just means none
        long ttl = ttl(s.expiration());
        return new Amqp091Message(properties, body, s.deliveryMode() == 2, Math.max(s.priority(), 0), ttl,
            exchange, routingKey, s.replyTo(), s.userId(), ttl < 0 && s.expiration() != null ? s.expiration() : null,
            deaths, deliveryCount);
    }

    /**
     * Wraps properties and body made by a conversion; takes over both references. The properties are decoded
     * from their bytes when asked for, so readers see exactly what a consumer is sent.
     */
    static Amqp091Message converted(ByteBuf properties, ByteBuf body, boolean durable, int priority, long ttl,
            String exchange, String routingKey) {
        return new Amqp091Message(properties, body, durable, priority, ttl, exchange, routingKey, null, null, null,
            null, 0);
    }

    /**
     * @param historyInHeader the form was stored before record version 4, when the broker kept a message's death
     *        history in its {@code x-death} header alone: that header is read as the history
     */
    static Amqp091Message readStored(ByteBuf stored, String exchange, String routingKey, boolean historyInHeader)
            throws MalformedMessageException {
        try {
            java.util.List<Death> deaths = null;
            if (stored.isReadable() && (stored.getUnsignedByte(stored.readerIndex()) & 0x80) != 0) {
                int version = stored.readUnsignedByte();
                if (version != STORED_VERSION_2) {
                    throw new Amqp091DecodeException("stored form version " + (version & 0x7f) + " is unknown");
                }
                deaths = StoredDeaths.read(stored);
            }
            if (stored.readableBytes() < 4
                    || stored.getUnsignedInt(stored.readerIndex()) > stored.readableBytes() - 4) {
                throw new Amqp091DecodeException("stored properties length runs past the record");
            }
            int length = stored.getInt(stored.readerIndex());
            int start = stored.readerIndex() + 4;
            ByteBuf properties = stored.retainedSlice(start, length);
            ByteBuf body = stored.retainedSlice(start + length, stored.writerIndex() - start - length);
            try {
                Amqp091Message m = of(properties, body, exchange, routingKey, deaths, 0);
                return deaths == null && historyInHeader ? m.withHistoryFromHeader() : m;
            } catch (Amqp091DecodeException e) {
                properties.release();
                body.release();
                throw e;
            }
        } catch (Amqp091DecodeException e) {
            throw new MalformedMessageException("stored AMQP 0-9-1 message: " + e.getMessage(), e);
        } finally {
            stored.release();
        }
    }

    /** Milliseconds from an expiration property, -1 when absent or not a non-negative integer. */
    static long ttl(String expiration) {
        if (expiration == null || expiration.isEmpty() || expiration.length() > 18) {
            return -1;
        }
        for (int i = 0; i < expiration.length(); i++) {
            if (expiration.charAt(i) < '0' || expiration.charAt(i) > '9') {
                return -1;
            }
        }
        return Long.parseLong(expiration);
    }

    /** The publisher's reply-to property, or null. */
    public String replyTo() {
        return known().replyTo;
    }

    /** The publisher's user-id property, or null. */
    public String userId() {
        return known().userId;
    }

    /**
     * The publisher's expiration property when it is not a number of milliseconds (which the publishing channel
     * refuses, as RabbitMQ does), else null.
     */
    public String invalidExpiration() {
        return known().invalidExpiration;
    }

    @Override
    public MessageFormat format() {
        return MessageFormat.AMQP_0_9_1;
    }

    /** The property flags and list as received: read them, never change or release them. */
    public ByteBuf propertyBytes() {
        return properties;
    }

    /** The body as received: read it, never change or release it. */
    public ByteBuf body() {
        return body;
    }

    /**
     * The decoded properties, on first use.
     *
     * @throws IllegalArgumentException when they are malformed (past what {@link #of} read)
     */
    public BasicProperties properties() {
        BasicProperties p = known().decoded;
        if (p == null) {
            try {
                p = BasicProperties.decode(properties);
            } catch (Amqp091DecodeException e) {
                throw new IllegalArgumentException("AMQP 0-9-1 properties: " + e.getMessage(), e);
            }
            made().decoded = p;
        }
        return p;
    }

    /** The {@code headers} property: already neutral values. */
    @Override
    public Map<String, Object> headers() {
        Map<String, Object> h = properties().headers();
        return h == null ? Map.of() : h;
    }

    @Override
    public int size() {
        return properties.readableBytes() + body.readableBytes();
    }

    /** Found by scanning the header bytes in place (a false positive costs one decode), decoded only then. */
    @Override
    public java.util.List<String> headerRoutes() {
        if (!BasicProperties.headersMayContain(properties, HeaderRoutes.CC)
                && !BasicProperties.headersMayContain(properties, HeaderRoutes.BCC)) {
            return null;
        }
        return HeaderRoutes.ofAmqp091(properties().headers());
    }

    @Override
    public java.util.List<String> ccRoutes() {
        return BasicProperties.headersMayContain(properties, HeaderRoutes.CC)
            ? HeaderRoutes.ccOfAmqp091(properties().headers()) : null;
    }

    @Override
    public Amqp091Message withoutBcc() {
        if (!BasicProperties.headersMayContain(properties, HeaderRoutes.BCC)) {
            return this;
        }
        BasicProperties p = properties();
        if (p.headers() == null || !p.headers().containsKey(HeaderRoutes.BCC)) {
            return this;
        }
        Map<String, Object> headers = new java.util.LinkedHashMap<>(p.headers());
        headers.remove(HeaderRoutes.BCC);
        return withProperties(new BasicProperties(p.contentType(), p.contentEncoding(), headers, p.deliveryMode(),
            p.priority(), p.correlationId(), p.replyTo(), p.expiration(), p.messageId(), p.timestamp(), p.type(),
            p.userId(), p.appId(), p.clusterId()), exchange(), routingKey(), history(), deliveryCount(), "remove BCC from");
    }

    @Override
    public Amqp091Message deadLettered(String reason, String queue, java.time.Instant now, String exchange,
            String routingKey) {
        return deadLettered(reason, queue, now, exchange, routingKey, 0);
    }

    @Override
    public Amqp091Message deadLettered(String reason, String queue, java.time.Instant now, String exchange,
            String routingKey, long deliveryCount) {
        BasicProperties p = properties();
        Map<String, Object> old = p.headers() == null ? Map.of() : p.headers();
        java.util.List<Death> history = java.util.List.copyOf(Death.record(deaths(), reason, queue, now,
            exchange(), Death.routingKeys(routingKey(), HeaderRoutes.ccOfAmqp091(old)), ttl()));
        Map<String, Object> headers = new java.util.LinkedHashMap<>(old);
        // the publisher's own x-death and x-*-death-* headers are replaced, as RabbitMQ 4 replaces them
        headers.put(Death.X_DEATH, Death.toAmqp091(history));
        headers.putAll(Death.firstAndLast(history() == null ? Map.of() : old, history));
        return withProperties(new BasicProperties(p.contentType(), p.contentEncoding(), headers, p.deliveryMode(),
            p.priority(), p.correlationId(), p.replyTo(), null, p.messageId(), p.timestamp(), p.type(), p.userId(),
            p.appId(), p.clusterId()), exchange, routingKey, history, deliveryCount, "dead-letter");
    }

    /** Its annotations of an integer, string or boolean value as headers, as {@code mc_amqpl} converts them. */
    @Override
    public Amqp091Message annotated(Map<String, Object> annotations) {
        BasicProperties p = properties();
        Map<String, Object> headers = p.headers() == null ? new java.util.LinkedHashMap<>()
            : new java.util.LinkedHashMap<>(p.headers());
        annotations.forEach((key, value) -> {
            Object header = HeaderValues.normalise(value);
            if (header instanceof Long || header instanceof Integer || header instanceof Short
                    || header instanceof Byte) {
                headers.put(key, ((Number) header).longValue()); // an Erlang integer: a long header
            } else if (header instanceof String || header instanceof Boolean) {
                headers.put(key, header);
            }
        });
        return withProperties(new BasicProperties(p.contentType(), p.contentEncoding(), headers, p.deliveryMode(),
            p.priority(), p.correlationId(), p.replyTo(), p.expiration(), p.messageId(), p.timestamp(), p.type(),
            p.userId(), p.appId(), p.clusterId()), exchange(), routingKey(), history(), deliveryCount(), "annotate");
    }

    /**
     * This message with the {@code x-delivery-count} header a quorum queue gives a redelivery (RabbitMQ's
     * {@code mc_amqpl} writes it from the queue's count): a new message, one reference for the caller.
     */
    public Amqp091Message withDeliveryCount(long count) {
        BasicProperties p = properties();
        Map<String, Object> headers = p.headers() == null ? new java.util.LinkedHashMap<>()
            : new java.util.LinkedHashMap<>(p.headers());
        headers.put(DELIVERY_COUNT, count);
        return withProperties(new BasicProperties(p.contentType(), p.contentEncoding(), headers, p.deliveryMode(),
            p.priority(), p.correlationId(), p.replyTo(), p.expiration(), p.messageId(), p.timestamp(), p.type(),
            p.userId(), p.appId(), p.clusterId()), exchange(), routingKey(), history(), deliveryCount(), "count the deliveries of");
    }

    /** The header a quorum queue's redeliveries carry over 0-9-1. */
    public static final String DELIVERY_COUNT = "x-delivery-count";

    /** This message with the history its {@code x-death} header holds kept beside it; itself when none. */
    private Amqp091Message withHistoryFromHeader() {
        java.util.List<Death> history = Death.fromAmqp091(properties().headers());
        if (history.isEmpty()) {
            return this;
        }
        Amqp091Message m = new Amqp091Message(properties.retain(), body.retain(), durable(), priority(), ttl(),
            exchange(), routingKey(), replyTo(), userId(), invalidExpiration(), java.util.List.copyOf(history), 0);
        release();
        return m;
    }

    /** This message's body with other properties: a new message, one reference for the caller. */
    private Amqp091Message withProperties(BasicProperties next, String exchange, String routingKey,
            java.util.List<Death> history, long deliveryCount, String doing) {
        ByteBuf encoded = io.netty.buffer.ByteBufAllocator.DEFAULT.buffer(properties.readableBytes() + 256);
        ByteBuf bodySlice = null;
        try {
            next.encode(encoded);
            bodySlice = body.retainedSlice();
            return of(encoded, bodySlice, exchange, routingKey, history, deliveryCount);
        } catch (Amqp091DecodeException | RuntimeException e) {
            encoded.release();
            if (bodySlice != null) {
                bodySlice.release();
            }
            throw new IllegalStateException("cannot " + doing + " an AMQP 0-9-1 message: " + e.getMessage(), e);
        }
    }

    /**
     * The history the broker recorded; empty for a message that never died here, whatever {@code x-death} header its
     * publisher set: RabbitMQ 4 keeps the history in the message container's {@code deaths} annotation and reads no
     * header into it ({@code mc:record_death/4}; {@code mc_amqpl:init/1} reads none), so a client's header counts
     * for nothing and is replaced when the message dies.
     */
    @Override
    public java.util.List<Death> deaths() {
        return history() != null ? history() : java.util.List.of();
    }

    /** True when the broker dead-lettered this message: its {@code x-death} header is the broker's. */
    boolean hasDeathHistory() {
        return history() != null;
    }

    @Override
    public int bodySize() {
        return body.readableBytes();
    }

    @Override
    public Amqp10Message toAmqp10() {
        Extras kept = made();
        Amqp10Message c = kept.converted;
        if (c == null) {
            c = Amqp091ToAmqp10.convert(this);
            if (!CONVERTED.compareAndSet(kept, null, c)) {
                c.release(); // another thread converted first
                c = kept.converted;
            }
        }
        return c;
    }

    @Override
    public Amqp091Message toAmqp091() {
        return this;
    }

    @Override
    public int storedSize() {
        return (history() == null ? 0 : 1 + StoredDeaths.size(history())) + 4 + size();
    }

    @Override
    public void writeStored(ByteBuf out) {
        if (history() != null) {
            out.writeByte(STORED_VERSION_2);
            StoredDeaths.write(history(), out);
        }
        out.writeInt(properties.readableBytes());
        out.writeBytes(properties, properties.readerIndex(), properties.readableBytes());
        out.writeBytes(body, body.readerIndex(), body.readableBytes());
    }

    @Override
    public Amqp091Message retain() {
        super.retain();
        return this;
    }

    @Override
    public Amqp091Message touch(Object hint) {
        properties.touch(hint);
        body.touch(hint);
        return this;
    }

    @Override
    protected void deallocate() {
        properties.release();
        body.release();
        Amqp10Message c = known().converted;
        if (c != null) {
            c.release();
        }
    }
}
