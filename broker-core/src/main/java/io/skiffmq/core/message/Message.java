package io.skiffmq.core.message;

import io.netty.buffer.ByteBuf;
import io.netty.util.IllegalReferenceCountException;
import io.netty.util.ReferenceCounted;
import java.util.Map;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;

/**
 * A message inside the broker, whatever protocol published it: what routing and queues need (durability,
 * priority, TTL, size, the exchange and routing key, headers for headers exchanges), the annotations the broker
 * adds, and the message itself held in its publisher's format ({@link #format()}: {@link Amqp10Message},
 * {@link Amqp091Message}). A consumer of the other protocol asks for {@link #toAmqp10()} or {@link #toAmqp091()};
 * the conversion happens once, on first use, and is kept with the message. A message that never changes protocol
 * is delivered and stored from its publisher's bytes, never re-encoded.
 *
 * <p>Reference counted: each queue that holds the message holds one reference, and each delivery in flight to a
 * consumer one more. The last {@link #release()} releases the bytes, and the converted form if there is one.
 * Immutable apart from the count and the lazily made decoded and converted forms (published safely), so it can
 * cross threads (queues, connections) freely.
 */
public abstract class Message implements ReferenceCounted, Headers {
    /** Broker annotation: the exchange the message was published to. */
    public static final String X_EXCHANGE = "x-exchange";
    /** Broker annotation: the routing key it was published with. */
    public static final String X_ROUTING_KEY = "x-routing-key";

    private static final AtomicIntegerFieldUpdater<Message> REF_CNT =
        AtomicIntegerFieldUpdater.newUpdater(Message.class, "refCnt");

    /**
     * References held. Kept here rather than by extending Netty's {@code AbstractReferenceCounted}, which in 4.2 keeps
     * the count in an object of its own: 16 bytes more for every message.
     */
    private volatile int refCnt = 1;
    private final boolean durable;
    /** 0..255, unsigned: in a byte, the fields of an AMQP 0-9-1 message fit in 56 bytes rather than 64. */
    private final byte priority;
    private final long ttl;
    private final String exchange;
    private final String routingKey;

    protected Message(boolean durable, int priority, long ttl, String exchange, String routingKey) {
        this.durable = durable;
        this.priority = (byte) priority;
        this.ttl = ttl;
        this.exchange = exchange;
        this.routingKey = routingKey;
    }

    /** The format the message is held in: the one its publisher used. */
    public abstract MessageFormat format();

    public final boolean durable() {
        return durable;
    }

    /** 0..255; when the publisher set none, 4 for AMQP 1.0 (its default) and 0 for AMQP 0-9-1 (RabbitMQ's). */
    public final int priority() {
        return priority & 0xff;
    }

    /** Milliseconds, -1 for none. */
    public final long ttl() {
        return ttl;
    }

    /** The exchange the message was published to ("" for the default exchange). */
    public final String exchange() {
        return exchange;
    }

    /** The routing key it was published with; may be null (an AMQP 1.0 message without a subject). */
    public final String routingKey() {
        return routingKey;
    }

    /**
     * The routing keys the message names beside its routing key, which it is routed with too: AMQP 0-9-1's
     * {@code CC} then {@code BCC} headers, AMQP 1.0's {@code x-cc} message annotation, as RabbitMQ reads them. Null
     * when it names none, the usual case, told without decoding anything or allocating.
     *
     * @throws io.skiffmq.core.BrokerException when such a header is of the wrong type (RabbitMQ's refusal)
     */
    public abstract java.util.List<String> headerRoutes();

    /**
     * The keys of its {@code CC} header or {@code x-cc} annotation alone, null when none (or malformed): what it is
     * routed with beside its routing key when dead-lettered without a dead-letter routing key, and recorded with in
     * its death history ({@code rabbit_dead_letter:publish/5}, {@code mc:record_death/3}, which leave BCC out).
     */
    public abstract java.util.List<String> ccRoutes();

    /**
     * This message without its {@code BCC} header, which no consumer may see (RabbitMQ removes it when it takes
     * the message): itself when it has none, else a copy with new properties and the same body, one reference for
     * the caller. Only AMQP 0-9-1 has {@code BCC}.
     */
    public Message withoutBcc() {
        return this;
    }

    /**
     * This message as it goes to a dead-letter exchange ({@code rabbit_dead_letter:publish/5}): its death recorded in
     * its history ({@link Death}, with the first and latest deaths named, and the routing keys it had: its routing key
     * and its {@link #ccRoutes}), its own TTL gone (kept in the history), published to {@code exchange} with
     * {@code routingKey}. The bare message is untouched.
     *
     * @return a new message, one reference for the caller; this one is left as it is
     */
    public Message deadLettered(String reason, String queue, java.time.Instant now, String exchange,
            String routingKey) {
        return deadLettered(reason, queue, now, exchange, routingKey, 0);
    }

    /**
     * As {@link #deadLettered(String, String, java.time.Instant, String, String)}, carrying {@code deliveryCount},
     * the failed deliveries it had in the queue it died in: the copy tells it ({@link #deliveryCount()}, and over
     * AMQP 1.0 its header's delivery-count), as RabbitMQ 4.0's quorum queues copy theirs into the dead-lettered
     * message ({@code rabbit_fifo_dlx:discard/4}, {@code annotate_msg/2}).
     */
    public abstract Message deadLettered(String reason, String queue, java.time.Instant now, String exchange,
        String routingKey, long deliveryCount);

