package io.skiffmq.benchmarks;

import java.net.ServerSocket;
import java.nio.file.Path;
import java.util.Map;
import org.apache.activemq.artemis.core.config.Configuration;
import org.apache.activemq.artemis.core.config.impl.ConfigurationImpl;
import org.apache.activemq.artemis.core.server.JournalType;
import org.apache.activemq.artemis.core.server.embedded.EmbeddedActiveMQ;

/**
 * ActiveMQ Artemis, embedded, as the other broker of the side-by-side benchmarks: an AMQP acceptor on a loopback
 * port and a data directory of its own, run as a process of its own like SkiffMQ so both are measured alike. It
 * prints the same "listening for AMQP 1.0 on …:PORT " line SkiffMQ logs, which the harnesses wait for.
 *
 * <pre>
 * java -cp benchmarks/target/benchmarks.jar io.skiffmq.benchmarks.ArtemisBroker --port=0 --data-dir=D \
 *     [--persistence=true] [--sync=true]
 * </pre>
 *
 * Security is off (any SASL login, ANONYMOUS included); the journal is Artemis's NIO journal (no libaio here);
 * {@code --sync=false} stops it syncing writes, the counterpart of SkiffMQ's {@code sync-policy=os}.
 */
public final class ArtemisBroker {
    private ArtemisBroker() {
    }

    public static void main(String[] args) throws Exception {
        Map<String, String> options = CommandLine.parseOrExit("ArtemisBroker", Map.of("port", "0", "data-dir",
            "artemis-data", "persistence", "true", "sync", "true"), args);
        int port = Integer.parseInt(options.get("port"));
        if (port == 0) {
            try (ServerSocket free = new ServerSocket(0)) {
                port = free.getLocalPort();
            }
        }
        Path data = Path.of(options.get("data-dir"));
        boolean sync = Boolean.parseBoolean(options.get("sync"));
        Configuration config = new ConfigurationImpl()
            .setPersistenceEnabled(Boolean.parseBoolean(options.get("persistence")))
            .setSecurityEnabled(false)
            .setJournalType(JournalType.NIO)
            .setJournalSyncTransactional(sync)
            .setJournalSyncNonTransactional(sync)
            .setJournalDirectory(data.resolve("journal").toString())
            .setBindingsDirectory(data.resolve("bindings").toString())
            .setPagingDirectory(data.resolve("paging").toString())
            .setLargeMessagesDirectory(data.resolve("large-messages").toString())
            .addAcceptorConfiguration("amqp", "tcp://127.0.0.1:" + port + "?protocols=AMQP");
        EmbeddedActiveMQ server = new EmbeddedActiveMQ();
        server.setConfiguration(config);
        server.start();
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            try {
                server.stop();
            } catch (Exception e) {
                e.printStackTrace();
            }
        }, "artemis-shutdown"));
        System.out.println("listening for AMQP 1.0 on /127.0.0.1:" + port + " (Artemis " 
            + org.apache.activemq.artemis.utils.VersionLoader.getVersion().getFullVersion() + ")");
        Thread.currentThread().join();
    }
}
