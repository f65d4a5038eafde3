package io.skiffmq.server;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Files;

/** The broker's entry point: reads the configuration, prepares the data directory and starts the listener. */
public final class SkiffMq {
    private static final System.Logger LOG = System.getLogger(SkiffMq.class.getName());

    private SkiffMq() {
    }

    public static void main(String[] args) throws IOException, InterruptedException {
        BrokerConfig config;
        try {
            config = BrokerConfig.from(args, System.getProperties());
        } catch (IllegalArgumentException e) {
            System.err.println("skiffmq: " + e.getMessage());
            System.exit(2);
            return;
        }
        Files.createDirectories(config.dataDir());
        AmqpListener listener = new AmqpListener(config);
        InetSocketAddress address = listener.start();
        // SIGTERM and SIGINT: stop accepting, close connections, let the event loops finish
        Runtime.getRuntime().addShutdownHook(new Thread(listener::close, "skiffmq-shutdown"));
        LOG.log(System.Logger.Level.INFO, "SkiffMQ started on {0}, data in {1}", address,
            config.dataDir().toAbsolutePath());
        Thread.currentThread().join();
    }
}
