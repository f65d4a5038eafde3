package io.skiffmq.server.metrics;

import io.skiffmq.server.config.Setting;

/**
 * The Prometheus endpoint's settings, listed in {@link #SETTINGS} (joined into {@code Settings.ALL}). Immutable.
 *
 * @param port the HTTP port of {@code /metrics} ({@code prometheus-port}, RabbitMQ's 15692); 0 picks a free one,
 *        {@link #NO_PORT} ({@code none}) serves no metrics
 * @param perQueue {@code /metrics} carries a series per queue ({@code prometheus-per-queue-metrics}); false keeps
 *        it to aggregates over all queues, for brokers with very many queues ({@code /metrics/per-object} always
 *        has them)
 */
public record PrometheusSettings(int port, boolean perQueue) {
    public static final int DEFAULT_PORT = 15692;
    public static final int NO_PORT = Setting.NO_PORT;

    public PrometheusSettings {
        Setting.checkPort("prometheus-port", port);
    }

    public static PrometheusSettings defaults() {
        return new PrometheusSettings(DEFAULT_PORT, true);
    }

    /** True when the endpoint is served. */
    public boolean enabled() {
        return port != NO_PORT;
    }

    /** These settings' names, defaults and meanings (joined into {@code Settings.ALL}). */
    public static final java.util.List<Setting> SETTINGS = java.util.List.of(
        Setting.of("prometheus-port", "port|none", "15692", "HTTP port of the Prometheus endpoint `/metrics`"
            + " (RabbitMQ's); 0 picks a free one, `none` serves no metrics (`docs/metrics.md`)"),
        Setting.of("prometheus-per-queue-metrics", "boolean", "true", "`/metrics` has series per queue; false:"
            + " sums over all queues only, for brokers with very many (`/metrics/per-object` always has them)"));

    /** True when {@code name} is one of these settings. */
    public static boolean has(String name) {
        return SETTINGS.stream().anyMatch(s -> s.name().equals(name));
    }

    /**
     * These settings with one changed.
     *
     * @throws NumberFormatException for a port that is not a number
     */
    public PrometheusSettings with(String name, String value) {
        return switch (name) {
            case "prometheus-port" -> new PrometheusSettings(Setting.port(name, value),
                perQueue);
            case "prometheus-per-queue-metrics" -> {
                if (!value.equals("true") && !value.equals("false")) {
                    throw new IllegalArgumentException(name + " must be true or false, got " + value);
                }
                yield new PrometheusSettings(port, Boolean.parseBoolean(value));
            }
            default -> throw new IllegalArgumentException("unknown setting " + name);
        };
    }
}
