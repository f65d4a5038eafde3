package io.skiffmq.server.config;

import io.skiffmq.server.auth.AuthSettings;
import io.skiffmq.server.logging.LogSettings;
import io.skiffmq.server.transport.TlsSettings;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Every broker setting, once: the list {@code BrokerConfig} accepts names from, that {@code --help}, the README's
 * settings table ({@link #markdownTable}) and the config-file reader are made from. The settings of
 * {@code BrokerConfig}'s own components are here; those of a settings record ({@link AuthSettings},
 * {@link TlsSettings}, {@link LogSettings}) are in its {@code SETTINGS} list and joined here. Immutable.
 */
public final class Settings {
    /** The settings of {@code BrokerConfig}'s own components. */
    static final List<Setting> BROKER = List.of(
        Setting.of("port", "int", "5672", "TCP port for AMQP 1.0 and 0-9-1; 0 picks a free one"),
        Setting.of("bind", "address", "0.0.0.0", "address to listen on"),
        Setting.of("data-dir", "path", "data", "where durable state lives (locked: one broker per directory)"),
        Setting.of("sync-policy", "sync|os", "sync", "when a durable message is confirmed: `sync` once fsynced"
            + " (survives power loss), `os` once in the OS page cache (survives a broker crash only)"),
        Setting.of("journal-segment-size", "bytes", "16777216",
            "bytes of journal per segment; space comes back a segment at a time"),
        Setting.of("queue-memory-limit", "bytes", "16777216", "bytes of waiting messages a queue keeps in memory"
            + " (their bytes plus about 400 per message); beyond it, arrivals are paged to disk, transient ones too,"
            + " and read back in order (docs/storage.md)"),
        Setting.of("dead-letter-retry-interval", "ms", "180000", "how long a quorum queue dead-lettering at least"
            + " once (`x-dead-letter-strategy: at-least-once`) waits before trying again the messages its dead-letter"
            + " exchange could not route (RabbitMQ's `dead_letter_worker_publisher_confirm_timeout`)"),
        Setting.of("allow-plain-amqp", "true|false", "false", "accept `AMQP 0 1.0.0` without SASL (as user anonymous)"),
        Setting.of("anonymous-login-user", "user|none", "guest", "SASL ANONYMOUS (offered by default, as in RabbitMQ"
            + " 4) logs in as this user, with its restrictions (guest: loopback only); `none` turns ANONYMOUS off"),
        Setting.of("users-file", "path|none", "none", "more users, `name:hash` lines, added on the first start;"
            + " `java -cp broker-server/target/skiffmq.jar io.skiffmq.server.auth.UserStore PASSWORD` prints a hash"),
        Setting.of("initial-max-frame-size", "int", "4096",
            "frame size accepted before `open` negotiates one (spec minimum 512)"),
        Setting.of("max-frame-size", "int", "131072", "largest frame we accept, offered in `open` (AMQP 1.0) and as"
            + " frame-max in `connection.tune` (0-9-1, at least 8192)"),
        Setting.of("channel-max", "int", "2047", "highest channel (AMQP 1.0 session, 0-9-1 channel)"),
        Setting.of("idle-timeout", "ms", "60000", "ms of silence before we close (`amqp:resource-limit-exceeded`);"
            + " empty frames go out at half the peer's timeout"),
        Setting.of("handshake-timeout", "ms", "10000", "ms from connect to `open`"),
        Setting.of("max-message-size", "bytes", "16777216", "larger deliveries detach the link with"
            + " `amqp:link:message-size-exceeded` (0-9-1: the channel closes with 406)"),
        Setting.of("session-window", "int", "2048", "incoming-window each session grants"),
        Setting.of("publisher-credit", "int", "1000", "link credit granted to a publisher at a time"),
        Setting.of("max-unconfirmed", "int", "5000",
            "a publisher link gets no new credit while this many deliveries await confirms"),
        Setting.of("durable-if-no-header", "true|false", "true", "a message without a header is durable (RabbitMQ's"
            + " choice); false follows the AMQP 1.0 default, as Artemis does"),
        Setting.of("auto-create-queues", "true|false", "true", "bare names and `/queue/q` declare missing queues"
            + " (v2 `/queues/q` and `/amq/queue/q` do not)"),
        Setting.of("rabbitmq-version", "version", BrokerConfig.RABBITMQ_VERSION, "the RabbitMQ feature level"
            + " implemented, told to clients as `version` (AMQP 1.0 `open`, 0-9-1 server properties, HTTP API); the"
            + " RabbitMQ AMQP 1.0 clients turn features on by it and need 4.0.0 or later (docs/server.md)"),
        Setting.described("node", "name", "skiffmq@host", "this node's name, `name@host` (RabbitMQ's"
            + " `rabbit@host`): the `node` open property, and its name in a cluster (docs/cluster.md)"),
        Setting.of("amqp091-port", "int|none", "none",
            "a second port that speaks AMQP 0-9-1 only (0-9-1 is spoken on `port` too); 0 picks a free one"),
        Setting.of("heartbeat", "seconds", "60",
            "AMQP 0-9-1 heartbeat offered in `connection.tune`, in seconds; 0 offers none"),
        Setting.of("amqp091-initial-frame-max", "int", "8192", "largest AMQP 0-9-1 frame accepted before"
            + " `tune-ok` agrees a frame-max (RabbitMQ's `initial_frame_max`; at least 4096); a larger one closes the"
            + " socket"),
        Setting.of("memory-high-watermark", "fraction|bytes", "0.4", "publishers are blocked while the heap after GC"
            + " plus direct buffers is above this fraction of `-Xmx` plus the direct-memory limit, or these bytes"
            + " (`512MB`); 0 blocks them at once (docs/alarms.md)"),
        Setting.of("disk-free-limit", "bytes", "50MB", "publishers are blocked while the data directory's disk has"
            + " less free space (`50MB` = 50,000,000 bytes, `1GiB`); 0 never"),
        Setting.described("event-loops", "int", "available processors", "worker event loops, shared by connections"
            + " and queues; a queue runs on the loop of its first user (docs/server.md)"),
        Setting.of("publisher-flow", "true|false", "true", "a queue whose backlog passes half of"
            + " `queue-memory-limit` while its consumers would drain it within two seconds holds its publishers back"
            + " to their pace instead of paging (docs/queues.md); false: queues page, and only alarms hold"
            + " publishers"));

    /** Every setting, in the order of {@code --help} and the README. */
    public static final List<Setting> ALL = join(BROKER, LogSettings.SETTINGS, AuthSettings.SETTINGS,
        TlsSettings.SETTINGS, io.skiffmq.server.metrics.PrometheusSettings.SETTINGS,
        io.skiffmq.server.http.ManagementSettings.SETTINGS, TransactionSettings.SETTINGS, ConsumerTimeout.SETTINGS,
        io.skiffmq.server.stream.StreamSettings.SETTINGS, DefinitionsSettings.SETTINGS, ClusterConfig.SETTINGS);

    private static final Map<String, Setting> BY_NAME = new LinkedHashMap<>();

    static {
        for (Setting setting : ALL) {
            if (BY_NAME.put(setting.name(), setting) != null) {
                throw new IllegalStateException("setting " + setting.name() + " is listed twice");
            }
        }
    }

    private Settings() {
    }

    @SafeVarargs
    private static List<Setting> join(List<Setting>... groups) {
        List<Setting> all = new ArrayList<>();
        for (List<Setting> group : groups) {
            all.addAll(group);
        }
        return List.copyOf(all);
    }

    /** The setting of that name, or null. */
    public static Setting get(String name) {
        return BY_NAME.get(name);
    }

    /** The setting whose environment variable that is ({@code SKIFFMQ_QUEUE_MEMORY_LIMIT}), or null. */
    public static Setting forEnvironment(String variable) {
        for (Setting setting : ALL) {
            if (setting.environmentName().equals(variable)) {
                return setting;
            }
        }
        return null;
    }

    /** The README's settings table, Markdown, one row per setting. */
    public static String markdownTable() {
        StringBuilder table = new StringBuilder("| name | default | meaning |\n|---|---|---|\n");
        for (Setting setting : ALL) {
            table.append("| `").append(setting.name()).append("` | ").append(setting.defaultValue()).append(" | ")
                .append(setting.meaning()).append(" |\n");
        }
        return table.toString();
    }

    /** Prints {@link #markdownTable()}: what goes into the README when a setting changes. */
    public static void main(String[] args) {
        System.out.print(markdownTable());
    }
}
