package io.skiffmq.server;

import com.rabbitmq.client.ConnectionFactory;
import io.skiffmq.core.time.BrokerClock;
import java.io.IOException;

/**
 * The broker an AMQP 0-9-1 end-to-end test talks to: a SkiffMQ broker started on an ephemeral loopback port, or,
 * when the system property {@code skiffmq.test.amqp091} names one as {@code host:port}, an external broker (a real
 * RabbitMQ, guest/guest on vhost {@code /}), so the tests themselves can be checked against what RabbitMQ does.
 * Tests that look inside the broker ({@link #broker()}) are skipped against an external one.
 */
final class Amqp091Target implements AutoCloseable {
    private final RunningBroker broker;
    private final String host;
    private final int port;

    private Amqp091Target(RunningBroker broker, String host, int port) {
        this.broker = broker;
        this.host = host;
        this.port = port;
    }

    /** @param settings broker settings ({@code name=value}), ignored by an external broker */
    static Amqp091Target start(String... settings) throws IOException, InterruptedException {
        return start(BrokerClock.SYSTEM, settings);
    }

    /**
     * @param clock what a SkiffMQ broker's TTLs and queue expiry run on (a {@link io.skiffmq.core.time.ManualClock}
     *        for tests that move time by hand); an external broker keeps its own
     */
    static Amqp091Target start(BrokerClock clock, String... settings) throws IOException, InterruptedException {
        String external = System.getProperty("skiffmq.test.amqp091");
        if (external != null && !external.isBlank()) {
            int colon = external.lastIndexOf(':');
            return new Amqp091Target(null, external.substring(0, colon), Integer.parseInt(external.substring(colon + 1)));
        }
        RunningBroker running = RunningBroker.start(clock, settings);
        return new Amqp091Target(running, "127.0.0.1", running.port());
    }

    boolean external() {
        return broker == null;
    }

    /** The SkiffMQ broker; tests that need it assume {@code !external()} first. */
    RunningBroker broker() {
        if (broker == null) {
            throw new IllegalStateException("an external broker has no inside to look at");
        }
        return broker;
    }

    String host() {
        return host;
    }

    int port() {
        return port;
    }

    String uri() {
        return "amqp://guest:guest@" + host + ":" + port + "/%2F";
    }

    /** A RabbitMQ Java client factory for this broker: guest/guest, vhost {@code /}, no automatic recovery. */
    ConnectionFactory factory() {
        ConnectionFactory factory = new ConnectionFactory();
        factory.setHost(host);
        factory.setPort(port);
        factory.setUsername("guest");
        factory.setPassword("guest");
        factory.setVirtualHost("/");
        factory.setAutomaticRecoveryEnabled(false);
        factory.setConnectionTimeout(10_000);
        factory.setHandshakeTimeout(10_000);
        return factory;
    }

    @Override
    public void close() {
        if (broker != null) {
            broker.close();
        }
    }
}
