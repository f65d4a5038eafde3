package io.skiffmq.server.http;

import io.skiffmq.server.config.Setting;

/**
 * Where the RabbitMQ-compatible HTTP API listens ({@code management-port}; RabbitMQ's management listener is on
 * 15672). Listed in {@link #SETTINGS} (joined into {@code Settings.ALL}). Immutable.
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

    /** These settings' names, defaults and meanings (joined into {@code Settings.ALL}). */
    public static final java.util.List<Setting> SETTINGS = java.util.List.of(
        Setting.of("management-port", "port|none", "15672", "the RabbitMQ-compatible HTTP API"
            + " (`docs/http-api.md`); 0 picks a free one; `none` switches it off"));

    /** True when {@code name} is one of these settings. */
    public static boolean has(String name) {
        return SETTINGS.stream().anyMatch(s -> s.name().equals(name));
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
