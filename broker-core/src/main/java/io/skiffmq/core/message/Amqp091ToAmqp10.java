package io.skiffmq.core.message;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.CompositeByteBuf;
import io.skiffmq.codec.amqp091.BasicProperties;
import io.skiffmq.codec.amqp10.AmqpDecodeException;
import io.skiffmq.codec.amqp10.MessageSections;
import io.skiffmq.codec.amqp10.ProtonCodec;
import java.nio.charset.StandardCharsets;
import java.util.Date;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.apache.qpid.proton.amqp.Binary;
import org.apache.qpid.proton.amqp.Symbol;
import org.apache.qpid.proton.amqp.UnsignedByte;
import org.apache.qpid.proton.amqp.UnsignedInteger;
import org.apache.qpid.proton.amqp.messaging.ApplicationProperties;
import org.apache.qpid.proton.amqp.messaging.Header;
import org.apache.qpid.proton.amqp.messaging.MessageAnnotations;
import org.apache.qpid.proton.amqp.messaging.Properties;

/**
 * AMQP 0-9-1 to AMQP 1.0, following RabbitMQ 4's "AMQP 0.9.1 -> AMQP 1.0" table (docs/messages.md lists the
 * rules and where we differ). The body becomes one {@code data} section whose bytes are the original body buffer,
 * not a copy. Stateless; runs on the thread of the consumer that first needs the conversion.
 */
final class Amqp091ToAmqp10 {
    static final String X_BASIC_TYPE = "x-basic-type";
    private static final Symbol X_EXCHANGE_SYMBOL = Symbol.valueOf(Message.X_EXCHANGE);
    private static final Symbol X_ROUTING_KEY_SYMBOL = Symbol.valueOf(Message.X_ROUTING_KEY);
    private static final String URN_UUID = "urn:uuid:";
    /** Descriptor of the data section (0x00 0x53 0x75) and the vbin32 format code. */
    private static final int DATA_PREFIX = 0x00537500 | 0xb0;

    private Amqp091ToAmqp10() {
    }

    static Amqp10Message convert(Amqp091Message m) {
        BasicProperties p;
        try {
            p = m.properties();
        } catch (IllegalArgumentException e) {
            throw new IllegalStateException("cannot convert an AMQP 0-9-1 message: " + e.getMessage(), e);
        }
        ProtonCodec codec = ProtonCodec.current();
        ByteBuf prefix = ByteBufAllocator.DEFAULT.buffer(256);
        CompositeByteBuf bytes = ByteBufAllocator.DEFAULT.compositeBuffer(2);
        try {
            codec.encode(header(m, p), prefix);
            Map<Symbol, Object> annotations = new LinkedHashMap<>();
            Map<String, Object> application = new LinkedHashMap<>();
            // where it was published, as RabbitMQ 4 writes them when it serialises a message (a stream keeps them)
            annotations.put(X_EXCHANGE_SYMBOL, m.exchange() == null ? "" : m.exchange());
            if (m.routingKey() != null) {
                annotations.put(X_ROUTING_KEY_SYMBOL, m.routingKey());
            }
            if (p.type() != null) {
                annotations.put(Symbol.valueOf(X_BASIC_TYPE), p.type());
            }
            if (p.headers() != null) {
                for (Map.Entry<String, Object> e : p.headers().entrySet()) {
                    if (e.getKey().equals(Death.X_DEATH) && m.hasDeathHistory()) {
                        // as RabbitMQ 4 converts the history it keeps (to the millisecond); a publisher's own
                        // x-death header is no history and goes as any x- header does (mc_amqpl:convert_to/3)
                        annotations.put(Symbol.valueOf(Death.X_OPT_DEATHS), Death.toAmqp10(m.deaths()));
                        continue;
                    }
                    Object value = HeaderValues.toAmqp10(e.getValue());
                    if (value == HeaderValues.UNSUPPORTED) {
                        continue;
                    }
                    if (e.getKey().equals(Message.X_EXCHANGE) || e.getKey().equals(Message.X_ROUTING_KEY)) {
                        continue; // the broker's, as above
                    }
                    if (e.getKey().startsWith("x-")) {
                        annotations.put(Symbol.valueOf(e.getKey()), value);
                    } else if (e.getKey().equals(HeaderRoutes.CC) && value instanceof List) {
                        // as RabbitMQ 4 converts it: application-properties may not hold a list (mc_amqpl)
                        annotations.put(Symbol.valueOf(HeaderRoutes.X_CC), value);
                    } else if (!(value instanceof Map || value instanceof List)) {
                        // application-properties hold simple values only [3.2.5]
                        application.put(e.getKey(), value);
                    }
                }
            }
            codec.encode(new MessageAnnotations(annotations), prefix);
            Properties properties = properties(p);
            if (properties != null) {
                codec.encode(properties, prefix);
            }
            if (!application.isEmpty()) {
                codec.encode(new ApplicationProperties(application), prefix);
            }
            prefix.writeInt(DATA_PREFIX).writeInt(m.body().readableBytes());
            bytes.addComponent(true, prefix);
            prefix = null;
            bytes.addComponent(true, m.body().retainedSlice());
            return Amqp10Message.of(bytes, MessageSections.scan(bytes), m.durable(), m.exchange(), m.routingKey());
        } catch (AmqpDecodeException | RuntimeException e) {
            if (prefix != null) {
                prefix.release();
            }
            bytes.release();
            throw new IllegalStateException("converting an AMQP 0-9-1 message failed: " + e.getMessage(), e);
        }
    }

    private static Header header(Amqp091Message m, BasicProperties p) {
        Header header = new Header();
        header.setDurable(m.durable());
        if (p.priority() != null) {
            header.setPriority(UnsignedByte.valueOf(p.priority().byteValue()));
        }
        if (m.ttl() >= 0) {
            header.setTtl(UnsignedInteger.valueOf(Math.min(m.ttl(), 0xffffffffL)));
        }
        return header;
    }

    /** The properties section, or null when nothing maps to it. */
    private static Properties properties(BasicProperties p) {
        if (p.messageId() == null && p.correlationId() == null && p.userId() == null && p.replyTo() == null
                && p.appId() == null && p.timestamp() == null && p.contentType() == null
                && p.contentEncoding() == null) {
            return null;
        }
        Properties properties = new Properties();
        properties.setMessageId(messageId(p.messageId()));
        properties.setCorrelationId(messageId(p.correlationId()));
        if (p.userId() != null) {
            properties.setUserId(new Binary(p.userId().getBytes(StandardCharsets.UTF_8)));
        }
        properties.setReplyTo(p.replyTo());
        properties.setGroupId(p.appId());
        if (p.timestamp() != null) {
            properties.setCreationTime(new Date(HeaderValues.millis(p.timestamp())));
        }
        if (p.contentType() != null) {
            properties.setContentType(Symbol.valueOf(p.contentType()));
        }
        if (p.contentEncoding() != null) {
            properties.setContentEncoding(Symbol.valueOf(p.contentEncoding()));
        }
        return properties;
    }

    /** A valid {@code urn:uuid:} string becomes a uuid, anything else stays a string. */
    static Object messageId(String id) {
        if (id != null && id.length() == URN_UUID.length() + 36 && id.regionMatches(true, 0, URN_UUID, 0,
                URN_UUID.length())) {
            try {
                return UUID.fromString(id.substring(URN_UUID.length()));
            } catch (IllegalArgumentException e) {
                return id;
            }
        }
        return id;
    }
}
