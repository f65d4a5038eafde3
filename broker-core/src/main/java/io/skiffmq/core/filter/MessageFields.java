package io.skiffmq.core.filter;

import io.skiffmq.codec.amqp10.AmqpDecodeException;
import io.skiffmq.codec.amqp10.MessageSections;
import io.skiffmq.codec.amqp10.SectionCode;
import io.skiffmq.codec.amqp091.BasicProperties;
import io.skiffmq.core.message.Message;
import io.skiffmq.core.message.MessageFormat;
import java.nio.charset.StandardCharsets;
import java.util.UUID;
import org.apache.qpid.proton.amqp.Binary;
import org.apache.qpid.proton.amqp.UnsignedLong;

/**
 * What a selector's identifiers read from a message: a JMS header field, mapped as Qpid JMS's
 * {@code AmqpJmsMessageFacade} maps it to AMQP 1.0 (and to the 0-9-1 content properties as RabbitMQ's JMS client
 * does), or a property (application-properties, 0-9-1 headers). AMQP 1.0 sections are read in place, one field at a
 * time ({@link MessageSections}); nothing builds a map per message. Stateless; safe from any thread.
 */
final class MessageFields {
    /** Which value an identifier names, resolved once per selector. */
    enum Field {
        PROPERTY, DELIVERY_MODE, PRIORITY, MESSAGE_ID, TIMESTAMP, CORRELATION_ID, TYPE, EXPIRATION, USER_ID,
        GROUP_ID, GROUP_SEQ;

        static Field of(String identifier) {
            return switch (identifier) {
                case "JMSDeliveryMode" -> DELIVERY_MODE;
                case "JMSPriority" -> PRIORITY;
                case "JMSMessageID" -> MESSAGE_ID;
                case "JMSTimestamp" -> TIMESTAMP;
                case "JMSCorrelationID" -> CORRELATION_ID;
                case "JMSType" -> TYPE;
                case "JMSExpiration" -> EXPIRATION;
                case "JMSXUserID" -> USER_ID;
                case "JMSXGroupID" -> GROUP_ID;
                case "JMSXGroupSeq" -> GROUP_SEQ;
                default -> PROPERTY;
            };
        }
    }

    /** The JMS priority a message without one has (JMS 2.0, 3.4.10; AMQP 1.0's header default too). */
    static final long DEFAULT_PRIORITY = 4;

    private MessageFields() {
    }

    /**
     * The value, null when absent.
     *
     * @throws IllegalArgumentException when the section it is in does not decode
     */
    static Object value(Message message, Field field, String name) {
        if (field == Field.PROPERTY) {
            return message.header(name);
        }
        if (field == Field.DELIVERY_MODE) {
            return durable(message) ? "PERSISTENT" : "NON_PERSISTENT";
        }
        try {
            return message.format() == MessageFormat.AMQP_1_0 ? amqp10(message.toAmqp10().sections(), field)
                : amqp091(message, field);
        } catch (AmqpDecodeException e) {
            throw new IllegalArgumentException(e.getMessage(), e);
        }
    }

    private static boolean durable(Message message) {
        if (message.format() != MessageFormat.AMQP_1_0) {
            return message.durable();
        }
        MessageSections sections = message.toAmqp10().sections();
        try {
            // a message without a header is not durable [3.2.1], whatever the broker keeps it as
            return sections.has(SectionCode.HEADER) && sections.durable();
        } catch (AmqpDecodeException e) {
            throw new IllegalArgumentException(e.getMessage(), e);
        }
    }

    private static Object amqp10(MessageSections s, Field field) throws AmqpDecodeException {
        return switch (field) {
            case PRIORITY -> s.has(SectionCode.HEADER) ? (long) s.priority() : DEFAULT_PRIORITY;
            case MESSAGE_ID -> idString(s.messageId(), true);
            case CORRELATION_ID -> idString(s.correlationId(), false);
            case TIMESTAMP -> time(s.creationTime());
            case EXPIRATION -> s.absoluteExpiryTime() == Long.MIN_VALUE ? 0L : s.absoluteExpiryTime();
            case TYPE -> s.subject();
            case USER_ID -> {
                Binary user = s.userId();
                yield user == null ? null
                    : new String(user.getArray(), user.getArrayOffset(), user.getLength(), StandardCharsets.UTF_8);
            }
            case GROUP_ID -> s.groupId();
            case GROUP_SEQ -> s.groupSequence() < 0 ? null : (Object) s.groupSequence();
            default -> null;
        };
    }

    private static Object amqp091(Message message, Field field) {
        BasicProperties p = message.toAmqp091().properties();
        return switch (field) {
            case PRIORITY -> p.priority() == null ? DEFAULT_PRIORITY : (long) p.priority();
            case MESSAGE_ID -> p.messageId();
            case CORRELATION_ID -> p.correlationId();
            case TIMESTAMP -> p.timestamp() == null ? null : (Object) p.timestamp().toEpochMilli();
            case EXPIRATION -> 0L;
            case TYPE -> p.type();
            case USER_ID -> p.userId();
            case GROUP_ID -> message.header("JMSXGroupID");
            case GROUP_SEQ -> message.header("JMSXGroupSeq");
            default -> null;
        };
    }

    private static Object time(long millis) {
        return millis == Long.MIN_VALUE ? null : (Object) millis;
    }

    /**
     * A message-id or correlation-id as Qpid JMS shows it ({@code AmqpMessageIdHelper}): a string with the
     * {@code ID:} prefix as it is; one without, as {@code ID:AMQP_NO_PREFIX:…} for a message-id and as it is for a
     * correlation-id (an application's own); other types with their type's prefix.
     */
    static String idString(Object id, boolean messageId) {
        if (id == null) {
            return null;
        }
        if (id instanceof String s) {
            return s.startsWith("ID:") || !messageId ? s : "ID:AMQP_NO_PREFIX:" + s;
        }
        if (id instanceof UUID u) {
            return "ID:AMQP_UUID:" + u;
        }
        if (id instanceof UnsignedLong u) {
            return "ID:AMQP_ULONG:" + u;
        }
        if (id instanceof Binary b) {
            StringBuilder hex = new StringBuilder("ID:AMQP_BINARY:");
            for (int i = 0; i < b.getLength(); i++) {
                hex.append(String.format("%02X", b.getArray()[b.getArrayOffset() + i] & 0xff));
            }
            return hex.toString();
        }
        return id.toString();
    }
}
