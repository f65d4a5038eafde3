package io.skiffmq.server;

import io.skiffmq.server.config.BrokerConfig;
import io.skiffmq.server.config.CommandLineFlags;
import io.skiffmq.server.config.ConfigLoader;
import io.skiffmq.server.logging.LogSetup;
import io.skiffmq.server.transport.AmqpListener;

import java.io.IOException;
import java.net.InetSocketAddress;

/**
 * The broker's entry point: reads the configuration ({@link ConfigLoader}), sets logging up ({@link LogSetup}),
 * prepares the data directory and starts the listener. On SIGTERM or SIGINT its shutdown hook stops the broker
 * gracefully ({@link AmqpListener#close}: the node shown as stopping by the HTTP API, no new connections, every
 * connection closed as forced, the journal flushed and closed) before the JVM exits.
 */
public final class SkiffMq {
    private static final String COMMON_POOL_PARALLELISM = "java.util.concurrent.ForkJoinPool.common.parallelism";

    static {
        // On one or two CPUs the common pool's parallelism is 1, and CompletableFuture's async steps without an
        // executor then start a thread each; Ratis' followers chain every append that way. Set before first use.
        if (System.getProperty(COMMON_POOL_PARALLELISM) == null && Runtime.getRuntime().availableProcessors() <= 2) {
            System.setProperty(COMMON_POOL_PARALLELISM, "2");
        }
    }

    private SkiffMq() {
    }

    public static void main(String[] args) throws IOException, InterruptedException {
        ConfigLoader.Loaded loaded;
        try {
            loaded = ConfigLoader.load(args, System.getenv(), System.getProperties(), ConfigLoader.DEFAULT_FILES);
        } catch (IllegalArgumentException e) {
            System.err.println("skiffmq: " + e.getMessage());
            System.err.println("skiffmq: --help lists the settings");
            System.exit(2);
            return;
        }
        if (loaded.flags().help()) {
            System.out.print(CommandLineFlags.usage());
            return;
        }
        if (loaded.flags().version()) {
            System.out.println("SkiffMQ " + BrokerConfig.SKIFFMQ_VERSION);
            return;
        }
        BrokerConfig config = loaded.config();
        LogSetup.apply(config.log());
        System.Logger log = System.getLogger(SkiffMq.class.getName());
        if (loaded.configFile() != null) {
            log.log(System.Logger.Level.INFO, "settings from {0}", loaded.configFile().toAbsolutePath());
        }
        AmqpListener listener;
        try {
            // prepares the data directory (DataDirectory: an unusable one is said in one line, here) and recovers
            // every virtual host's durable state before the port opens
            listener = new AmqpListener(config);
        } catch (IllegalStateException e) {
            System.err.println("skiffmq: " + e.getMessage());
            System.exit(1);
            return;
        }
        // SIGTERM and SIGINT: stop accepting, close connections as forced, flush and close the journal. Hooked
        // before the ports open: a signal while the later listeners (metrics, HTTP) still bind waits for them
        // (start and close are serialised), then closes all
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            log.log(System.Logger.Level.INFO, "SkiffMQ stopping");
            listener.close();
            log.log(System.Logger.Level.INFO, "SkiffMQ stopped");
            LogSetup.stop(); // the lines still queued for the console
        }, "skiffmq-shutdown"));
        InetSocketAddress address;
        try {
            address = listener.start();
        } catch (IllegalStateException e) {
            // a port that cannot be bound (PortBinding) or a listener that cannot start: one line, and the
            // shutdown hook releases what did bind
            System.err.println("skiffmq: " + e.getMessage());
            System.exit(1);
            return;
        }
        log.log(System.Logger.Level.INFO, "SkiffMQ started on {0}, data in {1}", address,
            config.dataDir().toAbsolutePath());
        Thread.currentThread().join();
    }
}
