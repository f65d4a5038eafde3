package io.skiffmq.server;

import io.skiffmq.server.transport.AmqpListener;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Files;

/** The broker's entry point: reads the configuration, prepares the data directory and starts the listener. */
public final class SkiffMq {

    private SkiffMq() {
    }

    public static void main(String[] args) throws IOException, InterruptedException {
        // before anything logs: keep logging alive until the shutdown hook below is done
        System.setProperty("java.util.logging.manager", BrokerLogManager.class.getName());
        System.Logger log = System.getLogger(SkiffMq.class.getName());
        BrokerConfig config;
        try {
            config = BrokerConfig.from(args, System.getProperties());
        } catch (IllegalArgumentException e) {
            System.err.println("skiffmq: " + e.getMessage());
            System.exit(2);
            return;
        }
        Files.createDirectories(config.dataDir());
        AmqpListener listener;
        try {
            // recovers every virtual host's durable state before the port opens
            listener = new AmqpListener(config);
        } catch (IllegalStateException e) {
            System.err.println("skiffmq: " + e.getMessage());
            System.exit(1);
            return;
        }
        InetSocketAddress address = listener.start();
        // SIGTERM and SIGINT: stop accepting, close connections, let the event loops finish
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            listener.close();
            log.log(System.Logger.Level.INFO, "SkiffMQ stopped");
            BrokerLogManager.resetAtLast();
        }, "skiffmq-shutdown"));
        log.log(System.Logger.Level.INFO, "SkiffMQ started on {0}, data in {1}", address,
            config.dataDir().toAbsolutePath());
        Thread.currentThread().join();
    }
}
