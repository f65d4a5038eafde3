package io.skiffmq.server.config;

/**
 * How long an AMQP 0-9-1 delivery may wait for its acknowledgement before its channel is closed
 * ({@code consumer-timeout}, RabbitMQ's {@code consumer_timeout}: 30 minutes), and how often a channel looks
 * ({@code channel-tick-interval}, RabbitMQ's {@code channel_tick_interval}: a minute). A queue's
 * {@code x-consumer-timeout} argument or {@code consumer-timeout} policy key overrides the first for its deliveries.
 * Listed in {@link #SETTINGS} (joined into {@code Settings.ALL}). Immutable.
 *
 * @param timeoutMillis the longest a delivery waits for its ack; {@link #NONE} for no limit
 * @param tickMillis how often each connection's channels compare their oldest unacknowledged delivery with it
 */
public record ConsumerTimeout(long timeoutMillis, long tickMillis) {
    /** {@code consumer-timeout = none}: deliveries wait for ever, unless their queue sets a timeout. */
    public static final long NONE = -1;
    public static final long DEFAULT_TIMEOUT_MILLIS = 1_800_000;
    public static final long DEFAULT_TICK_MILLIS = 60_000;

    public ConsumerTimeout {
        if (timeoutMillis != NONE && timeoutMillis <= 0) {
            throw new IllegalArgumentException("consumer-timeout must be > 0 or none");
        }
        if (tickMillis <= 0) {
            throw new IllegalArgumentException("channel-tick-interval must be > 0");
        }
    }

    /**
     * The timeout of {@code queue}'s deliveries: its {@code x-consumer-timeout} argument or {@code consumer-timeout}
     * policy key, the smaller when both are set (RabbitMQ's {@code args_policy_lookup}), else {@link #timeoutMillis}.
     */
    public long millisFor(io.skiffmq.core.queue.Queue queue) {
        Object argument = queue.declaration().arguments().get("x-consumer-timeout");
        long fromArgument = argument instanceof Number n && n.longValue() >= 0 ? n.longValue() : -1;
        io.skiffmq.core.policy.EffectivePolicy policy = queue.policy();
        long fromPolicy = policy.has("consumer-timeout") ? policy.number("consumer-timeout") : -1;
        if (fromArgument < 0 && fromPolicy < 0) {
            return timeoutMillis;
        }
        return fromArgument < 0 ? fromPolicy : fromPolicy < 0 ? fromArgument : Math.min(fromArgument, fromPolicy);
    }

    public static ConsumerTimeout defaults() {
        return new ConsumerTimeout(DEFAULT_TIMEOUT_MILLIS, DEFAULT_TICK_MILLIS);
    }

    /** These settings' names, defaults and meanings (joined into {@code Settings.ALL}). */
    public static final java.util.List<Setting> SETTINGS = java.util.List.of(
        Setting.of("consumer-timeout", "ms|none", "1800000", "how long an AMQP 0-9-1 delivery may wait for its"
            + " acknowledgement before its channel is closed with 406 (RabbitMQ's `consumer_timeout`); a queue's"
            + " `x-consumer-timeout` or `consumer-timeout` policy overrides it; `none`: no limit"),
        Setting.of("channel-tick-interval", "ms", "60000", "how often AMQP 0-9-1 channels look for a delivery past"
            + " its consumer timeout (RabbitMQ's `channel_tick_interval`)"));

    /** True when {@code name} is one of these settings. */
    public static boolean has(String name) {
        return SETTINGS.stream().anyMatch(s -> s.name().equals(name));
    }

    /**
     * These settings with one changed.
     *
     * @throws NumberFormatException for a value that is not a number
     */
    public ConsumerTimeout with(String name, String value) {
        return switch (name) {
            case "consumer-timeout" -> new ConsumerTimeout(value.equals("none") ? NONE : Long.parseLong(value),
                tickMillis);
            case "channel-tick-interval" -> new ConsumerTimeout(timeoutMillis, Long.parseLong(value));
            default -> throw new IllegalArgumentException("unknown setting " + name);
        };
    }
}
