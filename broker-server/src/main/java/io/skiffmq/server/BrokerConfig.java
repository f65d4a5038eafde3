package io.skiffmq.server;

import io.skiffmq.server.auth.AuthSettings;
import io.skiffmq.server.auth.UserStore;
import io.skiffmq.server.http.ManagementSettings;
import io.skiffmq.server.transport.TlsSettings;

import io.skiffmq.codec.amqp10.Amqp10FrameDecoder;
import io.skiffmq.store.Journal;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.file.Path;
import java.util.Map;

/**
 * Broker settings. Each has the default a fresh {@code bin/skiffmq} runs with and can be set on the command line
 * as {@code --name=value} or as a system property {@code skiffmq.name}:
 *
 * <table>
 *   <caption>Settings</caption>
 *   <tr><th>name</th><th>default</th><th>meaning</th></tr>
 *   <tr><td>port</td><td>5672</td><td>TCP port; 0 picks a free one</td></tr>
 *   <tr><td>bind</td><td>0.0.0.0</td><td>address to listen on</td></tr>
 *   <tr><td>data-dir</td><td>./data</td><td>where durable state lives</td></tr>
 *   <tr><td>sync-policy</td><td>sync</td><td>when a durable message is confirmed: {@code sync} once fsynced (survives
 *       power loss), {@code os} once in the OS page cache (survives a crash of the broker only)</td></tr>
 *   <tr><td>journal-segment-size</td><td>67108864</td><td>bytes of journal after which writing moves to a new
 *       segment; space comes back a whole segment at a time</td></tr>
 *   <tr><td>queue-memory-limit</td><td>16777216</td><td>bytes of waiting messages a queue keeps in memory (their
 *       bytes plus about 400 per message for its objects); beyond it, arrivals are paged to disk, transient ones
 *       too, with nothing in memory per message, and read back in order (docs/storage.md)</td></tr>
 *   <tr><td>allow-plain-amqp</td><td>false</td><td>accept {@code AMQP 0 1.0.0} without SASL (as user anonymous)</td></tr>
 *   <tr><td>anonymous-login-user</td><td>guest</td><td>SASL ANONYMOUS logs in as this user, subject to its
 *       restrictions (guest: loopback only), as in RabbitMQ 4; {@code none} stops offering ANONYMOUS</td></tr>
 *   <tr><td>users-file</td><td>none</td><td>extra users, {@code name:hash} lines (see {@link UserStore}), added to
 *       the durable definitions with all permissions on {@code /} on the first start only
 *       (docs/access-control.md)</td></tr>
 *   <tr><td>initial-max-frame-size</td><td>4096</td><td>frame limit before {@code open}</td></tr>
 *   <tr><td>max-frame-size</td><td>131072</td><td>largest frame we accept, offered in {@code open} (AMQP 1.0) and
 *       as frame-max in {@code connection.tune} (AMQP 0-9-1, at least 8192 there)</td></tr>
 *   <tr><td>channel-max</td><td>2047</td><td>highest channel number (AMQP 1.0 sessions, AMQP 0-9-1 channels)</td></tr>
 *   <tr><td>idle-timeout</td><td>60000</td><td>ms without a frame before we close; offered in {@code open}</td></tr>
 *   <tr><td>handshake-timeout</td><td>10000</td><td>ms from connect to {@code open}</td></tr>
 *   <tr><td>max-message-size</td><td>16777216</td><td>bytes; larger deliveries get amqp:link:message-size-exceeded</td></tr>
 *   <tr><td>session-window</td><td>2048</td><td>incoming-window each session grants</td></tr>
 *   <tr><td>publisher-credit</td><td>1000</td><td>link credit granted to a publisher at a time</td></tr>
 *   <tr><td>max-unconfirmed</td><td>5000</td><td>a publisher link gets no more credit while it has this many unconfirmed</td></tr>
 *   <tr><td>durable-if-no-header</td><td>true</td><td>a message without a header section is durable, as RabbitMQ
 *       decides; false follows the AMQP 1.0 default (3.2.1) and Artemis: such messages are transient</td></tr>
 *   <tr><td>auto-create-queues</td><td>true</td><td>bare names and {@code /queue/q} declare missing queues</td></tr>
 *   <tr><td>rabbitmq-version</td><td>4.0.0</td><td>the {@code version} property: the RabbitMQ feature level implemented</td></tr>
 *   <tr><td>node</td><td>skiffmq@host</td><td>the {@code node} property</td></tr>
 *   <tr><td>amqp091-port</td><td>none</td><td>a second port for AMQP 0-9-1 only (it is spoken on {@code port}
 *       too, told apart by the protocol header); 0 picks a free one</td></tr>
 *   <tr><td>heartbeat</td><td>60</td><td>AMQP 0-9-1 heartbeat in seconds offered in {@code connection.tune}; 0
 *       offers none</td></tr>
 *   <tr><td>memory-high-watermark</td><td>0.4</td><td>publishers are blocked while the heap after GC plus direct
 *       buffers is above this: a fraction of the maximum heap, or bytes with a unit ({@code 512MB}), see
 *       {@link MemoryWatermark}; 0 blocks them at once</td></tr>
 *   <tr><td>disk-free-limit</td><td>50MB</td><td>publishers are blocked while the data directory's disk has less
 *       free: bytes, or with a unit ({@code 50MB} = 50,000,000, {@code 1GiB}), see {@link ByteSize}; 0 never</td></tr>
 *   <tr><td>event-loops</td><td>available processors</td><td>worker event loops: connections and queues share them
 *       (docs/server.md, Threads); more loops than cores only adds handoffs between threads that take turns</td></tr>
 *   <tr><td>publisher-flow</td><td>true</td><td>a queue whose backlog passes half of {@code queue-memory-limit}
 *       while its consumers would drain it within two seconds holds its publishers back to their pace instead of
 *       paging ({@link io.skiffmq.core.queue.PublisherFlow}, docs/queues.md); false: only resource alarms hold
 *       publishers, and queues page</td></tr>
 *   <tr><td>auth-threads</td><td>cores / 2, in [2, 8]</td><td>threads that check logins, so that no event loop
 *       hashes a password (docs/security.md)</td></tr>
 *   <tr><td>auth-queue</td><td>1024</td><td>logins that may wait for an authentication thread; beyond, a login is
 *       refused at once as busy (0-9-1: 403, AMQP 1.0: sasl-outcome sys-temp)</td></tr>
 *   <tr><td>login-failure-rate</td><td>2</td><td>failed logins per second a source address earns back</td></tr>
 *   <tr><td>login-failure-burst</td><td>20</td><td>failed logins a source address may have in a row; past them its
 *       logins are refused unchecked until it earns some back; 0: no limit</td></tr>
 *   <tr><td>external-user-from</td><td>cn</td><td>SASL EXTERNAL's user: the client certificate subject's {@code cn},
 *       or the whole subject {@code dn} (RFC 2253)</td></tr>
 *   <tr><td>loopback-users</td><td>guest</td><td>users who may log in from loopback addresses only (RabbitMQ's
 *       {@code loopback_users}), comma-separated; {@code none} lets everyone in from anywhere</td></tr>
 *   <tr><td>amqps-port</td><td>none</td><td>a TLS port for both protocols (RabbitMQ's is 5671); 0 picks a free
 *       one</td></tr>
 *   <tr><td>tls-cert-file</td><td>none</td><td>the server's certificate chain, PEM (needed with amqps-port)</td></tr>
 *   <tr><td>tls-key-file</td><td>none</td><td>its private key, PEM (needed with amqps-port)</td></tr>
 *   <tr><td>tls-key-password</td><td>none</td><td>the key's password when it is encrypted</td></tr>
 *   <tr><td>tls-ca-file</td><td>none</td><td>CA bundle, PEM, client certificates are checked against</td></tr>
 *   <tr><td>tls-protocols</td><td>TLSv1.3,TLSv1.2</td><td>protocols offered</td></tr>
 *   <tr><td>tls-ciphers</td><td>the provider's</td><td>cipher suites offered, comma-separated</td></tr>
 *   <tr><td>tls-verify</td><td>none</td><td>client certificates: {@code none} (not asked for), {@code optional}
 *       (checked when given), {@code required} (the handshake fails without a trusted one)</td></tr>
 *   <tr><td>tls-provider</td><td>auto</td><td>{@code auto}: OpenSSL when it loads, else the JDK's; {@code openssl};
 *       {@code jdk}</td></tr>
 *   <tr><td>management-port</td><td>15672</td><td>the RabbitMQ-compatible HTTP API (docs/http-api.md); 0 picks a
 *       free one; {@code none} switches it off</td></tr>
 * </table>
 */
