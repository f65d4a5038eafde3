package io.skiffmq.server.cluster;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.skiffmq.cluster.ClusterNode;
import io.skiffmq.cluster.ClusterSecret;
import io.skiffmq.cluster.ClusterSettings;
import io.skiffmq.cluster.LogApplier;
import io.skiffmq.cluster.NodeAddress;
import io.skiffmq.cluster.QueueGroup;
import io.skiffmq.cluster.QueueGroupApplier;
import io.skiffmq.codec.amqp091.BasicProperties;
import io.skiffmq.core.message.Amqp091Message;
import io.skiffmq.core.message.Message;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * Issue 28's restart time for a replicated quorum queue (docs/quorum-queues.md, "Snapshots"): a queue group of three
 * members on loopback, two in this JVM and the third in a child JVM, each applying the group's log into the broker's
 * own replicas ({@link ReplicatedQueues}). MESSAGES enqueue commands of BODY bytes each (0-9-1, no properties) are
 * appended on the leader, BATCH per entry; once the child's replica holds them all and has a snapshot, the child is
 * killed with SIGKILL and started again, TRIALS times: the time from its start to its replica holding every
 * message again (JVM start, Ratis' start, the snapshot loaded, the log after it replayed and caught up with the
 * leader). Then, in this JVM: what building the live queue's messages from a replica costs (what the leader's node
 * does when it goes live), and the heap a replica takes per message.
 *
 * <pre>
 *   java -cp CLASSPATH io.skiffmq.server.cluster.ReplicaRestart MESSAGES [BODY] [BATCH] [TRIALS] [CHILD_HEAP]
 *       [SNAPSHOT_BYTES]   (defaults: 1000000 12 1000 3 2g 67108864)
 * </pre>
 *
 * The members' cluster ports are {@code BASE} (7300 unless set in the environment), {@code BASE + 3} and
 * {@code BASE + 6}, each with its queue port 2 above it. The child runs
 * {@code ReplicaRestart member DIR INDEX PORTS MESSAGES SNAPSHOT_BYTES}: it creates {@code DIR/ready}
 * once its replica holds MESSAGES messages; its output goes to {@code DIR/n2.log}.
 */
public final class ReplicaRestart {
    private static final ClusterSecret SECRET = ClusterSecret.of("replica restart benchmark");
    private static final QueueCommands.Key QUEUE = new QueueCommands.Key("/", "qq", 1);
    /** Where the sequence sits in an enqueue command of {@link #QUEUE}: kind, vhost, name, incarnation. */
    private static final int SEQUENCE_AT = 1 + 4 + 1 + 4 + 2 + 8;
    private static final Duration WAIT = Duration.ofMinutes(10);

    private ReplicaRestart() {
    }

