package io.skiffmq.core.routing;

/** Where a binding leads: a queue, or another exchange (exchange-to-exchange binding). */
public record Destination(boolean isExchange, String name) {
    public static Destination queue(String name) {
        return new Destination(false, name);
    }

    public static Destination exchange(String name) {
        return new Destination(true, name);
    }
}
