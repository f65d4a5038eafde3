package io.skiffmq.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.rabbitmq.client.ConnectionFactory;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

/**
 * Brokers in child JVMs, each in a network namespace of its own, so that a test can cut the network between them
 * for real. Each namespace has one veth link to a bridge in the root namespace, which holds {@code 10.231.X.1};
 * node {@code i} is {@code n<i>@10.231.X.(11+i)} and listens on that address only, on the same ports in every
 * namespace (AMQP 5672, HTTP API 15672, cluster 25672). Clients in the test connect from the root namespace through
 * the bridge, so guest may log in from anywhere ({@code loopback-users=none}).
 *
 * <p>{@link #isolate} cuts a node off: nftables inside its namespace drop every packet between it and the other
 * nodes, while the test still reaches it (taking its veth link down would cut the test off too). Packets are
 * dropped, not refused, so that connections hang as over a real partition.
 *
 * <p>Needs root, {@code ip} and {@code nft}: {@link #unavailable} says why not, for the test to skip. Names carry
 * this JVM's pid, so that a run killed before it could clean up is cleaned up by the next one. The nodes array is
 * written by the thread that starts a node and read by others: a test orders them (a node is started before it is
 * used). Nodes start side by side ({@link #startAll}).
 */
final class NetnsCluster implements AutoCloseable {
    static final int CLUSTER_PORT = 25672;
    /** Each namespace has its ports to itself: a node restarted keeps its address and ports. */
    static final int AMQP_PORT = 5672;
    static final int HTTP_PORT = 15672;
    private static final String PREFIX = "skq";
    private static final Pattern OURS = Pattern.compile("^" + PREFIX + "(\\d+)[a-z]");
    private static final AtomicInteger CLUSTERS = new AtomicInteger();

    final ChildBroker[] nodes;
    private final Path dir;
    private final String tag;
    private final String subnet;
    private final int appendTimeoutMillis;
    private final boolean[] isolated;
    private final List<Path> logs = new CopyOnWriteArrayList<>();
    private final AtomicInteger starts = new AtomicInteger();
    private final List<String> namespaces = new ArrayList<>();
    private boolean bridged;

    /**
     * The reason network namespaces cannot be used here, or null when they can: a namespace is made and removed to
     * find out.
     */
    static String unavailable() {
        if (!System.getProperty("os.name", "").toLowerCase().contains("linux")) {
            return "network namespaces are Linux's";
        }
        String probe = PREFIX + ProcessHandle.current().pid() + "probe";
        try {
            String who = run(List.of("id", "-u")).trim();
            if (!who.equals("0")) {
                return "network namespaces need root (uid " + who + ")";
            }
            run(List.of("ip", "netns", "add", probe));
            run(List.of("ip", "netns", "del", probe));
            run(List.of("nft", "--version"));
            return null;
        } catch (IOException e) {
            return "cannot make a network namespace: " + e.getMessage();
        }
    }

    NetnsCluster(Path dir, int size, int appendTimeoutMillis) throws IOException {
        removeLeftovers();
        this.dir = dir;
        this.appendTimeoutMillis = appendTimeoutMillis;
        this.nodes = new ChildBroker[size];
        this.isolated = new boolean[size];
        this.tag = PREFIX + ProcessHandle.current().pid() + (char) ('a' + CLUSTERS.getAndIncrement() % 26);
        this.subnet = "10.231." + freeSubnet() + ".";
        try {
            run(List.of("ip", "link", "add", tag + "b", "type", "bridge"));
            bridged = true;
            run(List.of("ip", "addr", "add", subnet + "1/24", "dev", tag + "b"));
            run(List.of("ip", "link", "set", tag + "b", "up"));
            for (int i = 0; i < size; i++) {
                String ns = tag + "n" + i;
                run(List.of("ip", "netns", "add", ns));
                namespaces.add(ns);
                inside(i, "ip", "link", "set", "lo", "up");
                run(List.of("ip", "link", "add", veth(i), "type", "veth", "peer", "name", "eth0", "netns", ns));
                run(List.of("ip", "link", "set", veth(i), "master", tag + "b", "up"));
                inside(i, "ip", "addr", "add", host(i) + "/24", "dev", "eth0");
                inside(i, "ip", "link", "set", "eth0", "up");
            }
        } catch (IOException | RuntimeException e) {
            removeNetwork();
            throw e;
        }
    }

