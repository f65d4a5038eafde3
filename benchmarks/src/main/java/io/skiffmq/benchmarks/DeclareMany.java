package io.skiffmq.benchmarks;

import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.LongAdder;

/**
 * Issue 30's "many queues" scenario, as a new user would try it: N durable (or, with {@code --durable=false},
 * transient) queues declared over AMQP 0-9-1 one after
 * another, each bound to {@code amq.direct} with its name as the key, on one channel. Prints, every {@code --every}
 * queues, the queues declared, the seconds since the start, the declare-and-bind rate over that interval and over
 * the whole run, the broker's RSS (from {@code /proc/PID/status}) per queue over the RSS before the first one, and
 * this tool's own CPU time per queue over the interval (its ceiling: 10⁶ / that, per second, on a free core).
 * Stops at {@code --seconds} even if not done (an O(n²) broker would take hours). With {@code --delete=true} it then
 * deletes them all, in the order declared, reporting the rate the same way. {@code --type=quorum} declares quorum
 * queues ({@code x-queue-type}; durable whatever {@code --durable} says). With {@code --consumers=N} the first N
 * queues then get a consumer each, and with {@code --publish-seconds=S} the first queue is published to for S
 * seconds (its consumer's received rate beside the rate sent). A benchmark, not a test.
 *
 * <pre>
 * java -cp benchmarks/target/benchmarks.jar io.skiffmq.benchmarks.DeclareMany --port=P --pid=BROKER_PID
 *     [--host=localhost] [--count=20000] [--every=1000] [--seconds=600] [--prefix=many-] [--durable=true]
 *     [--delete=false] [--type=classic] [--consumers=0] [--publish-seconds=0]
 * </pre>
 */
public final class DeclareMany {
    /** This process: its CPU time per queue is the tool's own cost, its ceiling beside the broker's rate. */
    private static final com.sun.management.OperatingSystemMXBean TOOL =
        (com.sun.management.OperatingSystemMXBean) java.lang.management.ManagementFactory.getOperatingSystemMXBean();
    private static long toolCpuAtLastReport = TOOL.getProcessCpuTime();

    private DeclareMany() {
    }

    public static void main(String[] args) throws Exception {
        Map<String, String> options = CommandLine.parseOrExit("DeclareMany", Map.ofEntries(Map.entry("host",
            "localhost"), Map.entry("port", "5672"), Map.entry("pid", "-1"), Map.entry("count", "20000"),
            Map.entry("every", "1000"), Map.entry("seconds", "600"), Map.entry("prefix", "many-"),
            Map.entry("durable", "true"), Map.entry("delete", "false"), Map.entry("type", "classic"),
            Map.entry("consumers", "0"), Map.entry("publish-seconds", "0")), args);
        int port = Integer.parseInt(options.get("port"));
        long pid = Long.parseLong(options.get("pid"));
        int count = Integer.parseInt(options.get("count"));
        int every = Integer.parseInt(options.get("every"));
        long seconds = Long.parseLong(options.get("seconds"));
        String prefix = options.get("prefix");
        String type = options.get("type");
        boolean durable = type.equals("quorum") || Boolean.parseBoolean(options.get("durable"));
        Map<String, Object> arguments = type.equals("classic") ? null : Map.of("x-queue-type", type);
        ConnectionFactory factory = new ConnectionFactory();
        factory.setHost(options.get("host"));
        factory.setPort(port);
        factory.setRequestedHeartbeat(0);
        // the client's topology recovery keeps every binding in a list and removes each new one from it before
        // adding it (AutorecoveringConnection.recordQueueBinding): O(n) per bind, so the tool itself slowed to a
        // fraction of its first rate by 50,000 queues (55% of a core at 200/s), whichever broker it measured
        factory.setAutomaticRecoveryEnabled(false);
        long rssBefore = rss(pid);
        System.out.printf("queues  seconds  interval/s  overall/s  rss-MiB  rss-KiB/queue  tool-µs/queue%n");
        try (Connection connection = factory.newConnection(); Channel channel = connection.createChannel()) {
            long start = System.nanoTime();
            long intervalStart = start;
            int declared = 0;
            while (declared < count && System.nanoTime() - start < seconds * 1_000_000_000L) {
                String name = prefix + declared;
                channel.queueDeclare(name, durable, false, false, arguments);
                channel.queueBind(name, "amq.direct", name);
                declared++;
                if (declared % every == 0 || declared == count) {
                    long now = System.nanoTime();
                    int inInterval = declared % every == 0 ? every : declared % every;
                    report(declared, start, intervalStart, now, inInterval, pid, rssBefore);
                    intervalStart = now;
                }
            }
            if (declared < count) {
                long now = System.nanoTime();
                report(declared, start, intervalStart, now, declared % every, pid, rssBefore);
                System.out.printf("stopped after %d s with %d of %d queues declared%n", seconds, declared, count);
            }
            List<Connection> consuming = new ArrayList<>();
            try {
                LongAdder received = consume(factory, prefix, Math.min(declared,
                    Integer.parseInt(options.get("consumers"))), consuming, pid, rssBefore);
                long publishSeconds = Long.parseLong(options.get("publish-seconds"));
                if (publishSeconds > 0 && declared > 0) {
                    publish(connection, prefix + 0, publishSeconds, received);
                }
            } finally {
                for (Connection c : consuming) {
                    c.abort();
                }
            }
            if (Boolean.parseBoolean(options.get("delete"))) {
                System.out.printf("deleting%n");
                start = System.nanoTime();
                intervalStart = start;
                for (int deleted = 1; deleted <= declared; deleted++) {
                    channel.queueDelete(prefix + (deleted - 1));
                    if (deleted % every == 0 || deleted == declared) {
                        long now = System.nanoTime();
                        report(deleted, start, intervalStart, now, deleted % every == 0 ? every : deleted % every, pid,
                            rssBefore);
                        intervalStart = now;
                    }
                }
            }
        }
    }

