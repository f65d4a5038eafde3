package io.skiffmq.core.routing;

import io.skiffmq.core.message.HeaderValues;
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
        // a null (void) value is meaningful (headers: "present, any value")
        arguments = HeaderValues.copyOf(arguments);
    }
}