public record BrokerConfig(int port, String bindAddress, Path dataDir, Journal.SyncPolicy syncPolicy,
        long journalSegmentSize, long queueMemoryLimit, boolean allowPlainAmqp, String anonymousLoginUser,
        Path usersFile, int initialMaxFrameSize, int maxFrameSize, int channelMax, int idleTimeoutMillis,
        int handshakeTimeoutMillis, long maxMessageSize, int sessionWindow, int publisherCredit, int maxUnconfirmed,
        boolean autoCreateQueues, boolean durableIfNoHeader, String rabbitmqVersion, String node, int amqp091Port,
        int heartbeatSeconds, MemoryWatermark memoryHighWatermark, long diskFreeLimit, int eventLoops,
        boolean publisherFlow, AuthSettings auth, TlsSettings tls, ManagementSettings management) {

    public static final int DEFAULT_PORT = 5672;
    /** SkiffMQ's own version, told to clients beside {@link #rabbitmqVersion} ({@code skiffmq-version}). */
    public static final String SKIFFMQ_VERSION = "0.1.0";
    /** The {@code anonymous-login-user} that switches SASL ANONYMOUS off, as RabbitMQ's {@code none}. */
    public static final String NO_ANONYMOUS_LOGIN = "none";
    /** An optional port that is not set. */
    public static final int NO_PORT = -1;
    /** RabbitMQ's {@code disk_free_limit} default, 50MB. */
    public static final long DEFAULT_DISK_FREE_LIMIT = 50_000_000;

    public BrokerConfig {
        check(port >= 0 && port <= 65535, "port must be in [0, 65535]");
        check(anonymousLoginUser != null && !anonymousLoginUser.isEmpty(), "anonymous-login-user must not be empty");
        // a record's ordinal in its segment has 32 bits: 64 GiB of records of at least 32 bytes stays well inside
        check(journalSegmentSize >= 1 << 16 && journalSegmentSize <= 1L << 36,
            "journal-segment-size must be in [65536, 68719476736]");
        check(queueMemoryLimit >= 0, "queue-memory-limit must be >= 0");
        check(initialMaxFrameSize >= Amqp10FrameDecoder.MIN_MAX_FRAME_SIZE, "initial-max-frame-size must be >= 512");
        check(maxFrameSize >= Amqp10FrameDecoder.MIN_MAX_FRAME_SIZE, "max-frame-size must be >= 512");
        check(channelMax >= 0 && channelMax <= 65535, "channel-max must be in [0, 65535]");
        check(idleTimeoutMillis >= 0, "idle-timeout must be >= 0");
        check(handshakeTimeoutMillis > 0, "handshake-timeout must be > 0");
        check(maxMessageSize > 0, "max-message-size must be > 0");
        check(sessionWindow > 0, "session-window must be > 0");
        check(publisherCredit > 0, "publisher-credit must be > 0");
        check(maxUnconfirmed > 0, "max-unconfirmed must be > 0");
        check(amqp091Port >= NO_PORT && amqp091Port <= 65535, "amqp091-port must be in [0, 65535] or none");
        check(heartbeatSeconds >= 0 && heartbeatSeconds <= 65535, "heartbeat must be in [0, 65535]");
        check(memoryHighWatermark != null, "memory-high-watermark must be set");
        check(diskFreeLimit >= 0, "disk-free-limit must be >= 0");
        check(eventLoops > 0, "event-loops must be > 0");
        check(auth != null && tls != null && management != null, "auth, tls and management settings must be set");
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
            5000, true, true, "4.0.0", "skiffmq@" + host, NO_PORT, 60, MemoryWatermark.DEFAULT,
            DEFAULT_DISK_FREE_LIMIT, Runtime.getRuntime().availableProcessors(), true, AuthSettings.defaults(),
            TlsSettings.defaults(), ManagementSettings.defaults());
    }

    /** Defaults, overridden by system properties {@code skiffmq.*}, then by {@code --name=value} arguments. */
    public static BrokerConfig from(String[] args, Map<Object, Object> systemProperties) {
        BrokerConfig config = defaults();
        for (Map.Entry<Object, Object> e : systemProperties.entrySet()) {
            String key = e.getKey().toString();
            if (key.startsWith("skiffmq.")) {
                config = config.with(key.substring("skiffmq.".length()), e.getValue().toString());
            }
        }
        for (String arg : args) {
            int eq = arg.indexOf('=');
            if (!arg.startsWith("--") || eq < 0) {
                throw new IllegalArgumentException("expected --name=value, got " + arg);
            }
            config = config.with(arg.substring(2, eq), arg.substring(eq + 1));
        }
        return config;
    }

    /** This configuration with one setting changed, by its name in the table above. */
    public BrokerConfig with(String name, String value) {
        int p = port;
        String b = bindAddress;
        Path d = dataDir;
        Journal.SyncPolicy sync = syncPolicy;
        long segment = journalSegmentSize;
        long queueMemory = queueMemoryLimit;
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
        MemoryWatermark watermark = memoryHighWatermark;
        long diskFree = diskFreeLimit;
        int loops = eventLoops;
        boolean flow = publisherFlow;
        AuthSettings a = auth;
        TlsSettings t = tls;
        ManagementSettings m = management;
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
                case "allow-plain-amqp" -> plain = parseBoolean(name, value);
                case "anonymous-login-user" -> anon = value;
                case "users-file" -> users = Path.of(value);
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
                case "rabbitmq-version" -> version = value;
                case "node" -> n = value;
                case "amqp091-port" -> port091 = value.equals("none") ? NO_PORT : Integer.parseInt(value);
                case "heartbeat" -> heartbeat = Integer.parseInt(value);
                case "memory-high-watermark" -> watermark = MemoryWatermark.parse(value);
                case "disk-free-limit" -> diskFree = ByteSize.parse(name, value);
                case "event-loops" -> loops = Integer.parseInt(value);
                case "publisher-flow" -> flow = parseBoolean(name, value);
                default -> {
                    if (AuthSettings.has(name)) {
                        a = a.with(name, value);
                    } else if (TlsSettings.has(name)) {
                        t = t.with(name, value);
                    } else if (ManagementSettings.has(name)) {
                        m = m.with(name, value);
                    } else {
                        throw new IllegalArgumentException("unknown setting " + name);
                    }
                }
            }
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(name + " must be a number, got " + value);
        }
        return new BrokerConfig(p, b, d, sync, segment, queueMemory, plain, anon, users, initial, frame, channels, idle, handshake, message, window,
            credit, unconfirmed, create, noHeaderDurable, version, n, port091, heartbeat, watermark, diskFree, loops,
            flow, a, t, m);
    }

    /** The user SASL ANONYMOUS logs in as, or null when ANONYMOUS is off. */
    public String anonymousUser() {
        return NO_ANONYMOUS_LOGIN.equals(anonymousLoginUser) ? null : anonymousLoginUser;
    }

    private static boolean parseBoolean(String name, String value) {
        if (!value.equals("true") && !value.equals("false")) {
            throw new IllegalArgumentException(name + " must be true or false, got " + value);
        }
        return Boolean.parseBoolean(value);
    }
}
