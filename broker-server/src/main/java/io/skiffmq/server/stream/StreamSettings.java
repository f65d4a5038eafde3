package io.skiffmq.server.stream;

import io.skiffmq.codec.stream.StreamFrameDecoder;
import io.skiffmq.server.config.Setting;
import java.util.List;

/**
 * The stream protocol's settings, RabbitMQ's {@code rabbitmq_stream} application environment under our names: its
 * ports (5552, and a TLS one with the {@code tls-*} certificates), what {@code open} and {@code metadata} advertise,
 * what {@code tune} proposes, the frame limit before {@code open}, and the connection's publish flow control.
 * Listed in {@link #SETTINGS} (joined into {@code Settings.ALL}). Immutable.
 *
 * @param port {@code stream-port}; {@link #NO_PORT} for no listener, 0 picks a free one
 * @param tlsPort {@code stream-tls-port}; {@link #NO_PORT} (the default) for none
 * @param advertisedHost {@code stream-advertised-host}, RabbitMQ's {@code advertised_host}; null: the address the
 *        client connected to
 * @param advertisedPort {@code stream-advertised-port}; {@link #NO_PORT}: the port the client connected to
 * @param advertisedTlsHost {@code stream-advertised-tls-host} (RabbitMQ's {@code advertised_tls_host}); null: as
 *        {@code stream-advertised-host}
 * @param advertisedTlsPort {@code stream-advertised-tls-port}; {@link #NO_PORT}: the port the client connected to
 * @param frameMax {@code stream-frame-max}: proposed in {@code tune}; 0 for no limit
 * @param heartbeatSeconds {@code stream-heartbeat}: proposed in {@code tune}; 0 for none
 * @param initialFrameMax {@code stream-initial-frame-max}: the largest frame accepted before {@code open}
 * @param initialCredits {@code stream-initial-credits}: unconfirmed messages at which reading stops
 * @param creditsRequiredForUnblocking {@code stream-credits-required-for-unblocking}: reading goes on once the
 *        unconfirmed messages are this many below {@code initialCredits}
 * @param maxSubEntryBatchBytes {@code stream-max-sub-entry-batch-size}: the largest uncompressed size a sub-entry
 *        batch may declare
 */