    public static void main(String[] args) throws Exception {
        if (args.length > 0 && args[0].equals("member")) {
            member(Path.of(args[1]), Integer.parseInt(args[2]), ports(args[3]), Long.parseLong(args[4]),
                Long.parseLong(args[5]));
            return;
        }
        long messages = args.length > 0 ? Long.parseLong(args[0]) : 1_000_000;
        int body = args.length > 1 ? Integer.parseInt(args[1]) : 12;
        int batch = args.length > 2 ? Integer.parseInt(args[2]) : 1000;
        int trials = args.length > 3 ? Integer.parseInt(args[3]) : 3;
        String childHeap = args.length > 4 ? args[4] : "2g";
        long snapshotBytes = args.length > 5 ? Long.parseLong(args[5]) : ClusterSettings.DEFAULT_QUEUE_SNAPSHOT_BYTES;
        Path dir = Files.createTempDirectory("replica-restart");
        // each member's cluster port, its queue port 2 above it: from BASE (7300), as the other scripts take theirs
        int base = Integer.parseInt(System.getenv().getOrDefault("BASE", "7300"));
        int[] ports = {base, base + 3, base + 6};
        Epochs[] epochs = {new Epochs(), new Epochs()};
        ClusterNode[] nodes = new ClusterNode[2];
        Process child = null;
        try {
            for (int i = 0; i < 2; i++) {
                nodes[i] = ClusterNode.start(settings(dir, i, ports, snapshotBytes), new NoDefinitions(), epochs[i]);
                epochs[i].queues.node(nodes[i], null); // no metadata log here: no leader recorded there
            }
            QueueGroup[] groups = new QueueGroup[2];
            for (int i = 0; i < 2; i++) {
                groups[i] = nodes[i].queueGroup(names());
            }
            int leader = waitFor(() -> epochs[0].live >= 0 ? 0 : epochs[1].live >= 0 ? 1 : -1);
            String group = groups[leader].name();
            child = startChild(dir, ports, messages, childHeap, snapshotBytes);
            long start = System.nanoTime();
            fill(groups, epochs, messages, body, batch);
            double fillSeconds = (System.nanoTime() - start) / 1e9;
            System.out.printf("filled: %,d messages of %d B, %d per entry, in %.1f s (%,.0f msg/s)%n", messages,
                body, batch, fillSeconds, messages / fillSeconds);
            waitForReady(dir, child);
            Path sm = settings(dir, 2, ports, snapshotBytes).queueDataDir().resolve(group).resolve("sm");
            waitFor(() -> hasSnapshot(sm) ? 1 : -1);
            System.out.printf("child: %s%n", snapshots(sm));
            // how long the killed member stays down before it is started again (a node restarted at once, or one
            // down for a while, whose leaders have slowed their tries to reach it)
            long downMillis = Long.parseLong(System.getenv().getOrDefault("DOWN_SECONDS", "0")) * 1000;
            for (int t = 1; t <= trials; t++) {
                child.destroyForcibly().waitFor();
                Thread.sleep(downMillis);
                long restart = System.nanoTime();
                long startedAt = System.currentTimeMillis();
                child = startChild(dir, ports, messages, childHeap, snapshotBytes);
                waitForReady(dir, child);
                long took = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - restart);
                System.out.printf("restart %d: the killed member's replica holds all %,d messages %d ms after its"
                    + " start%s%n", t, messages, took, phases(dir.resolve("n2.log"), ports[2] + 2, group,
                    startedAt, took));
            }
            System.out.println("child's log: " + String.join(" | ", loaded(dir.resolve("n2.log"))));
            QueueReplica replica = epochs[0].queues.replica(groups[0].name(), QUEUE);
            long built = System.nanoTime();
            io.skiffmq.core.queue.ClassicQueue live = ReplicaGoLiveBenchmark.liveQueue(QUEUE, replica);
            System.out.printf("the live queue's %,d messages built from the replica in %d ms%n", live.readyCount(),
                TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - built));
            live.close();
        } finally {
            if (child != null) {
                child.destroyForcibly().waitFor();
            }
            for (ClusterNode node : nodes) {
                if (node != null) {
                    node.close();
                }
            }
        }
        System.out.printf("heap per message of a replica: %d B%n", heapPerMessage(Math.min(messages, 1_000_000),
            body));
        deleteTree(dir);
    }

    /** The child: node 2 of the group, printing {@code ready} once its replica holds {@code messages}. */
    private static void member(Path dir, int index, int[] ports, long messages, long snapshotBytes)
            throws Exception {
        Epochs epochs = new Epochs();
        ClusterNode node = ClusterNode.start(settings(dir, index, ports, snapshotBytes), new NoDefinitions(),
            epochs);
        epochs.queues.node(node, null);
        QueueGroup group = node.queueGroup(names());
        while (true) {
            QueueReplica replica = epochs.queues.replica(group.name(), QUEUE);
            if (replica != null && replica.size() >= messages) {
                Files.createFile(dir.resolve("ready"));
                break;
            }
            Thread.sleep(5);
        }
        Thread.sleep(Long.MAX_VALUE); // killed by the parent
    }

    private static List<String> names() {
        return List.of("n0@127.0.0.1", "n1@127.0.0.1", "n2@127.0.0.1");
    }

    private static ClusterSettings settings(Path dir, int i, int[] ports, long snapshotBytes) {
        List<NodeAddress> all = new ArrayList<>();
        for (int n = 0; n < 3; n++) {
            all.add(new NodeAddress("n" + n + "@127.0.0.1", "127.0.0.1", ports[n]));
        }
        // an election timeout of 3 s: three nodes in two JVMs on a loaded machine miss 1 s heartbeats
        ClusterSettings usual = ClusterSettings.of(all.get(i), all, "127.0.0.1", dir.resolve("n" + i), SECRET);
        return new ClusterSettings(usual.self(), usual.seeds(), usual.bindHost(), usual.dataDir(), usual.secret(),
            Duration.ofSeconds(30), Duration.ofSeconds(3), usual.snapshotEvery(), usual.segmentBytes(), snapshotBytes);
    }

    private static Process startChild(Path dir, int[] ports, long messages, String heap, long snapshotBytes)
            throws IOException {
        Files.deleteIfExists(dir.resolve("ready"));
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        List<String> command = new ArrayList<>(List.of(java, "-Xmx" + heap));
        // the child's collector and other JVM flags: CHILD_JVM, else the parallel collector the figures began with
        command.addAll(List.of(System.getenv().getOrDefault("CHILD_JVM", "-XX:+UseParallelGC").trim().split("\\s+")));
        command.addAll(List.of("-cp", System.getProperty("java.class.path"), ReplicaRestart.class.getName(), "member",
            dir.toString(), "2", ports[0] + "," + ports[1] + "," + ports[2], Long.toString(messages),
            Long.toString(snapshotBytes)));
        return new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.appendTo(dir.resolve("n2.log").toFile()))
            .start();
    }

    /** Appends the enqueues on whichever of the two in-process nodes leads, a batch again when it was not taken. */
    private static void fill(QueueGroup[] groups, Epochs[] epochs, long messages, int body, int batch)
            throws Exception {
        byte[] template = enqueue(body);
        Semaphore inFlight = new Semaphore(16);
        java.util.ArrayDeque<Object[]> sent = new java.util.ArrayDeque<>();
        for (long sequence = 0; sequence < messages || !sent.isEmpty(); ) {
            if (sequence < messages && sent.size() < 64) {
                int n = (int) Math.min(batch, messages - sequence);
                ByteBuffer entry = ByteBuffer.allocate(n * (4 + template.length));
                for (int i = 0; i < n; i++) {
                    int at = entry.position() + 4;
                    entry.putInt(template.length).put(template).putLong(at + SEQUENCE_AT, sequence++);
                }
                inFlight.acquire();
                CompletableFuture<Void> appended = append(groups, epochs, entry.array());
                appended.whenComplete((ok, failure) -> inFlight.release());
                sent.add(new Object[] {appended, entry.array()});
                continue;
            }
            Object[] oldest = sent.poll();
            try {
                ((CompletableFuture<?>) oldest[0]).get(WAIT.toSeconds(), TimeUnit.SECONDS);
            } catch (java.util.concurrent.ExecutionException e) {
                // the leader changed (a loaded machine misses heartbeats): the same batch again, to the new one
                waitFor(() -> {
                    try {
                        Thread.sleep(100);
                        append(groups, epochs, (byte[]) oldest[1]).get(WAIT.toSeconds(), TimeUnit.SECONDS);
                        return 1;
                    } catch (java.util.concurrent.ExecutionException again) {
                        return -1;
                    }
                });
            }
        }
    }

    private static CompletableFuture<Void> append(QueueGroup[] groups, Epochs[] epochs, byte[] entry) {
        int leader = epochs[0].live >= 0 ? 0 : epochs[1].live >= 0 ? 1 : -1;
        if (leader < 0) {
            return CompletableFuture.failedFuture(new IllegalStateException("no leader here now"));
        }
        return groups[leader].append(epochs[leader].live, entry);
    }

    private static byte[] enqueue(int body) throws Exception {
        ByteBuf properties = Unpooled.buffer();
        BasicProperties.EMPTY.encode(properties);
        Message message = Amqp091Message.of(properties, Unpooled.wrappedBuffer(new byte[body]), "", "qq");
        try {
            return QueueCommands.enqueue(QUEUE, 0, 0, 0, Long.MAX_VALUE, message);
        } finally {
            message.release();
        }
    }

    /** The heap a replica of {@code count} messages takes, per message, measured after full collections. */
    private static long heapPerMessage(long count, int body) throws Exception {
        byte[] template = enqueue(body);
        ByteBuffer command = ByteBuffer.wrap(template.clone());
        long before = usedAfterGc();
        QueueReplica replica = new QueueReplica();
        for (long sequence = 0; sequence < count; sequence++) {
            command.putLong(SEQUENCE_AT, sequence).position(0);
            byte kind = command.get();
            QueueCommands.key(command);
            replica.apply(kind, command);
        }
        long after = usedAfterGc();
        if (replica.size() != count) {
            throw new IllegalStateException("the replica holds " + replica.size());
        }
        return (after - before) / count;
    }

    private static long usedAfterGc() throws InterruptedException {
        for (int i = 0; i < 3; i++) {
            System.gc();
            Thread.sleep(100);
        }
        Runtime rt = Runtime.getRuntime();
        return rt.totalMemory() - rt.freeMemory();
    }

    private static boolean hasSnapshot(Path sm) throws IOException {
        return !snapshots(sm).isEmpty();
    }

    private static List<String> snapshots(Path sm) throws IOException {
        if (!Files.isDirectory(sm)) {
            return List.of();
        }
        try (Stream<Path> files = Files.list(sm)) {
            return files.map(p -> p.getFileName().toString()).filter(f -> f.matches("snapshot\\.\\d+_\\d+"))
                .sorted().toList();
        }
    }

    private static List<String> loaded(Path log) throws IOException {
        try (Stream<String> lines = Files.lines(log)) {
            return lines.filter(l -> l.contains("loaded from its snapshot") || l.contains(": snapshot at index"))
                .map(l -> l.substring(Math.max(0, l.indexOf("queue group")))).toList();
        }
    }

    /**
     * Where a restart's time went, from the member's log (wall-clock times, this restart's lines only): until its
     * queue server listened (the JVM, Ratis' start, the snapshot and the log after it read), idle until the group's
     * leader reached it, and the rest (the log after the snapshot applied, caught up).
     */
    private static String phases(Path log, int queuePort, String group, long startedAt, long took)
            throws IOException {
        String groupTag = "group-" + group.substring(group.length() - 12).toUpperCase();
        long listening = -1;
        long reached = -1;
        try (Stream<String> lines = Files.lines(log)) {
            for (String line : (Iterable<String>) lines::iterator) {
                long at = timestamp(line);
                if (at < startedAt) {
                    continue;
                }
                if (listening < 0 && line.contains("GrpcServicesImpl started, listening on " + queuePort)) {
                    listening = at;
                } else if (listening >= 0 && reached < 0 && line.contains(groupTag + ": change Leader from null")) {
                    reached = at;
                }
            }
        }
        if (listening < 0 || reached < 0) {
            return "";
        }
        return String.format(" (listening after %d ms, idle %d ms before the leader's first append, then %d ms)",
            listening - startedAt, reached - listening, startedAt + took - reached);
    }

    /** A log line's time (its first word, ISO-8601), or -1. */
    private static long timestamp(String line) {
        int space = line.indexOf(' ');
        try {
            return space > 0 ? java.time.OffsetDateTime.parse(line.substring(0, space)).toInstant().toEpochMilli() : -1;
        } catch (java.time.format.DateTimeParseException e) {
            return -1;
        }
    }

    private static void waitForReady(Path dir, Process child) throws Exception {
        waitFor(() -> {
            if (!child.isAlive()) {
                throw new IOException("the child ended: see " + dir.resolve("n2.log"));
            }
            return Files.exists(dir.resolve("ready")) ? 1 : -1;
        });
    }

    private interface Probe {
        int poll() throws Exception;
    }

    private static int waitFor(Probe probe) throws Exception {
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (System.nanoTime() < deadline) {
            int value = probe.poll();
            if (value >= 0) {
                return value;
            }
            Thread.sleep(10);
        }
        throw new IllegalStateException("not within " + WAIT);
    }

    private static int[] ports(String list) {
        return Stream.of(list.split(",")).mapToInt(Integer::parseInt).toArray();
    }

    private static void deleteTree(Path dir) throws IOException {
        try (Stream<Path> paths = Files.walk(dir)) {
            for (Path p : paths.sorted(java.util.Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        }
    }

    /** The broker's replicas, and the epoch this node went live in (-1 while it does not lead). */
    private static final class Epochs implements QueueGroupApplier {
        final ReplicatedQueues queues = new ReplicatedQueues(Duration.ofSeconds(30));
        volatile long live = -1;

        @Override
        public void apply(String group, long index, ByteBuffer command) {
            queues.apply(group, index, command);
        }

        @Override
        public void leader(String group, String node, long epoch, boolean liveHere) {
            live = liveHere ? epoch : -1;
            queues.leader(group, node, epoch, liveHere);
        }

        @Override
        public void notLeader(String group) {
            live = -1;
            queues.notLeader(group);
        }

        @Override
        public Snapshot snapshot(String group) {
            return queues.snapshot(group);
        }

        @Override
        public void restore(String group, java.io.DataInput in) throws IOException {
            queues.restore(group, in);
        }
    }

    /** The metadata group carries nothing here. */
    private static final class NoDefinitions implements LogApplier {
        @Override
        public void apply(long index, ByteBuffer entry) {
        }

        @Override
        public void writeSnapshot(OutputStream out) {
        }

        @Override
        public void installSnapshot(InputStream in) {
        }

        @Override
        public void reset() {
        }
    }
}