    /** Node {@code i}'s address, where the others and the test reach it. */
    String host(int i) {
        return subnet + (11 + i);
    }

    String name(int i) {
        return "n" + i + "@" + host(i);
    }

    /** A connection factory for node {@code i}, as guest. */
    ConnectionFactory factory(int i) {
        ConnectionFactory factory = new ConnectionFactory();
        factory.setHost(host(i));
        factory.setPort(AMQP_PORT);
        factory.setConnectionTimeout(5000);
        factory.setAutomaticRecoveryEnabled(false); // a test sees each failure, and nothing is declared again
        return factory;
    }

    HttpApiClient api(int i) {
        return new HttpApiClient(host(i), HTTP_PORT, "guest", "guest");
    }

    /** Starts (or starts again) node {@code i} in its namespace. */
    ChildBroker start(int i) throws Exception {
        String listed = IntStream.range(0, nodes.length).mapToObj(n -> name(n) + ":" + CLUSTER_PORT)
            .collect(Collectors.joining(","));
        ChildBroker node = ChildBroker.start(List.of("ip", "netns", "exec", tag + "n" + i), dir.resolve("n" + i),
            "netns-" + tag + "-n" + i + "-" + starts.getAndIncrement(),
            List.of("-Xmx256m", "-Dio.netty.leakDetection.level=paranoid"),
            List.of("--bind=" + host(i), "--port=" + AMQP_PORT, "--management-port=" + HTTP_PORT,
                "--loopback-users=none", "--node=" + name(i),
                "--cluster-port=" + CLUSTER_PORT, "--cluster-nodes=" + listed,
                "--cluster-secret-file=" + dir.resolve("secret"), "--cluster-append-timeout=" + appendTimeoutMillis,
                "--cluster-election-timeout=" + ChildCluster.ELECTION_TIMEOUT_MILLIS));
        logs.add(node.log);
        nodes[i] = node;
        return node;
    }

    /** Starts every node side by side, and waits until all of them know one leader. */
    void startAll() throws Exception {
        ChildCluster.startSideBySide(nodes.length, this::start, this::name);
        await().atMost(Duration.ofSeconds(90)).until(() -> agreedLeader(allNodes()) >= 0);
    }

    private int[] allNodes() {
        return IntStream.range(0, nodes.length).toArray();
    }

    /**
     * The leader node {@code i} knows of ({@code GET /api/cluster-status}), as an index, or -1 when it knows none
     * or does not answer.
     */
    int leaderSeenBy(int i) {
        try {
            HttpApiClient.Answer status = api(i).get("/api/cluster-status");
            Object leader = status.status() == 200 ? status.map().get("leader") : null;
            for (int n = 0; n < nodes.length; n++) {
                if (name(n).equals(leader)) {
                    return n;
                }
            }
        } catch (Exception e) {
            // not answering: no leader known
        }
        return -1;
    }

    /**
     * The leader every one of {@code among} knows of, or -1 when they know none or differ. Asked side by side: a
     * node's answer waits up to 2 s for a member cut off.
     */
    int agreedLeader(int... among) {
        List<CompletableFuture<Integer>> answers = new ArrayList<>();
        for (int i : among) {
            answers.add(CompletableFuture.supplyAsync(() -> leaderSeenBy(i),
                task -> new Thread(task, "leader-of-" + name(i)).start()));
        }
        List<Integer> leaders = answers.stream().map(CompletableFuture::join).distinct().toList();
        return leaders.size() == 1 ? leaders.get(0) : -1;
    }

    /**
     * The node that leads replicated queue {@code queue} in vhost {@code /}, as node {@code i} sees it
     * ({@code leader} in {@code GET /api/queues}), as an index, or -1 when it knows none or does not answer.
     */
    int queueLeaderSeenBy(int i, String queue) {
        try {
            HttpApiClient.Answer answer = api(i).get("/api/queues/%2F/" + queue);
            Object leader = answer.status() == 200 ? answer.map().get("leader") : null;
            for (int n = 0; n < nodes.length; n++) {
                if (name(n).equals(leader)) {
                    return n;
                }
            }
        } catch (Exception e) {
            // not answering: no leader known
        }
        return -1;
    }

