package io.skiffmq.core;

import io.skiffmq.core.message.HeaderValues;
import java.util.Locale;
import java.util.Map;

/**
 * An exchange. Two declarations are equivalent when type, durability, auto-delete, internal and arguments agree.
 *
 * @param autoDelete deleted when its last binding (as a source) is removed
 * @param internal clients cannot publish to it; only other exchanges route to it
 * @param arguments e.g. {@code alternate-exchange}: where messages that route nowhere go
 */
public record Exchange(String name, Type type, boolean durable, boolean autoDelete, boolean internal,
        Map<String, Object> arguments) {

    public enum Type {
        DIRECT, FANOUT, TOPIC, HEADERS;

        /** The type named as RabbitMQ names it ("direct", "fanout", "topic", "headers"). */
        public static Type of(String name) {
            try {
                return valueOf(name.toUpperCase(Locale.ROOT));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("unknown exchange type '" + name + "'");
            }
        }
    }

    public Exchange {
        arguments = HeaderValues.copyOf(arguments); // keeps void (null) values
    }

    public Exchange(String name, Type type) {
        this(name, type, true, false, false, Map.of());
    }

    /** The default exchange: routes a message to the queue named by its routing key. */
    public boolean isDefault() {
        return name.isEmpty();
    }

    /** The alternate exchange's name, or null. */
    public String alternateExchange() {
        Object ae = arguments.get("alternate-exchange");
        return ae == null ? null : ae.toString();
    }
}
