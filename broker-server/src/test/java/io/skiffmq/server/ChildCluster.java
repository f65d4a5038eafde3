package io.skiffmq.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.IntFunction;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

/**
 * Brokers in child JVMs (leak detector at paranoid) that form a cluster on loopback: node {@code i} is
 * {@code <prefix><i>@127.0.0.1}, each with its own data directory under {@code dir} and one shared secret file;
 * the first {@code members} are listed in {@code cluster-nodes} and form the cluster, the others start alone.
 * Closing kills what still runs and fails when a node's log reports a leak.
 */
final class ChildCluster implements AutoCloseable {
    final ChildBroker[] nodes;
    private final int[] clusterPorts;
    /** Nodes start side by side ({@link #startMembers}): these two are shared by the starting threads. */
    private final List<Path> logs = new CopyOnWriteArrayList<>();
    /**
     * The nodes' {@code cluster-election-timeout}: a lost leader is replaced within 0.4–0.8 s rather than 1–2 s,
     * which the tests that kill or cut off leaders wait out many times; still well above the GC and fsync pauses
     * of a loaded 2-core machine, which the leader's heartbeats (every half of it) must outlast.
     */
    static final int ELECTION_TIMEOUT_MILLIS = 400;

    private final AtomicInteger starts = new AtomicInteger();
    private final Path dir;
    private final String prefix;
    private final int members;
    private final int appendTimeoutMillis;
    /** More settings every node is started with, as {@code --name=value} flags. */
    private final List<String> settings;

    ChildCluster(Path dir, String prefix, int size, int members, int appendTimeoutMillis) throws IOException {
        this(dir, prefix, size, members, appendTimeoutMillis, List.of());
    }

    ChildCluster(Path dir, String prefix, int size, int members, int appendTimeoutMillis, List<String> settings)
            throws IOException {
        this.settings = settings;
        this.dir = dir;
        this.prefix = prefix;
        this.members = members;
        this.appendTimeoutMillis = appendTimeoutMillis;
        this.nodes = new ChildBroker[size];
        this.clusterPorts = new int[size];
        for (int i = 0; i < size; i++) {
            clusterPorts[i] = freePortTriple();
        }
    }

    String name(int i) {
        return prefix + i + "@127.0.0.1";
    }

    int clusterPort(int i) {
        return clusterPorts[i];
    }

    /** The data directory node {@code i}'s {@link ChildBroker} is given. */
    Path home(int i) {
        return dir.resolve(prefix + i);
    }

    /** Starts (or starts again) node {@code i}. */
    ChildBroker start(int i) throws Exception {
        String listed = i >= members ? "" : IntStream.range(0, members)
            .mapToObj(n -> name(n) + ":" + clusterPorts[n]).collect(Collectors.joining(","));
        List<String> flags = new ArrayList<>(List.of("--node=" + name(i), "--cluster-port=" + clusterPorts[i],
            "--cluster-nodes=" + listed, "--cluster-secret-file=" + dir.resolve("secret"),
            "--cluster-append-timeout=" + appendTimeoutMillis,
            "--cluster-election-timeout=" + ELECTION_TIMEOUT_MILLIS,
            // a quorum queue group's snapshot every 16 KiB of log: a restarted member loads one and the log after it
            "--cluster-queue-snapshot-bytes=16384"));
        flags.addAll(settings);
        ChildBroker node = ChildBroker.start(home(i), "cluster-" + prefix + i + "-" + starts.getAndIncrement(),
            List.of("-Xmx256m", "-Dio.netty.leakDetection.level=paranoid"), flags);
        logs.add(node.log);
        nodes[i] = node;
        return node;
    }

    /**
     * Starts the nodes that form the cluster, side by side: none waits for a majority to start, and the first
     * election then has every member to vote.
     */
    void startMembers() throws Exception {
        startSideBySide(members, this::start, this::name);
    }

    /** A start of node {@code i}. */
    interface NodeStart {
        ChildBroker start(int i) throws Exception;
    }

    /** Starts nodes 0 to {@code count - 1} at once, each on a thread of its own, and waits for all of them. */
    static void startSideBySide(int count, NodeStart start, IntFunction<String> name) {
        List<CompletableFuture<ChildBroker>> starting = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            int node = i;
            starting.add(CompletableFuture.supplyAsync(() -> {
                try {
                    return start.start(node);
                } catch (Exception e) {
                    throw new CompletionException(e);
                }
            }, task -> new Thread(task, "start-" + name.apply(node)).start())); // not the common pool: 1 thread
        }
        for (CompletableFuture<ChildBroker> node : starting) {
            node.join();
        }
    }

    /** A 0-9-1 connection to node {@code i} as guest, once the node has the cluster's users (within {@code wait}). */
    com.rabbitmq.client.Connection connect(int i, java.time.Duration wait) {
        com.rabbitmq.client.ConnectionFactory factory = new com.rabbitmq.client.ConnectionFactory();
        factory.setPort(nodes[i].port);
        // one try never takes the whole wait (a TCP connect waits 60 s by default)
        factory.setConnectionTimeout(10_000);
        ChildBroker node = nodes[i];
        AtomicReference<Exception> refused = new AtomicReference<>();
        AtomicInteger tries = new AtomicInteger();
        try {
            // a node that died will not come back by itself: say so, and why, rather than wait out the time
            return org.awaitility.Awaitility.await().atMost(wait)
                .failFast("node " + i + " exited", () -> !node.alive())
                .until(() -> {
                    tries.incrementAndGet();
                    try {
                        return factory.newConnection();
                    } catch (IOException | java.util.concurrent.TimeoutException | RuntimeException e) {
                        refused.set(e);
                        return null;
                    }
                }, c -> c != null && c.isOpen());
        } catch (org.awaitility.core.ConditionTimeoutException | org.awaitility.core.TerminalFailureException e) {
            if (!node.alive()) {
                throw new AssertionError("node " + i + " " + node.exitReport(), e);
            }
            // alive but not taking connections: what it last answered, its last lines, and its threads in the output
            node.printThreads();
            throw new AssertionError("node " + i + " took no connection within " + wait + " in " + tries
                + " tries, the last refused with " + refused.get() + "; " + node.logTail(8), e);
        }
    }

    HttpApiClient api(int i) throws Exception {
        return new HttpApiClient(nodes[i].managementPort(), "guest", "guest");
    }

    @Override
    public void close() throws Exception {
        for (ChildBroker node : nodes) {
            if (node != null) {
                node.close();
            }
        }
        for (Path log : logs) {
            assertThat(Files.readString(log)).as("leak reports in " + log).doesNotContain("LEAK:");
        }
    }

    /**
     * A free port whose next two are free too: the cluster port, the node port and the queue port beside it
     * (docs/cluster.md). Picked below the ephemeral range, as a port near one the system hands out is often taken by
     * its connections.
     */
    private static int freePortTriple() throws IOException {
        java.util.concurrent.ThreadLocalRandom random = java.util.concurrent.ThreadLocalRandom.current();
        for (int attempt = 0; ; attempt++) {
            int port = random.nextInt(20_000, 30_000);
            try (ServerSocket first = new ServerSocket(port); ServerSocket next = new ServerSocket(port + 1);
                    ServerSocket queues = new ServerSocket(port + 2)) {
                return port;
            } catch (IOException e) {
                if (attempt > 100) {
                    throw e;
                }
            }
        }
    }

    private static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0)) {
            return socket.getLocalPort();
        }
    }
}