    /**
     * Cuts node {@code i} off from the other nodes, both ways: its namespace drops every packet from or to them.
     * The test's clients still reach it.
     */
    void isolate(int i) throws IOException {
        String others = IntStream.range(0, nodes.length).filter(n -> n != i).mapToObj(this::host)
            .collect(Collectors.joining(", "));
        inside(i, "nft", "add table inet partition\n"
            + "add chain inet partition in { type filter hook input priority 0 ; }\n"
            + "add chain inet partition out { type filter hook output priority 0 ; }\n"
            + "add rule inet partition in ip saddr { " + others + " } drop\n"
            + "add rule inet partition out ip daddr { " + others + " } drop");
        isolated[i] = true;
    }

    /** Undoes {@link #isolate}. */
    void heal(int i) throws IOException {
        if (isolated[i]) {
            inside(i, "nft", "delete table inet partition");
            isolated[i] = false;
        }
    }

    @Override
    public void close() throws Exception {
        try {
            for (ChildBroker node : nodes) {
                if (node != null) {
                    node.close();
                }
            }
        } finally {
            removeNetwork();
        }
        for (Path log : logs) {
            assertThat(Files.readString(log)).as("leak reports in " + log).doesNotContain("LEAK:");
        }
    }

    private String veth(int i) {
        return tag + "v" + i;
    }

    private void inside(int i, String... command) throws IOException {
        List<String> words = new ArrayList<>(List.of("ip", "netns", "exec", tag + "n" + i));
        if (command[0].equals("nft") && command.length == 2) {
            words.addAll(List.of("nft", "-f", "-"));
            run(words, command[1]);
        } else {
            words.addAll(List.of(command));
            run(words);
        }
    }

    private void removeNetwork() {
        for (String ns : namespaces) {
            quietly(List.of("ip", "netns", "del", ns)); // takes its veth pair with it
        }
        namespaces.clear();
        if (bridged) {
            quietly(List.of("ip", "link", "del", tag + "b"));
            bridged = false;
        }
    }

    /** Namespaces and bridges of ours whose JVM is gone (a run killed before it cleaned up). */
    private static void removeLeftovers() throws IOException {
        for (String line : run(List.of("ip", "netns", "list")).split("\n")) {
            String ns = line.split(" ")[0];
            if (gone(ns)) {
                quietly(List.of("ip", "netns", "del", ns));
            }
        }
        for (String line : run(List.of("ip", "-o", "link", "show", "type", "bridge")).split("\n")) {
            String[] words = line.split(":? +");
            if (words.length > 1 && gone(words[1])) {
                quietly(List.of("ip", "link", "del", words[1]));
            }
        }
    }

    private static boolean gone(String name) {
        Matcher ours = OURS.matcher(name);
        return ours.find() && ProcessHandle.of(Long.parseLong(ours.group(1))).map(p -> !p.isAlive()).orElse(true);
    }

    /** A third octet that no address of this machine uses. */
    private static int freeSubnet() throws IOException {
        String addresses = run(List.of("ip", "-4", "-o", "addr"));
        for (int tries = 0; ; tries++) {
            int x = ThreadLocalRandom.current().nextInt(1, 255);
            if (!addresses.contains("10.231." + x + ".") || tries > 300) {
                return x;
            }
        }
    }

    private static void quietly(List<String> command) {
        try {
            run(command);
        } catch (IOException e) {
            // cleaning up: what is already gone is fine
        }
    }

    static String run(List<String> command) throws IOException {
        return run(command, null);
    }

    private static String run(List<String> command, String input) throws IOException {
        Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        if (input != null) {
            process.getOutputStream().write(input.getBytes(StandardCharsets.UTF_8));
        }
        process.getOutputStream().close();
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        try {
            if (!process.waitFor(30, TimeUnit.SECONDS) || process.exitValue() != 0) {
                process.destroyForcibly();
                throw new IOException(String.join(" ", command) + " failed: " + output.trim());
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted: " + command, e);
        }
        return output;
    }
}
