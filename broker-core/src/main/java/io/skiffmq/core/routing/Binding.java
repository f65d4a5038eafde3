package io.skiffmq.core.routing;

import java.util.Map;

/**
 * A binding from a source exchange to a destination. Its identity is all four parts, arguments included: two
 * bindings that differ only in their arguments are two bindings, and deleting one leaves the other routing
 * (RabbitMQ once confused them; see seed 001).
 *
 * @param arguments immutable; values are the AMQP types of the declaration (String, Long, Boolean, …)
 */
public record Binding(String source, Destination destination, String key, Map<String, Object> arguments) {
    public Binding {
        key = key == null ? "" : key;
        // not Map.copyOf: a null value is meaningful (headers: "present, any value")
        arguments = arguments == null || arguments.isEmpty() ? Map.of()
            : java.util.Collections.unmodifiableMap(new java.util.LinkedHashMap<>(arguments));
    }
}
