package io.skiffmq.server.http;

import io.skiffmq.core.stream.SuperStreams;
import io.skiffmq.server.config.Setting;

/**
 * Where the RabbitMQ-compatible HTTP API listens ({@code management-port}; RabbitMQ's management listener is on
 * 15672), how often its message rates are sampled ({@code collect-statistics-interval}, RabbitMQ's setting of
 * that name) and how many partitions a super stream it declares may have ({@code max-super-stream-partitions},
 * RabbitMQ's {@code max_super_stream_partitions}), how long a listing waits for a queue to count its messages
 * ({@code management-counts-timeout}) and how many threads run management operations ({@code management-threads}).
 * Listed in {@link #SETTINGS} (joined into {@code Settings.ALL}). Immutable.
 *
 * @param port the TCP port; 0 picks a free one; {@link #NO_PORT} switches the API off ({@code none})
 * @param statisticsIntervalMillis milliseconds between two samples of the counters the rates come from
 * @param maxSuperStreamPartitions the most partitions {@code PUT /api/stream/super-streams} makes
 * @param countsTimeoutMillis how long the queue listings and the overview wait for a queue's own thread to count its
 *        messages before they take its gauges, a moment old, instead
 * @param threads the most threads that run operations that may wait (for the disk, or for a cluster's majority):
 *        HTTP API requests, AMQP 1.0 {@code /management} requests, declarations and deletions of every protocol
 */
public record ManagementSettings(int port, long statisticsIntervalMillis, int maxSuperStreamPartitions,
        long countsTimeoutMillis, int threads) {
    public static final int DEFAULT_PORT = 15672;
    /** RabbitMQ's default {@code collect_statistics_interval}. */
    public static final long DEFAULT_STATISTICS_INTERVAL_MILLIS = 5000;
    public static final long DEFAULT_COUNTS_TIMEOUT_MILLIS = 5000;
    public static final int DEFAULT_THREADS = 32;
    /** {@code management-port = none}: no HTTP API. */
    public static final int NO_PORT = Setting.NO_PORT;

    public ManagementSettings {
        Setting.checkPort("management-port", port);
        if (statisticsIntervalMillis <= 0) {
            throw new IllegalArgumentException("collect-statistics-interval must be positive");
        }
        if (maxSuperStreamPartitions <= 0) {
            throw new IllegalArgumentException("max-super-stream-partitions must be positive");
        }
        if (countsTimeoutMillis <= 0) {
            throw new IllegalArgumentException("management-counts-timeout must be positive");
        }
        if (threads <= 0) {
            throw new IllegalArgumentException("management-threads must be positive");
        }
    }

    public static ManagementSettings defaults() {
        return new ManagementSettings(DEFAULT_PORT, DEFAULT_STATISTICS_INTERVAL_MILLIS,
            SuperStreams.DEFAULT_MAX_PARTITIONS, DEFAULT_COUNTS_TIMEOUT_MILLIS, DEFAULT_THREADS);
    }

    /** True when the HTTP API is to listen. */
    public boolean enabled() {
        return port != NO_PORT;
    }

    /** These settings' names, defaults and meanings (joined into {@code Settings.ALL}). */
    public static final java.util.List<Setting> SETTINGS = java.util.List.of(
        Setting.of("management-port", "port|none", "15672", "the RabbitMQ-compatible HTTP API"
            + " (`docs/http-api.md`) and the web console at `/` (`docs/console.md`); 0 picks a free one; `none`"
            + " switches both off"),
        Setting.of("collect-statistics-interval", "ms", "5000", "how often the HTTP API samples the counters its"
            + " message rates come from (RabbitMQ's setting of that name)"),
        Setting.of("max-super-stream-partitions", "int", "1000", "the most partitions a super stream declared"
            + " through the HTTP API (`skiffmqctl add_super_stream`) may have (RabbitMQ's"
            + " `max_super_stream_partitions`; docs/streams.md)"),
        Setting.of("management-counts-timeout", "ms", "5000", "how long `GET /api/queues` and `/api/overview` wait"
            + " for a queue's own thread to count its messages; a queue that has not answered by then (its thread"
            + " behind, a full GC) is shown with its gauges, a moment old, rather than failing the request"),
        Setting.of("management-threads", "int", "32", "the most threads that run operations that may wait for"
            + " the disk or for a cluster's majority, off the event loops: HTTP API and AMQP 1.0 `/management`"
            + " requests, and every protocol's declarations and deletions; started as needed, stopped after 60 s"
            + " idle, so that requests waiting out `cluster-append-timeout` leave other threads to run on"));

    /** True when {@code name} is one of these settings. */
    public static boolean has(String name) {
        return SETTINGS.stream().anyMatch(s -> s.name().equals(name));
    }

    /**
     * These settings with one changed.
     *
     * @throws NumberFormatException for a port or an interval that is not a number
     */
    public ManagementSettings with(String name, String value) {
        if (!has(name)) {
            throw new IllegalArgumentException("unknown setting " + name);
        }
        return switch (name) {
            case "collect-statistics-interval" -> new ManagementSettings(port, Long.parseLong(value),
                maxSuperStreamPartitions, countsTimeoutMillis, threads);
            case "max-super-stream-partitions" -> new ManagementSettings(port, statisticsIntervalMillis,
                Integer.parseInt(value), countsTimeoutMillis, threads);
            case "management-counts-timeout" -> new ManagementSettings(port, statisticsIntervalMillis,
                maxSuperStreamPartitions, Long.parseLong(value), threads);
            case "management-threads" -> new ManagementSettings(port, statisticsIntervalMillis,
                maxSuperStreamPartitions, countsTimeoutMillis, Integer.parseInt(value));
            default -> new ManagementSettings(Setting.port(name, value), statisticsIntervalMillis,
                maxSuperStreamPartitions, countsTimeoutMillis, threads);
        };
    }
}
