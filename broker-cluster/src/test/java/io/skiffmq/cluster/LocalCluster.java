package io.skiffmq.cluster;

import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.UnaryOperator;

/**
 * Three (or more) cluster nodes in this JVM on free loopback ports, each with its own directory and applier. A node
 * can be stopped and started again on the same directory and port. Used by one test thread.
 */
final class LocalCluster implements AutoCloseable {
    /**
     * Shorter than the default (1000 ms), as the broker's cluster test harnesses have it: the cases wait on many
     * elections, and what they check does not depend on how long one takes. A case can set its own in the tuning.
     */
    static final Duration ELECTION_TIMEOUT = Duration.ofMillis(400);
    final List<NodeAddress> addresses = new ArrayList<>();
    final ClusterNode[] nodes;
    final RecordingApplier[] appliers;
    private final Path dir;
    private final ClusterSecret secret;
    private final UnaryOperator<ClusterSettings> tuning;

    LocalCluster(Path dir, int size, ClusterSecret secret, UnaryOperator<ClusterSettings> tuning) throws IOException {
        this.dir = dir;
        this.secret = secret;
        this.tuning = tuning;
        this.nodes = new ClusterNode[size];
        this.appliers = new RecordingApplier[size];
        for (int i = 0; i < size; i++) {
            addresses.add(new NodeAddress("n" + i + "@127.0.0.1", "127.0.0.1", freePort()));
        }
    }

    /**
     * A free port whose queue port ({@link ClusterSettings#QUEUE_PORT_OFFSET} above it) is free too. Picked below the
     * ephemeral range, as a port near one the system hands out is often taken by its connections.
     */
    static int freePort() throws IOException {
        java.util.concurrent.ThreadLocalRandom random = java.util.concurrent.ThreadLocalRandom.current();
        for (int attempt = 0; ; attempt++) {
            int port = random.nextInt(20_000, 30_000);
            try (ServerSocket first = new ServerSocket(port);
                    ServerSocket queues = new ServerSocket(port + ClusterSettings.QUEUE_PORT_OFFSET)) {
                return port;
            } catch (IOException e) {
                if (attempt > 100) {
                    throw e;
                }
            }
        }
    }

    /** The seeds are the first three nodes (a fourth, if any, joins later). */
    ClusterSettings settings(int i, ClusterSecret withSecret) {
        List<NodeAddress> seeds = addresses.subList(0, Math.min(3, addresses.size()));
        return tuning.apply(ClusterSettings.of(addresses.get(i), seeds, "127.0.0.1", dir.resolve("n" + i),
            withSecret).withAppendTimeout(Duration.ofSeconds(5)).withElectionTimeout(ELECTION_TIMEOUT));
    }

    ClusterNode start(int i) throws IOException {
        return start(i, secret);
    }

    ClusterNode start(int i, ClusterSecret withSecret) throws IOException {
        appliers[i] = new RecordingApplier();
        nodes[i] = ClusterNode.start(settings(i, withSecret), appliers[i]);
        return nodes[i];
    }

    /** Starts node {@code i} with queue groups applied by {@code queues}. */
    ClusterNode start(int i, QueueGroupApplier queues) throws IOException {
        appliers[i] = new RecordingApplier();
        nodes[i] = ClusterNode.start(settings(i, secret), appliers[i], queues);
        return nodes[i];
    }

    /** Node {@code i} as a cluster of its own: its seeds are itself alone. */
    ClusterNode startAlone(int i) throws IOException {
        appliers[i] = new RecordingApplier();
        nodes[i] = ClusterNode.start(tuning.apply(ClusterSettings.of(addresses.get(i), List.of(addresses.get(i)),
            "127.0.0.1", dir.resolve("n" + i), secret).withAppendTimeout(Duration.ofSeconds(5))
            .withElectionTimeout(ELECTION_TIMEOUT)), appliers[i]);
        return nodes[i];
    }

    /** Starts the first {@code count} nodes. */
    void startFirst(int count) throws IOException {
        for (int i = 0; i < count; i++) {
            start(i);
        }
    }

    void startAll() throws IOException {
        for (int i = 0; i < nodes.length; i++) {
            start(i);
        }
    }

    void stop(int i) throws IOException {
        nodes[i].close();
        nodes[i] = null;
    }

    Path dir(int i) {
        return dir.resolve("n" + i);
    }

    /** Node {@code i}'s queue groups' directory, beside {@link #dir}. */
    Path queueDir(int i) {
        return settings(i, secret).queueDataDir();
    }

    @Override
    public void close() throws IOException {
        for (int i = 0; i < nodes.length; i++) {
            if (nodes[i] != null) {
                stop(i);
            }
        }
    }
}
