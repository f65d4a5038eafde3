package io.skiffmq.server.config;

import io.skiffmq.server.auth.AuthSettings;
import io.skiffmq.server.logging.LogSettings;
import io.skiffmq.server.metrics.PrometheusSettings;
import io.skiffmq.server.http.ManagementSettings;
import io.skiffmq.server.stream.StreamSettings;
import io.skiffmq.server.transport.TlsSettings;

import io.skiffmq.codec.amqp091.Amqp091FrameDecoder;
import io.skiffmq.codec.amqp10.Amqp10FrameDecoder;
import io.skiffmq.store.Journal;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.file.Path;
import java.util.Map;

/**
 * Broker settings. Their names, defaults and meanings are listed once, in {@link Settings} (the README's settings
 * table, {@code bin/skiffmq --help} and the config-file reader are made from that list); this record holds their
 * values and {@link #with} parses and checks them. {@link ConfigLoader} reads them from their sources: defaults,
 * {@code skiffmq.conf}, {@code SKIFFMQ_*} environment variables, {@code skiffmq.*} system properties and
 * {@code --name=value} flags (docs/configuration.md). Groups of settings live in small records of their own
 * ({@link AuthSettings}, {@link TlsSettings}, {@link LogSettings}, {@link PrometheusSettings},
 * {@link ManagementSettings}, {@link TransactionSettings}, {@link StreamSettings}, {@link DefinitionsSettings},
 * {@link ClusterConfig}, {@link ConsumerTimeout}),
 * each with {@code SETTINGS}, {@code has}, {@code with} and {@code defaults}. Immutable.
 */