    /**
     * The failed deliveries a dead-lettered copy carries from the queue it died in; 0 for any other message. A queue
     * it is routed to counts on from it.
     */
    public long deliveryCount() {
        return 0;
    }

    /**
     * This message with {@code annotations} merged in, as a quorum queue merges a {@code modified} outcome's
     * message-annotations ({@code rabbit_fifo}'s {@code incr_msg/3}, read on delivery by {@code mc_amqp} and
     * {@code mc_amqpl}): over AMQP 1.0 they replace the message-annotations of the same keys, outside the bare
     * message, which stays as sent; over AMQP 0-9-1 those with an integer, string or boolean value become headers,
     * the others are left out, as {@code mc_amqpl} converts them.
     *
     * @param annotations keys starting {@code x-}, values as the AMQP 1.0 codec decodes them
     * @return a new message, one reference for the caller; this one is left as it is
     */
    public abstract Message annotated(Map<String, Object> annotations);

    /** The message's dead-letter history, most recent first; empty for one that never died. */
    public abstract java.util.List<Death> deaths();

    /** Bytes the message holds (its encoded form in {@link #format()}), for memory limits and paging. */
    public abstract int size();

    /** Bytes of its body alone, as RabbitMQ counts them for {@code x-max-length-bytes}. */
    public abstract int bodySize();

    /**
     * The annotations the broker adds on delivery: {@value #X_EXCHANGE} and, when there is one,
     * {@value #X_ROUTING_KEY}. Allocates; the AMQP 1.0 delivery path reads {@link #exchange()} and
     * {@link #routingKey()} directly.
     */
    public Map<String, Object> annotations() {
        return routingKey == null ? Map.of(X_EXCHANGE, exchange)
            : Map.of(X_EXCHANGE, exchange, X_ROUTING_KEY, routingKey);
    }

    /**
     * This message as AMQP 1.0: itself when it was published so, otherwise its conversion, made on the first call
     * and kept. The result is owned by this message: valid while the caller holds a reference to this one.
     *
     * @throws IllegalStateException when the message cannot be read to convert it (it was accepted, so its
     *         bytes should be sound)
     */
    public abstract Amqp10Message toAmqp10();

    /** This message as AMQP 0-9-1; as {@link #toAmqp10()}, the other way. */
    public abstract Amqp091Message toAmqp091();

    /** Bytes {@link #writeStored} writes. */
    public abstract int storedSize();

    /**
     * Appends the message's stored form at {@code out}'s writer index: its bytes in {@link #format()} as the
     * publisher sent them, with what the broker adds and RabbitMQ 4 keeps beside them (an AMQP 0-9-1 message's
     * death history, {@link Amqp091Message}) ({@link #readStored} reads them back).
     */
    public abstract void writeStored(ByteBuf out);

    /**
     * Reads a message back from its stored form.
     *
     * @param stored what {@link #writeStored} wrote; the message takes over this reference (released here on
     *        failure)
     * @param durableIfNoHeader the durability of an AMQP 1.0 message without a header
     * @throws MalformedMessageException when the bytes are not a message of {@code format}
     */
    public static Message readStored(MessageFormat format, ByteBuf stored, boolean durableIfNoHeader,
            String exchange, String routingKey) throws MalformedMessageException {
        return readStored(format, stored, durableIfNoHeader, exchange, routingKey, false);
    }

    /**
     * As {@link #readStored(MessageFormat, ByteBuf, boolean, String, String)}, for a form stored before the broker
     * kept a 0-9-1 message's death history beside it (journal record version 3 and older) when
     * {@code historyInHeader}: its {@code x-death} header, then written by the broker alone, is its history.
     */
    public static Message readStored(MessageFormat format, ByteBuf stored, boolean durableIfNoHeader,
            String exchange, String routingKey, boolean historyInHeader) throws MalformedMessageException {
        return switch (format) {
            case AMQP_1_0 -> Amqp10Message.readStored(stored, durableIfNoHeader, exchange, routingKey);
            case AMQP_0_9_1 -> Amqp091Message.readStored(stored, exchange, routingKey, historyInHeader);
        };
    }

    @Override
    public final int refCnt() {
        return refCnt;
    }

    @Override
    public Message retain() {
        return retain(1);
    }

    @Override
    public Message retain(int increment) {
        if (increment <= 0) {
            throw new IllegalArgumentException("increment " + increment + " (expected: > 0)");
        }
        for (;;) {
            int count = refCnt;
            if (count <= 0 || count + increment < count) {
                throw new IllegalReferenceCountException(count, increment); // freed already, or overflow
            }
            if (REF_CNT.compareAndSet(this, count, count + increment)) {
                return this;
            }
        }
    }

    @Override
    public Message touch() {
        return touch(null);
    }

    @Override
    public abstract Message touch(Object hint);

    @Override
    public final boolean release() {
        return release(1);
    }

    /** Drops {@code decrement} references; the last one frees the message ({@link #deallocate()}). */
    @Override
    public final boolean release(int decrement) {
        if (decrement <= 0) {
            throw new IllegalArgumentException("decrement " + decrement + " (expected: > 0)");
        }
        for (;;) {
            int count = refCnt;
            if (count < decrement) {
                throw new IllegalReferenceCountException(count, -decrement);
            }
            if (REF_CNT.compareAndSet(this, count, count - decrement)) {
                if (count == decrement) {
                    deallocate();
                    return true;
                }
                return false;
            }
        }
    }

    /** Lets go of what the message holds: called once, by the release that drops the last reference. */
    protected abstract void deallocate();
}
