package io.skiffmq.server;

import io.skiffmq.server.config.BrokerConfig;
import io.skiffmq.server.connection.ConnectionEnds;
import io.skiffmq.server.connection.PreAuthLimit;
import io.skiffmq.server.transport.AmqpListener;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.stream.Stream;

/**
 * A real broker on an ephemeral loopback port, for end-to-end tests. Close it when done: its data directory (a
 * fresh temporary one unless a setting names one) is deleted then.
 */
final class RunningBroker implements AutoCloseable {
    private final AmqpListener listener;
    private final int port;
    private final Path temporaryDataDir;

    private RunningBroker(AmqpListener listener, int port, Path temporaryDataDir) {
        this.listener = listener;
        this.port = port;
        this.temporaryDataDir = temporaryDataDir;
    }

    static RunningBroker start(String... settings) throws IOException, InterruptedException {
        return start(io.skiffmq.core.time.BrokerClock.SYSTEM, settings);
    }

    /**
     * A broker whose TTLs and queue expiry run on {@code clock}: a test moves a
     * {@link io.skiffmq.core.time.ManualClock} on instead of waiting.
     */
    static RunningBroker start(io.skiffmq.core.time.BrokerClock clock, String... settings)
            throws IOException, InterruptedException {
        Path temporary = Files.createTempDirectory("skiffmq-test");
        BrokerConfig config = BrokerConfig.defaults().with("port", "0").with("bind", "127.0.0.1")
            .with("data-dir", temporary.toString()).with("prometheus-port", "0")
            .with("management-port", "0").with("stream-port", "0");
        for (String setting : settings) {
            int eq = setting.indexOf('=');
            config = config.with(setting.substring(0, eq), setting.substring(eq + 1));
        }
        if (!config.dataDir().equals(temporary)) {
            delete(temporary);
            temporary = null;
        }
        AmqpListener listener = new AmqpListener(config, clock);
        InetSocketAddress address = listener.start();
        return new RunningBroker(listener, address.getPort(), temporary);
    }

    int port() {
        return port;
    }

    /** The HTTP API's port ({@code management-port}, ephemeral here); fails when it is off. */
    int managementPort() {
        return java.util.Objects.requireNonNull(listener.managementAddress(), "management-port is none").getPort();
    }

    /** The port that speaks AMQP 0-9-1 only ({@code amqp091-port}); fails when none was asked for. */
    int amqp091Port() {
        return java.util.Objects.requireNonNull(listener.amqp091Address(), "no amqp091-port").getPort();
    }

    /** The Prometheus port ({@code prometheus-port}); fails when it is none. */
    int metricsPort() {
        return java.util.Objects.requireNonNull(listener.metricsAddress(), "no prometheus-port").getPort();
    }

    /** The AMQPS port ({@code amqps-port}); fails when none was asked for. */
    int amqpsPort() {
        return java.util.Objects.requireNonNull(listener.amqpsAddress(), "no amqps-port").getPort();
    }

    /** The stream protocol's port ({@code stream-port}, ephemeral here); fails when it is none. */
    int streamPort() {
        return java.util.Objects.requireNonNull(listener.streamAddress(), "stream-port is none").getPort();
    }

    /** The stream protocol's TLS port ({@code stream-tls-port}); fails when none was asked for. */
    int streamTlsPort() {
        return java.util.Objects.requireNonNull(listener.streamTlsAddress(), "no stream-tls-port").getPort();
    }

    /** What the stream protocol's connections share. */
    io.skiffmq.server.stream.StreamServer streams() {
        return listener.streams();
    }

    /** The broker itself. */
    Broker broker() {
        return listener.broker();
    }

    /** What checks the broker's logins (its count of credentials checked). */
    io.skiffmq.server.auth.SaslAuthenticator authenticator() {
        return listener.authenticator();
    }

    /** The broker's virtual host, to set up state a test needs without a client. */
    io.skiffmq.core.VirtualHost vhost(String name) {
        return listener.broker().vhost(name);
    }

    /** How connections ended, counted and logged. */
    ConnectionEnds ends() {
        return listener.broker().ends();
    }

    /** Administration: virtual hosts, users, permissions, limits. */
    Admin admin() {
        return listener.broker().admin();
    }

    /** Who may do what: the definitions in force. */
    io.skiffmq.server.authz.AccessControl accessControl() {
        return listener.broker().accessControl();
    }

    /** Where the broker keeps its state. */
    Path dataDir() {
        return listener.broker().config().dataDir();
    }

    /** Enters the stopping state, as a graceful shutdown does first ({@code Broker.beginStopping}). */
    void beginStopping() {
        listener.broker().beginStopping();
    }

    /** Takes over the broker's resource readings: the test raises and clears the alarms from now on. */
    ForcedAlarms forceAlarms() {
        return new ForcedAlarms(listener.broker().resourceMonitor());
    }

    /** The count of connections not yet open, and of those refused over {@code max-preauth-connections}. */
    PreAuthLimit preAuth() {
        return listener.broker().preAuth();
    }

    /** The broker's resource alarms. */
    io.skiffmq.core.alarm.ResourceAlarms alarms() {
        return listener.broker().alarms();
    }

    String amqpUri() {
        return "amqp://127.0.0.1:" + port;
    }


    @Override
    public void close() {
        listener.close();
        if (temporaryDataDir != null) {
            try {
                delete(temporaryDataDir);
            } catch (IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        }
    }

    static void delete(Path directory) throws IOException {
        try (Stream<Path> walk = Files.walk(directory)) {
            for (Path p : walk.sorted(Comparator.reverseOrder()).toList()) {
                Files.delete(p);
            }
        }
    }
}
