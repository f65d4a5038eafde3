package io.skiffmq.server.http;

/**
 * Where the RabbitMQ-compatible HTTP API listens ({@code management-port}; RabbitMQ's management listener is on
 * 15672). Parsed by {@code BrokerConfig} (its table lists it). Immutable.
 *
 * @param port the TCP port; 0 picks a free one; {@link #NO_PORT} switches the API off ({@code none})
 */
public record ManagementSettings(int port) {
    public static final int DEFAULT_PORT = 15672;
    /** {@code management-port = none}: no HTTP API. */
    public static final int NO_PORT = -1;

    public ManagementSettings {
        if (port < NO_PORT || port > 65535) {
            throw new IllegalArgumentException("management-port must be in [0, 65535] or none");
        }
    }

    public static ManagementSettings defaults() {
        return new ManagementSettings(DEFAULT_PORT);
    }

    /** True when the HTTP API is to listen. */
    public boolean enabled() {
        return port != NO_PORT;
    }

    /** True when {@code name} is one of these settings. */
    public static boolean has(String name) {
        return name.equals("management-port");
    }

    /**
     * These settings with one changed.
     *
     * @throws NumberFormatException for a port that is not a number
     */
    public ManagementSettings with(String name, String value) {
        if (!has(name)) {
            throw new IllegalArgumentException("unknown setting " + name);
        }
        return new ManagementSettings(value.equals("none") ? NO_PORT : Integer.parseInt(value));
    }
}