public record BrokerConfig(int port, String bindAddress, Path dataDir, Journal.SyncPolicy syncPolicy,
        long journalSegmentSize, long queueMemoryLimit, boolean allowPlainAmqp, String anonymousLoginUser,
        Path usersFile, int initialMaxFrameSize, int maxFrameSize, int channelMax, int idleTimeoutMillis,
        int handshakeTimeoutMillis, long maxMessageSize, int sessionWindow, int publisherCredit, int maxUnconfirmed,
        boolean autoCreateQueues, boolean durableIfNoHeader, String rabbitmqVersion, String node, int amqp091Port,
        int heartbeatSeconds, int amqp091InitialFrameMax, MemoryWatermark memoryHighWatermark, long diskFreeLimit,
        int eventLoops, boolean publisherFlow, AuthSettings auth, TlsSettings tls, LogSettings log, PrometheusSettings prometheus,
        ManagementSettings management, TransactionSettings transactions, StreamSettings stream,
        DefinitionsSettings definitions, ClusterConfig cluster, ConsumerTimeout consumerTimeout,
        long deadLetterRetryMillis) {

    public static final int DEFAULT_PORT = 5672;
    /** SkiffMQ's own version, told to clients beside {@link #rabbitmqVersion} ({@code skiffmq-version}). */
    public static final String SKIFFMQ_VERSION = "0.1.0";
    /**
     * The RabbitMQ feature level we implement, told to clients as {@code version} (AMQP 1.0 {@code open}, 0-9-1
     * {@code connection.start}, the HTTP API): the last 4.0 release. 4.1 is where the clients turn on what we do not
     * have (filter expressions on streams, OAuth 2 token refresh); docs/server.md lists what each level turns on.
     */
    public static final String RABBITMQ_VERSION = "4.0.9";
    private static final java.util.regex.Pattern VERSION = java.util.regex.Pattern.compile("\\d+\\.\\d+\\.\\d+([-+].*)?");
    /** The {@code anonymous-login-user} that switches SASL ANONYMOUS off, as RabbitMQ's {@code none}. */
    public static final String NO_ANONYMOUS_LOGIN = "none";
    /** An optional port that is not set. */
    public static final int NO_PORT = Setting.NO_PORT;
    /** RabbitMQ's {@code disk_free_limit} default, 50MB. */
    public static final long DEFAULT_DISK_FREE_LIMIT = 50_000_000;

    public BrokerConfig {
        check(port >= 0 && port <= 65535, "port must be in [0, 65535]");
        check(anonymousLoginUser != null && !anonymousLoginUser.isEmpty(), "anonymous-login-user must not be empty");
        // a record's ordinal in its segment has 32 bits: 64 GiB of records of at least 32 bytes stays well inside
        check(journalSegmentSize >= 1 << 16 && journalSegmentSize <= 1L << 36,
            "journal-segment-size must be in [65536, 68719476736]");
        check(queueMemoryLimit >= 0, "queue-memory-limit must be >= 0");
        check(deadLetterRetryMillis > 0, "dead-letter-retry-interval must be > 0");
        check(initialMaxFrameSize >= Amqp10FrameDecoder.MIN_MAX_FRAME_SIZE, "initial-max-frame-size must be >= 512");
        check(maxFrameSize >= Amqp10FrameDecoder.MIN_MAX_FRAME_SIZE, "max-frame-size must be >= 512");
        check(channelMax >= 0 && channelMax <= 65535, "channel-max must be in [0, 65535]");
        check(idleTimeoutMillis >= 0, "idle-timeout must be >= 0");
        check(handshakeTimeoutMillis > 0, "handshake-timeout must be > 0");
        check(maxMessageSize > 0, "max-message-size must be > 0");
        check(sessionWindow > 0, "session-window must be > 0");
        check(publisherCredit > 0, "publisher-credit must be > 0");
        check(maxUnconfirmed > 0, "max-unconfirmed must be > 0");
        Setting.checkPort("amqp091-port", amqp091Port);
        check(heartbeatSeconds >= 0 && heartbeatSeconds <= 65535, "heartbeat must be in [0, 65535]");
        check(amqp091InitialFrameMax >= Amqp091FrameDecoder.SPEC_FRAME_MIN_SIZE,
            "amqp091-initial-frame-max must be >= 4096");
        check(memoryHighWatermark != null, "memory-high-watermark must be set");
        check(diskFreeLimit >= 0, "disk-free-limit must be >= 0");
        check(eventLoops > 0, "event-loops must be > 0");
        check(auth != null && tls != null && log != null && prometheus != null && management != null
            && transactions != null && stream != null && definitions != null && cluster != null
            && consumerTimeout != null, "auth, tls, log, prometheus, management, transactions, stream, definitions,"
                + " cluster and consumer timeout settings must be set");
    }

    private static void check(boolean ok, String message) {
        if (!ok) {
            throw new IllegalArgumentException(message);
        }
    }

    public static BrokerConfig defaults() {
        String host;
        try {
            host = InetAddress.getLocalHost().getHostName();
        } catch (UnknownHostException e) {
            host = "localhost";
        }
        return new BrokerConfig(DEFAULT_PORT, "0.0.0.0", Path.of("data"), Journal.SyncPolicy.SYNC,
            Journal.DEFAULT_SEGMENT_BYTES, 16L << 20, false, "guest", null,
            Amqp10FrameDecoder.DEFAULT_INITIAL_MAX_FRAME_SIZE, 131_072, 2047, 60_000, 10_000, 16L << 20, 2048, 1000,
            5000, true, true, RABBITMQ_VERSION, "skiffmq@" + host, NO_PORT, 60, Amqp091FrameDecoder.DEFAULT_FRAME_MAX,
            MemoryWatermark.DEFAULT,
            DEFAULT_DISK_FREE_LIMIT, Runtime.getRuntime().availableProcessors(), true, AuthSettings.defaults(),
            TlsSettings.defaults(), LogSettings.defaults(), PrometheusSettings.defaults(), ManagementSettings.defaults(),
            TransactionSettings.defaults(), StreamSettings.defaults(), DefinitionsSettings.defaults(),
            ClusterConfig.defaults(), ConsumerTimeout.defaults(),
            io.skiffmq.core.queue.DeadLetters.DEFAULT_RETRY_MILLIS);
    }

    /**
     * Defaults, overridden by system properties {@code skiffmq.*}, then by {@code --name=value} arguments: no
     * config file, no environment (what tests and embedded brokers use; {@code SkiffMq} reads them all).
     *
     * @throws IllegalArgumentException naming the setting and where it came from
     */
    public static BrokerConfig from(String[] args, Map<Object, Object> systemProperties) {
        return ConfigLoader.load(args, Map.of(), systemProperties, java.util.List.of()).config();
    }

    /**
     * This configuration with one setting changed, by its name in {@link Settings}.
     *
     * @throws IllegalArgumentException for a name not listed there, or a value the setting does not take
     */
    public BrokerConfig with(String name, String value) {
        if (Settings.get(name) == null) {
            throw new IllegalArgumentException("unknown setting " + name);
        }
        int p = port;
        String b = bindAddress;
        Path d = dataDir;
        Journal.SyncPolicy sync = syncPolicy;
        long segment = journalSegmentSize;
        long queueMemory = queueMemoryLimit;
        long deadLetterRetry = deadLetterRetryMillis;
        boolean plain = allowPlainAmqp;
        String anon = anonymousLoginUser;
        Path users = usersFile;
        int initial = initialMaxFrameSize;
        int frame = maxFrameSize;
        int channels = channelMax;
        int idle = idleTimeoutMillis;
        int handshake = handshakeTimeoutMillis;
        long message = maxMessageSize;
        int window = sessionWindow;
        int credit = publisherCredit;
        int unconfirmed = maxUnconfirmed;
        boolean create = autoCreateQueues;
        boolean noHeaderDurable = durableIfNoHeader;
        String version = rabbitmqVersion;
        String n = node;
        int port091 = amqp091Port;
        int heartbeat = heartbeatSeconds;
        int initial091 = amqp091InitialFrameMax;
        MemoryWatermark watermark = memoryHighWatermark;
        long diskFree = diskFreeLimit;
        int loops = eventLoops;
        boolean flow = publisherFlow;
        AuthSettings a = auth;
        TlsSettings t = tls;
        PrometheusSettings metrics = prometheus;
        LogSettings l = log;
        ManagementSettings m = management;
        TransactionSettings tx = transactions;
        StreamSettings st = stream;
        DefinitionsSettings defs = definitions;
        ClusterConfig c = cluster;
        ConsumerTimeout ct = consumerTimeout;
        try {
            switch (name) {
                case "port" -> p = Integer.parseInt(value);
                case "bind" -> b = value;
                case "data-dir" -> d = Path.of(value);
                case "sync-policy" -> sync = switch (value) {
                    case "sync" -> Journal.SyncPolicy.SYNC;
                    case "os" -> Journal.SyncPolicy.OS;
                    default -> throw new IllegalArgumentException("sync-policy must be sync or os, got " + value);
                };
                case "journal-segment-size" -> segment = Long.parseLong(value);
                case "queue-memory-limit" -> queueMemory = Long.parseLong(value);
                case "dead-letter-retry-interval" -> deadLetterRetry = Long.parseLong(value);
                case "allow-plain-amqp" -> plain = parseBoolean(name, value);
                case "anonymous-login-user" -> anon = value;
                case "users-file" -> users = value.equals("none") ? null : Path.of(value);
                case "initial-max-frame-size" -> initial = Integer.parseInt(value);
                case "max-frame-size" -> frame = Integer.parseInt(value);
                case "channel-max" -> channels = Integer.parseInt(value);
                case "idle-timeout" -> idle = Integer.parseInt(value);
                case "handshake-timeout" -> handshake = Integer.parseInt(value);
                case "max-message-size" -> message = Long.parseLong(value);
                case "session-window" -> window = Integer.parseInt(value);
                case "publisher-credit" -> credit = Integer.parseInt(value);
                case "max-unconfirmed" -> unconfirmed = Integer.parseInt(value);
                case "auto-create-queues" -> create = parseBoolean(name, value);
                case "durable-if-no-header" -> noHeaderDurable = parseBoolean(name, value);
                case "rabbitmq-version" -> version = parseVersion(name, value);
                case "node" -> n = value;
                case "amqp091-port" -> port091 = Setting.port(name, value);
                case "heartbeat" -> heartbeat = Integer.parseInt(value);
                case "amqp091-initial-frame-max" -> initial091 = Integer.parseInt(value);
                case "memory-high-watermark" -> watermark = MemoryWatermark.parse(value);
                case "disk-free-limit" -> diskFree = ByteSize.parse(name, value);
                case "event-loops" -> loops = Integer.parseInt(value);
                case "publisher-flow" -> flow = parseBoolean(name, value);
                default -> {
                    if (AuthSettings.has(name)) {
                        a = a.with(name, value);
                    } else if (TlsSettings.has(name)) {
                        t = t.with(name, value);
                    } else if (PrometheusSettings.has(name)) {
                        metrics = metrics.with(name, value);
                    } else if (LogSettings.has(name)) {
                        l = l.with(name, value);
                    } else if (ManagementSettings.has(name)) {
                        m = m.with(name, value);
                    } else if (TransactionSettings.has(name)) {
                        tx = tx.with(name, value);
                    } else if (StreamSettings.has(name)) {
                        st = st.with(name, value);
                    } else if (DefinitionsSettings.has(name)) {
                        defs = defs.with(name, value);
                    } else if (ClusterConfig.has(name)) {
                        c = c.with(name, value);
                    } else if (ConsumerTimeout.has(name)) {
                        ct = ct.with(name, value);
                    } else {
                        throw new IllegalStateException("setting " + name + " is listed but not parsed");
                    }
                }
            }
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(name + " must be a number, got " + value);
        }
        return new BrokerConfig(p, b, d, sync, segment, queueMemory, plain, anon, users, initial, frame, channels, idle, handshake, message, window,
            credit, unconfirmed, create, noHeaderDurable, version, n, port091, heartbeat, initial091, watermark,
            diskFree, loops, flow, a, t, l, metrics, m, tx, st, defs, c, ct, deadLetterRetry);
    }

    /** When the definitions' change logs are compacted. */
    public io.skiffmq.store.definitions.ChangeLog.Compaction definitionsCompaction() {
        return definitions.compaction();
    }

    /** The user SASL ANONYMOUS logs in as, or null when ANONYMOUS is off. */
    public String anonymousUser() {
        return NO_ANONYMOUS_LOGIN.equals(anonymousLoginUser) ? null : anonymousLoginUser;
    }

    /** MAJOR.MINOR.PATCH, maybe with a suffix: what the RabbitMQ clients parse (they refuse a connection otherwise). */
    private static String parseVersion(String name, String value) {
        if (!VERSION.matcher(value).matches()) {
            throw new IllegalArgumentException(name + " must be a version such as " + RABBITMQ_VERSION + ", got " + value);
        }
        return value;
    }

    private static boolean parseBoolean(String name, String value) {
        if (!value.equals("true") && !value.equals("false")) {
            throw new IllegalArgumentException(name + " must be true or false, got " + value);
        }
        return Boolean.parseBoolean(value);
    }
}
