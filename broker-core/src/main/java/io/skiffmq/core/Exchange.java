package io.skiffmq.core;

/** An exchange: its name and type. Bindings, and routing through them, arrive with the routing issue. */
public record Exchange(String name, Type type) {
    public enum Type { DIRECT, FANOUT, TOPIC, HEADERS }

    /** The default exchange: routes a message to the queue named by its routing key. */
    public boolean isDefault() {
        return name.isEmpty();
    }
}
