package io.skiffmq.core.message;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.util.concurrent.FastThreadLocal;
import io.skiffmq.codec.amqp091.BasicProperties;
import io.skiffmq.codec.amqp10.AmqpDecodeException;
import io.skiffmq.codec.amqp10.MessageSections;
import io.skiffmq.codec.amqp10.SectionCode;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.apache.qpid.proton.amqp.Binary;
import org.apache.qpid.proton.amqp.UnsignedLong;

/**
 * AMQP 1.0 to AMQP 0-9-1, following RabbitMQ 4's "AMQP 1.0 -> AMQP 0.9.1" table (docs/messages.md lists the
 * rules and where we differ). A body that is one {@code data} section becomes the 0-9-1 body without a copy (a
 * slice of the publisher's bytes); any other body is passed on AMQP 1.0-encoded, with {@code type} "amqp-1.0".
 * The properties are written by {@link SectionsToAmqp091}, walking the sections in place; what it declines is
 * converted here through decoded maps ({@link #convertWithMaps}), the reference it is tested against. Stateless;
 * runs on the thread of the consumer that first needs the conversion.
 */
final class Amqp10ToAmqp091 {
    static final String AMQP_1_0_TYPE = "amqp-1.0";
    static final String X_MESSAGE_ID = "x-message-id";
    static final String X_CORRELATION_ID = "x-correlation-id";
    /** Each thread's walker (its scratch is reused). */
    private static final FastThreadLocal<SectionsToAmqp091> SECTIONS = new FastThreadLocal<>() {
        @Override
        protected SectionsToAmqp091 initialValue() {
            return new SectionsToAmqp091();
        }
    };

    private Amqp10ToAmqp091() {
    }

    static Amqp091Message convert(Amqp10Message m) {
        ByteBuf properties = ByteBufAllocator.DEFAULT.buffer(128);
        try {
            if (!SECTIONS.get().write(m, properties)) {
                properties.release();
                properties = null;
                return convertWithMaps(m);
            }
            MessageSections s = m.sections();
            ByteBuf body = s.buffer().retainedSlice(bodyIndex(s), bodyLength(s));
            return Amqp091Message.converted(properties, body, m.durable(), m.priority(), m.ttl(), m.exchange(),
                m.routingKey());
        } catch (RuntimeException e) {
            if (properties != null) {
                properties.release();
            }
            throw e;
        }
    }

    /**
     * Where the 0-9-1 body lies in the message's buffer: the bytes of its one {@code data} section, else all its body
     * sections as encoded, else nothing (at the message's start).
     */
    static int bodyIndex(MessageSections s) {
        if (s.bodyCode() == SectionCode.DATA && s.bodySectionCount() == 1) {
            int value = s.sectionValue(SectionCode.DATA);
            return value + (s.buffer().getUnsignedByte(value) == 0xa0 ? 2 : 5);
        }
        return s.bodyCode() >= 0 ? s.bodyStart() : s.start();
    }

    /** The length of the 0-9-1 body at {@link #bodyIndex}. */
    static int bodyLength(MessageSections s) {
        return s.bodyCode() >= 0 ? s.sectionEnd(s.bodyCode()) - bodyIndex(s) : 0;
    }