    /**
     * One consumer (auto-ack) on each of the first {@code count} queues: 100 per channel, 1,000 per connection.
     * Returns what they receive, counted.
     */
    private static LongAdder consume(ConnectionFactory factory, String prefix, int count, List<Connection> connections,
            long pid, long rssBefore) throws Exception {
        LongAdder received = new LongAdder();
        if (count == 0) {
            return received;
        }
        long start = System.nanoTime();
        Channel channel = null;
        for (int i = 0; i < count; i++) {
            if (i % 1000 == 0) {
                connections.add(factory.newConnection());
            }
            if (i % 100 == 0) {
                channel = connections.get(connections.size() - 1).createChannel();
            }
            channel.basicConsume(prefix + i, true, (tag, delivery) -> received.increment(), tag -> { });
        }
        System.out.printf("%d consumers started in %.1f s on %d connections, rss %d MiB%n", count,
            (System.nanoTime() - start) / 1e9, connections.size(), rss(pid) >> 20);
        return received;
    }

    /**
     * Publishes 12-byte transient messages to {@code queue} through {@code amq.direct} (routed among all the
     * bindings) for {@code seconds}, on a channel of its own, without confirms: the rate published, and the rate its
     * consumer (if it has one) received meanwhile.
     */
    private static void publish(Connection connection, String queue, long seconds, LongAdder received)
            throws Exception {
        byte[] body = new byte[12];
        try (Channel publisher = connection.createChannel()) {
            long receivedBefore = received.sum();
            long start = System.nanoTime();
            long end = start + seconds * 1_000_000_000L;
            long sent = 0;
            while (System.nanoTime() < end) {
                publisher.basicPublish("amq.direct", queue, null, body);
                sent++;
            }
            double took = (System.nanoTime() - start) / 1e9;
            System.out.printf("published to %s for %.1f s: %.0f msg/s sent, %.0f msg/s received by its consumer%n",
                queue, took, sent / took, (received.sum() - receivedBefore) / took);
        }
    }

    private static void report(int declared, long start, long intervalStart, long now, int inInterval, long pid,
            long rssBefore) throws Exception {
        double total = (now - start) / 1e9;
        double interval = (now - intervalStart) / 1e9;
        long rss = rss(pid);
        long cpu = TOOL.getProcessCpuTime();
        System.out.printf("%6d  %7.1f  %10.0f  %9.0f  %7d  %13.1f  %13.0f%n", declared, total, inInterval / interval,
            declared / total, rss >> 20, rss < 0 ? -1.0 : (rss - rssBefore) / 1024.0 / declared,
            (cpu - toolCpuAtLastReport) / 1e3 / inInterval);
        toolCpuAtLastReport = cpu;
    }

    /** The process's resident set in bytes; -1 without a pid. */
    static long rss(long pid) throws Exception {
        if (pid < 0) {
            return -1;
        }
        for (String line : Files.readAllLines(Path.of("/proc", Long.toString(pid), "status"))) {
            if (line.startsWith("VmRSS:")) {
                return Long.parseLong(line.replaceAll("[^0-9]", "")) * 1024;
            }
        }
        return -1;
    }
}
