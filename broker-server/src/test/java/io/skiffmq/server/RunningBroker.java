package io.skiffmq.server;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;

/** A real broker on an ephemeral loopback port, for end-to-end tests. Close it when done. */
final class RunningBroker implements AutoCloseable {
    private final AmqpListener listener;
    private final int port;

    private RunningBroker(AmqpListener listener, int port) {
        this.listener = listener;
        this.port = port;
    }

    static RunningBroker start(String... settings) throws IOException, InterruptedException {
        BrokerConfig config = BrokerConfig.defaults().with("port", "0").with("bind", "127.0.0.1")
            .with("data-dir", Files.createTempDirectory("skiffmq-test").toString());
        for (String setting : settings) {
            int eq = setting.indexOf('=');
            config = config.with(setting.substring(0, eq), setting.substring(eq + 1));
        }
        AmqpListener listener = new AmqpListener(config);
        InetSocketAddress address = listener.start();
        return new RunningBroker(listener, address.getPort());
    }

    int port() {
        return port;
    }

    /** The broker's virtual host, to set up state a test needs without a client. */
    io.skiffmq.core.VirtualHost vhost(String name) {
        return listener.broker().vhost(name);
    }

    String amqpUri() {
        return "amqp://127.0.0.1:" + port;
    }


    @Override
    public void close() {
        listener.close();
    }
}