public record StreamSettings(int port, int tlsPort, String advertisedHost, int advertisedPort,
        String advertisedTlsHost, int advertisedTlsPort, long frameMax, int heartbeatSeconds, int initialFrameMax,
        int initialCredits, int creditsRequiredForUnblocking, long maxSubEntryBatchBytes) {
    public static final int NO_PORT = Setting.NO_PORT;
    /** RabbitMQ's stream port. */
    public static final int DEFAULT_PORT = 5552;
    /** RabbitMQ's stream TLS port, the one to set when enabling it. */
    public static final int DEFAULT_TLS_PORT = 5551;
    /** RabbitMQ's {@code initial_credits}: 50,000 unconfirmed messages block a connection. */
    public static final int DEFAULT_INITIAL_CREDITS = 50_000;
    /** RabbitMQ's {@code credits_required_for_unblocking}. */
    public static final int DEFAULT_CREDITS_REQUIRED_FOR_UNBLOCKING = 12_500;
    /** RabbitMQ's {@code max_uncompressed_sub_entry_batch_size}, 64 MiB. */
    public static final long DEFAULT_MAX_SUB_ENTRY_BATCH_BYTES = 64L << 20;

    public StreamSettings {
        Setting.checkPort("stream-port", port);
        Setting.checkPort("stream-tls-port", tlsPort);
        Setting.checkPort("stream-advertised-port", advertisedPort);
        Setting.checkPort("stream-advertised-tls-port", advertisedTlsPort);
        check(frameMax == 0 || frameMax >= StreamFrameDecoder.DEFAULT_INITIAL_FRAME_MAX && frameMax <= 0xffff_ffffL,
            "stream-frame-max must be 0 or in [8192, 4294967295]");
        check(heartbeatSeconds >= 0, "stream-heartbeat must be >= 0");
        check(initialFrameMax >= 1024, "stream-initial-frame-max must be >= 1024");
        check(initialCredits > 0, "stream-initial-credits must be > 0");
        // not checked against initialCredits, so the two may be set in any order (PublishFlow caps it)
        check(creditsRequiredForUnblocking >= 0, "stream-credits-required-for-unblocking must be >= 0");
        check(maxSubEntryBatchBytes > 0, "stream-max-sub-entry-batch-size must be > 0");
    }

    private static void check(boolean ok, String message) {
        if (!ok) {
            throw new IllegalArgumentException(message);
        }
    }

    public static StreamSettings defaults() {
        return new StreamSettings(DEFAULT_PORT, NO_PORT, null, NO_PORT, null, NO_PORT,
            StreamFrameDecoder.DEFAULT_FRAME_MAX, 60, StreamFrameDecoder.DEFAULT_INITIAL_FRAME_MAX,
            DEFAULT_INITIAL_CREDITS, DEFAULT_CREDITS_REQUIRED_FOR_UNBLOCKING, DEFAULT_MAX_SUB_ENTRY_BATCH_BYTES);
    }

    public boolean enabled() {
        return port != NO_PORT;
    }

    public boolean tlsEnabled() {
        return tlsPort != NO_PORT;
    }

    /** These settings' names, defaults and meanings (joined into {@code Settings.ALL}). */
    public static final List<Setting> SETTINGS = List.of(
        Setting.of("stream-port", "int|none", "5552", "TCP port for RabbitMQ's stream protocol"
            + " (`docs/streams.md`); 0 picks a free one; `none` turns it off"),
        Setting.of("stream-tls-port", "int|none", "none", "a TLS port for the stream protocol (RabbitMQ's is"
            + " 5551), with the `tls-*` settings of `amqps-port`; 0 picks a free one"),
        Setting.described("stream-advertised-host", "host", "the address the client connected to", "the host"
            + " `open` and `metadata` tell stream clients to connect to (RabbitMQ's `advertised_host`)"),
        Setting.described("stream-advertised-port", "int", "the port the client connected to", "the port `open`"
            + " and `metadata` advertise (RabbitMQ's `advertised_port`)"),
        Setting.described("stream-advertised-tls-host", "host", "`stream-advertised-host`",
            "the host advertised to stream clients on the TLS port"),
        Setting.described("stream-advertised-tls-port", "int", "the port the client connected to",
            "the port advertised to stream clients on the TLS port"),
        Setting.of("stream-frame-max", "bytes", "1048576", "the stream protocol's frame-max proposed in `tune`"
            + " (0: no limit)"),
        Setting.of("stream-heartbeat", "seconds", "60", "the stream protocol's heartbeat proposed in `tune`"
            + " (0: none)"),
        Setting.of("stream-initial-frame-max", "bytes", "8192", "the largest stream protocol frame accepted"
            + " before `open` (RabbitMQ's `initial_frame_max`); a larger one closes the socket"),
        Setting.of("stream-initial-credits", "int", "50000", "unconfirmed messages at which a stream connection"
            + " is no longer read (RabbitMQ's `initial_credits`)"),
        Setting.of("stream-credits-required-for-unblocking", "int", "12500", "reading goes on once the"
            + " unconfirmed messages are this many below `stream-initial-credits` (at least 1 below)"),
        Setting.of("stream-max-sub-entry-batch-size", "bytes", "67108864", "the largest uncompressed size a"
            + " published sub-entry batch may declare; a larger one is refused (0x11)"));

    /** True when {@code name} is one of these settings. */
    public static boolean has(String name) {
        return SETTINGS.stream().anyMatch(s -> s.name().equals(name));
    }

    /**
     * These settings with one changed.
     *
     * @throws NumberFormatException for a value that is not a number
     */
    public StreamSettings with(String name, String value) {
        int p = port;
        int tls = tlsPort;
        String host = advertisedHost;
        int adPort = advertisedPort;
        String tlsHost = advertisedTlsHost;
        int adTlsPort = advertisedTlsPort;
        long frame = frameMax;
        int heartbeat = heartbeatSeconds;
        int initialFrame = initialFrameMax;
        int credits = initialCredits;
        int unblocking = creditsRequiredForUnblocking;
        long subEntry = maxSubEntryBatchBytes;
        switch (name) {
            case "stream-port" -> p = Setting.port(name, value);
            case "stream-tls-port" -> tls = Setting.port(name, value);
            case "stream-advertised-host" -> host = value.isEmpty() || value.equals("none") ? null : value;
            case "stream-advertised-port" -> adPort = Setting.port(name, value);
            case "stream-advertised-tls-host" -> tlsHost = value.isEmpty() || value.equals("none") ? null : value;
            case "stream-advertised-tls-port" -> adTlsPort = Setting.port(name, value);
            case "stream-frame-max" -> frame = Long.parseLong(value);
            case "stream-heartbeat" -> heartbeat = Integer.parseInt(value);
            case "stream-initial-frame-max" -> initialFrame = Integer.parseInt(value);
            case "stream-initial-credits" -> credits = Integer.parseInt(value);
            case "stream-credits-required-for-unblocking" -> unblocking = Integer.parseInt(value);
            case "stream-max-sub-entry-batch-size" -> subEntry = Long.parseLong(value);
            default -> throw new IllegalArgumentException("unknown setting " + name);
        }
        return new StreamSettings(p, tls, host, adPort, tlsHost, adTlsPort, frame, heartbeat, initialFrame, credits,
            unblocking, subEntry);
    }
}
