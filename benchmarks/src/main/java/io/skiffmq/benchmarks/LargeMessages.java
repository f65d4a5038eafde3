package io.skiffmq.benchmarks;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Issue 30's large messages side by side: 1 MiB and 16 MiB bodies ({@code --sizes}), transient and durable, one
 * publisher → one queue → one consumer, over AMQP 1.0 ({@link LoadTool}'s lean engine: SkiffMQ, Artemis, and RabbitMQ
 * with its {@code rabbitmq_amqp1_0} plugin) and AMQP 0-9-1 (PerfTest in a JVM of its own: SkiffMQ and RabbitMQ).
 * Each run gets a fresh SkiffMQ or Artemis ({@link BrokerProcess}, {@code -Xmx}{@code --heap}, native memory tracking);
 * RabbitMQ is the node {@code benchmarks/large-messages} starts. Publishers keep {@code --in-flight} unconfirmed and
 * consumers {@code --credit} unsettled (prefetch): 8 MiB or 128 MiB in flight each way. Durable means persistent
 * messages in a durable queue, confirmed once synced (SkiffMQ {@code sync-policy=sync}, Artemis's journal with
 * sync, RabbitMQ's fsync before confirm).
 *
 * <p>Each row: msg/s and MiB/s received over {@code --duration} seconds after {@code --warmup}, the p99 latency, the
 * broker's and the load tool's CPU per message (the tool's ceiling: what it could do on a core of its own), and the
 * broker's peaks over the whole run ({@link BrokerMemory}: resident set, heap used, direct memory).
 *
 * <pre>
 * benchmarks/large-messages [--sizes=1048576,16777216] [--protocols=amqp10,amqp091] [--durable=false,true]
 *     [--brokers=skiffmq,artemis,rabbitmq] [--duration=15] [--warmup=5] [--heap=1g] [--in-flight=8] [--credit=8]
 * </pre>
 */
public final class LargeMessages {
    /** USER_HZ: the unit of utime and stime in /proc/PID/stat. */
    private static final double TICKS_PER_SECOND = 100;

    private LargeMessages() {
    }

    /** One run's figures; a negative value was not measured. */
    private record Row(String protocol, int size, boolean durable, String broker, double rate, double p99Millis,
            double brokerMicros, double toolMicros, long rss, long heap, long direct, String note) {
    }

    public static void main(String[] args) throws Exception {
        Map<String, String> defaults = new LinkedHashMap<>(Map.of("sizes", "1048576,16777216", "protocols",
            "amqp10,amqp091", "durable", "false,true", "brokers", "skiffmq,artemis,rabbitmq", "duration", "15",
            "warmup", "5", "heap", "1g", "in-flight", "8", "credit", "8"));
        // benchmarks/large-messages passes the RabbitMQ node it started and PerfTest's classpath; RabbitMQ 3.10's
        // max_message_size (128 MiB) for SkiffMQ too, whose default (16 MiB, RabbitMQ 4's) a 16 MiB body passes
        defaults.putAll(Map.of("rabbitmq-uri", "", "rabbitmq-pid", "0", "perf-test-classpath",
            "benchmarks/perf-test/target/classpath", "max-message-size", "134217728", "log-dir",
            "benchmarks/target/large-messages-logs"));
        Map<String, String> options = CommandLine.parseOrExit("LargeMessages", defaults, args);
        Files.createDirectories(Path.of(options.get("log-dir")));
        List<String> brokers = List.of(options.get("brokers").split(","));
        String loadBefore = PerfTestCompare.loadAverage();
        List<Row> rows = new ArrayList<>();
        for (String protocol : options.get("protocols").split(",")) {
            for (String size : options.get("sizes").split(",")) {
                for (String durable : options.get("durable").split(",")) {
                    for (String broker : brokers) {
                        if (protocol.equals("amqp091") && broker.equals("artemis")
                                || broker.equals("rabbitmq") && options.get("rabbitmq-uri").isEmpty()) {
                            continue;
                        }
                        System.out.printf("== %s, %s B, %s, %s (load average %s)%n", protocol, size,
                            Boolean.parseBoolean(durable) ? "durable" : "transient", broker, PerfTestCompare.loadAverage());
                        Row row = run(protocol, Integer.parseInt(size), Boolean.parseBoolean(durable), broker,
                            options);
                        System.out.println(format(row));
                        rows.add(row);
                    }
                }
            }
        }
        System.out.println();
        System.out.printf(Locale.ROOT, "Large messages, 1 → 1, %s s measured after %s s warm-up, %s unconfirmed and %s "
            + "unsettled; SkiffMQ and Artemis at -Xmx%s. Load average before: %s, after: %s.%n",
            options.get("duration"), options.get("warmup"), options.get("in-flight"), options.get("credit"),
            options.get("heap"), loadBefore, PerfTestCompare.loadAverage());
        System.out.println();
        System.out.println("| protocol | body | durable | broker | msg/s | MiB/s | p99 | broker CPU/msg | load tool "
            + "CPU/msg (its ceiling, msg/s per core) | peak RSS | peak heap used | peak direct |");
        System.out.println("|---|---|---|---|---|---|---|---|---|---|---|---|");
        rows.forEach(row -> System.out.println(format(row)));
        System.exit(0);
    }

    private static String format(Row r) {
        return String.format(Locale.ROOT, "| %s | %s | %s | %s | %.1f | %.0f | %s | %s | %s | %s | %s | %s |%s",
            r.protocol().equals("amqp10") ? "AMQP 1.0" : "0-9-1", r.size() >= 1 << 20 ? (r.size() >> 20) + " MiB"
                : r.size() + " B", r.durable() ? "yes" : "no", r.broker(), r.rate(),
            r.rate() * r.size() / (1 << 20), r.p99Millis() < 0 ? "-" : String.format(Locale.ROOT, "%.0f ms",
                r.p99Millis()), micros(r.brokerMicros()), r.toolMicros() < 0 ? "-" : String.format(Locale.ROOT,
                "%s (%,.0f)", micros(r.toolMicros()), 1e6 / r.toolMicros()), mb(r.rss()), mb(r.heap()),
            mb(r.direct()), r.note().isEmpty() ? "" : " " + r.note());
    }

    private static String micros(double micros) {
        return micros < 0 ? "-" : String.format(Locale.ROOT, "%,.0f µs", micros);
    }

    private static String mb(long bytes) {
        return bytes <= 0 ? "-" : String.format(Locale.ROOT, "%,d MB", bytes >> 20);
    }

    private static Row run(String protocol, int size, boolean durable, String broker, Map<String, String> options)
            throws Exception {
        BrokerProcess process = null;
        try {
            String uri = options.get("rabbitmq-uri");
            long pid = Long.parseLong(options.get("rabbitmq-pid"));
            if (!broker.equals("rabbitmq")) {
                List<String> jvm = List.of("-Xmx" + options.get("heap"), BrokerMemory.NMT);
                process = broker.equals("skiffmq")
                    ? BrokerProcess.start(broker, jvm, List.of("--max-message-size=" + options.get("max-message-size")))
                    : BrokerProcess.start(broker, jvm, List.of("--persistence=true", "--sync=true"));
                uri = "amqp://guest:guest@127.0.0.1:" + process.port;
                pid = process.pid();
            }
            try (BrokerMemory memory = new BrokerMemory(pid, 500, process != null)) {
                memory.start();
                Row row = protocol.equals("amqp10") ? amqp10(size, durable, broker, uri, pid, options)
                    : amqp091(size, durable, broker, uri, pid, options);
                memory.close();
                return new Row(row.protocol(), size, durable, broker, row.rate(), row.p99Millis(),
                    row.brokerMicros(), row.toolMicros(), memory.highWaterRss(), memory.peakHeap.get(),
                    memory.peakDirect.get(), row.note());
            }
        } finally {
            if (process != null) {
                process.close();
            }
        }
    }

    private static Row amqp10(int size, boolean durable, String broker, String uri, long pid,
            Map<String, String> options) throws Exception {
        Map<String, String> load = LoadTool.defaults();
        load.put("uri", uri.replace("guest:guest@", ""));
        load.put("duration", options.get("duration"));
        load.put("warmup", options.get("warmup"));
        load.put("progress", "false");
        load.put("queue", "large-" + Long.toHexString(System.nanoTime()));
        load.put("broker-pid", Long.toString(pid));
        load.put("durable", Boolean.toString(durable));
        load.put("body-size", Integer.toString(size));
        load.put("in-flight", options.get("in-flight"));
        load.put("credit", options.get("credit"));
        load.put("give-up", "60");
        LoadTool.Result result = LoadTool.run(load);
        System.out.println(result.describe());
        return new Row("amqp10", size, durable, broker, result.receivedRate(), result.micros(99) / 1000.0,
            result.brokerMicrosPerMessage(), result.toolMicrosPerMessage(), 0, 0, 0,
            result.errors() > 0 ? "(" + result.errors() + " errors)" : "");
    }

    /** PerfTest in a JVM of its own, one producer and one consumer; rates from its per-second lines after warm-up. */
    private static Row amqp091(int size, boolean durable, String broker, String uri, long pid,
            Map<String, String> options) throws Exception {
        int warmup = Integer.parseInt(options.get("warmup"));
        int duration = Integer.parseInt(options.get("duration"));
        String classpath = String.join(":", Files.readAllLines(Path.of(options.get("perf-test-classpath")))).trim();
        String queue = "large-" + Long.toHexString(System.nanoTime());
        List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java")
            .toString(), "-cp", classpath, "com.rabbitmq.perf.PerfTest", "--uri", uri, "-x", "1", "-y", "1", "-u",
            queue, "-s", Integer.toString(size), "-c", options.get("in-flight"), "-q", options.get("credit"), "-z",
            Integer.toString(warmup + duration)));
        if (durable) {
            command.addAll(List.of("-f", "persistent"));
        }
        Path log = Path.of(options.get("log-dir"), String.format(Locale.ROOT, "%s-%d-%s-%s.txt", "amqp091", size,
            durable ? "durable" : "transient", broker));
        Process perfTest = new ProcessBuilder(command).redirectErrorStream(true).start();
        double received = 0;
        int seconds = 0;
        List<Long> p99 = new ArrayList<>();
        long brokerStart = -1;
        long toolStart = -1;
        long brokerEnd = 0;
        long toolEnd = 0;
        List<String> errors = new ArrayList<>();
        try (BufferedReader in = new BufferedReader(new InputStreamReader(perfTest.getInputStream(),
                StandardCharsets.UTF_8)); PrintWriter out = new PrintWriter(Files.newBufferedWriter(log))) {
            out.println(String.join(" ", command));
            for (String line; (line = in.readLine()) != null; ) {
                out.println(line);
                PerfTestCompare.Second second = PerfTestCompare.Second.parse(line);
                if (second == null) {
                    if (line.toLowerCase(Locale.ROOT).contains("exception")) {
                        errors.add(line);
                    }
                    continue;
                }
                if (brokerStart < 0 && second.time() >= warmup - 0.5) {
                    brokerStart = PerfTestCompare.ticks(pid);
                    toolStart = PerfTestCompare.ticks(perfTest.pid());
                }
                if (second.time() > warmup + 0.5 && second.time() < warmup + duration + 0.5) {
                    seconds++;
                    received += second.received();
                    if (second.p99() >= 0) {
                        p99.add(second.p99());
                    }
                    brokerEnd = PerfTestCompare.ticks(pid);
                    toolEnd = PerfTestCompare.ticks(perfTest.pid());
                }
            }
        } finally {
            if (!perfTest.waitFor(warmup + duration + 60L, TimeUnit.SECONDS)) {
                perfTest.destroyForcibly();
            }
        }
        errors.forEach(e -> System.out.println("  perf-test: " + e));
        double total = Math.max(1, received);
        double rate = seconds == 0 ? 0 : received / seconds;
        p99.sort(null);
        return new Row("amqp091", size, durable, broker, rate, p99.isEmpty() ? -1 : p99.get(p99.size() / 2) / 1000.0,
            (brokerEnd - brokerStart) / TICKS_PER_SECOND * 1e6 / total,
            (toolEnd - toolStart) / TICKS_PER_SECOND * 1e6 / total, 0, 0, 0,
            errors.isEmpty() ? "" : "(PerfTest errors: " + log + ")");
    }
}
