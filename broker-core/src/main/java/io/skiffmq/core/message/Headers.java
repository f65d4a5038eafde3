package io.skiffmq.core.message;

import java.util.Map;

/**
 * A message's headers as headers exchanges see them (AMQP 1.0 application-properties, AMQP 0-9-1 the
 * {@code headers} property), in the neutral value model of {@link HeaderValues}. Asked for only when a headers
 * exchange is on the route, so implementations decode on first use.
 */
@FunctionalInterface
public interface Headers {
    /**
     * The headers, never null; unmodifiable or not to be modified.
     *
     * @throws IllegalArgumentException when the message's headers are malformed
     */
    Map<String, Object> headers();

    /** The value of header {@code name}, null when absent (or present with a null value). */
    default Object header(String name) {
        return headers().get(name);
    }
}