    /** The conversion through decoded maps: the reference {@link SectionsToAmqp091} is held to. */
    static Amqp091Message convertWithMaps(Amqp10Message m) {
        MessageSections s = m.sections();
        ByteBuf properties = null;
        ByteBuf body = null;
        try {
            Map<String, Object> headers = new LinkedHashMap<>();
            if (m.streamOffset() >= 0) {
                // as RabbitMQ 4 annotates what it reads from a stream
                headers.put(Amqp10Message.X_STREAM_OFFSET, m.streamOffset());
            }
            String basicType = null;
            for (Map.Entry<Object, Object> e : s.messageAnnotations().entrySet()) {
                String key = e.getKey().toString();
                if (key.equals(HeaderRoutes.X_CC)) {
                    put(headers, HeaderRoutes.CC, e.getValue());
                } else if (key.equals(Death.X_OPT_DEATHS)) {
                    headers.put(Death.X_DEATH, Death.toAmqp091(Death.fromAmqp10(e.getValue())));
                } else if (key.equals(Amqp091ToAmqp10.X_BASIC_TYPE)) {
                    basicType = e.getValue() instanceof String t ? t : null;
                } else if (key.startsWith("x-") && isShortString(key) && !internal(key)) {
                    put(headers, key, e.getValue());
                }
            }
            for (Map.Entry<String, Object> e : s.applicationProperties().entrySet()) {
                if (isShortString(e.getKey())) {
                    put(headers, e.getKey(), e.getValue());
                }
            }
            String messageId = id(s.messageId(), X_MESSAGE_ID, headers);
            String correlationId = id(s.correlationId(), X_CORRELATION_ID, headers);
            Binary user = s.userId();
            String userId = user == null ? null : shortString(new String(user.getArray(), user.getArrayOffset(),
                user.getLength(), StandardCharsets.UTF_8), user.getLength());
            long created = s.creationTime();
            String type = null;
            if (s.bodyCode() == SectionCode.DATA && s.bodySectionCount() == 1) {
                type = shortString(basicType); // a 0-9-1 message's type comes back (mc_amqpl's convert_from)
            } else if (s.bodyCode() >= 0) {
                type = AMQP_1_0_TYPE;
            }
            body = s.buffer().retainedSlice(bodyIndex(s), bodyLength(s));
            Integer priority = s.has(SectionCode.HEADER) ? s.priority() : null;
            BasicProperties p = new BasicProperties(
                symbol(s.contentType()), symbol(s.contentEncoding()), headers.isEmpty() ? null : headers,
                m.durable() ? 2 : 1, priority, correlationId, shortString(s.replyTo()),
                m.ttl() >= 0 ? Long.toString(m.ttl()) : null, messageId,
                created == Long.MIN_VALUE ? null : Instant.ofEpochSecond(Math.floorDiv(created, 1000)), type,
                userId, shortString(s.groupId()), null);
            properties = ByteBufAllocator.DEFAULT.buffer(128);
            p.encode(properties);
            return Amqp091Message.converted(properties, body, m.durable(), m.priority(), m.ttl(), m.exchange(),
                m.routingKey());
        } catch (AmqpDecodeException | RuntimeException e) {
            if (properties != null) {
                properties.release();
            }
            if (body != null) {
                body.release();
            }
            throw new IllegalStateException("converting an AMQP 1.0 message failed: " + e.getMessage(), e);
        }
    }

    /**
     * The annotations conversions add, which are not headers ({@code mc_amqpl:is_internal_header/1}): a 0-9-1
     * message converted to AMQP 1.0 and back (through a stream) does not gain them.
     */
    private static boolean internal(String key) {
        return key.startsWith("x-basic-") || key.equals(Message.X_EXCHANGE) || key.equals(Message.X_ROUTING_KEY)
            || key.equals(Death.X_DEATH);
    }

    /** Puts {@code value} under {@code key} when it has a 0-9-1 type. */
    private static void put(Map<String, Object> headers, String key, Object value) {
        Object neutral = HeaderValues.normalise(value);
        if (neutral != HeaderValues.UNSUPPORTED && HeaderValues.fitsAmqp091(neutral)) {
            headers.put(key, neutral);
        }
    }

    /**
     * message-id and correlation-id: a short string stays, a uuid becomes {@code urn:uuid:…}, a ulong its decimal
     * text; a longer string or a binary goes to header {@code header} instead.
     */
    private static String id(Object id, String header, Map<String, Object> headers) {
        if (id == null) {
            return null;
        }
        if (id instanceof String s) {
            if (isShortString(s)) {
                return s;
            }
            headers.put(header, s);
            return null;
        }
        if (id instanceof UUID u) {
            return "urn:uuid:" + u;
        }
        if (id instanceof UnsignedLong u) {
            return u.toString();
        }
        if (id instanceof Binary b) {
            headers.put(header, HeaderValues.normalise(b));
            return null;
        }
        return null;
    }

    private static String symbol(Object symbol) {
        return symbol == null ? null : shortString(symbol.toString());
    }

    private static String shortString(String s) {
        return s != null && isShortString(s) ? s : null;
    }

    private static String shortString(String s, int bytes) {
        return bytes < 256 && s.indexOf('\0') < 0 && s.indexOf('\uFFFD') < 0 ? s : null;
    }

    /** RabbitMQ's {@code shortstr} condition: under 256 bytes of UTF-8, no NUL. */
    static boolean isShortString(String s) {
        return s.indexOf('\0') < 0 && io.netty.buffer.ByteBufUtil.utf8Bytes(s) < 256;
    }

}
