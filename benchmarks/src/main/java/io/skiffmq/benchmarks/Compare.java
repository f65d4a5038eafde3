package io.skiffmq.benchmarks;

import java.net.InetSocketAddress;
import java.net.Socket;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.ToDoubleFunction;

/**
 * SkiffMQ and ActiveMQ Artemis side by side, in one run, with the same load tool ({@link LoadTool}) and the same
 * scenarios. Each run of each scenario gets a fresh broker process; the brokers take turns, so drift on a shared
 * machine hits both alike. RabbitMQ is a third column when one answers on 127.0.0.1:5672 (as guest/guest);
 * otherwise that column says it was not run.
 *
 * <pre>
 * benchmarks/compare [--runs=3] [--duration=20] [--warmup=5] [--engine=lean|jms] [--half-rate=true] \
 *     [--scenarios=transient-1-1,durable-1-1,durable-4-1,fanout-1,fanout-10,backlog-1m,
 *                  amqp091-transient-1-1,amqp091-confirms-1-1,amqp091-fanout-5,
 *                  amqp091-confirms-q1,amqp091-cac-q1,amqp091-confirms-q4,amqp091-cac-q4,
 *                  amqp091-confirms-q8,amqp091-cac-q8,amqp091-quorum-c1,amqp091-quorum-c20,
 *                  amqp091-quorum-c1000,amqp091-quorum-2-2,amqp091-publish-only]
 * </pre>
 *
 * The {@code amqp091-*} scenarios compare SkiffMQ with RabbitMQ over AMQP 0-9-1, driven by PerfTest
 * ({@link PerfTestCompare}); {@code amqp091-cac-q*} (confirm after consume) run on SkiffMQ only, against
 * {@code amqp091-confirms-q*} in the same rounds. The others, described here, compare SkiffMQ with Artemis over
 * AMQP 1.0.
 *
 * <p>The load tool runs in this JVM with its lean engine by default ({@link LeanEngine}: AMQP 1.0 on the project's
 * codec, one I/O thread), or Qpid JMS with {@code --engine=jms}. Both brokers run in JVMs of their own
 * ({@link BrokerProcess}; Artemis embedded in {@link ArtemisBroker}), so each one's CPU time per message received
 * comes from its own {@code /proc/PID/stat} over the measured window, and the load tool's from this process's.
 * With {@code --half-rate=true} (the default) every unpaced run but the backlog drain is followed by a run paced at
 * half the rate it received, on a fresh broker, for the latency at half the maximum rate.
 *
 * <p>Fanout is a topic with one non-durable subscription per receiver: {@code amq.topic} and a transient queue per
 * subscriber in SkiffMQ, a multicast address in Artemis. The backlog scenario fills the queue first, then times
 * the drain.
 *
 * <p>The lean engine puts a header on every message, durable or not. SkiffMQ still runs with
 * {@code durable-if-no-header=false} for the JMS engine: Qpid JMS sends non-persistent messages without a header,
 * which Artemis (and the AMQP default) treat as transient; RabbitMQ treats them as durable, so its transient row is
 * not like for like with that engine. Both brokers sync durable messages to disk before confirming them (SkiffMQ
 * {@code sync-policy=sync}, Artemis's NIO journal with sync on). The load tool runs on the same cores as the
 * brokers.
 */
public final class Compare {
    /** A scenario: the load tool's settings. */
    private record Scenario(String name, String description, Map<String, String> load) {
    }

    private static final List<Scenario> SCENARIOS = List.of(
        new Scenario("transient-1-1", "transient, 1 sender -> 1 queue -> 1 receiver", Map.of("durable", "false")),
        new Scenario("durable-1-1", "durable, unsettled publish, 1 -> 1 -> 1", Map.of("durable", "true")),
        new Scenario("durable-4-1", "durable, 4 senders -> 1 queue -> 1 receiver",
            Map.of("durable", "true", "senders", "4")),
        new Scenario("fanout-1", "fanout to 1 subscriber (topic), transient", Map.of("topic", "true")),
        new Scenario("fanout-10", "fanout to 10 subscribers (topic), transient; msg/s received in all",
            Map.of("topic", "true", "receivers", "10")),
        new Scenario("backlog-1m", "backlog of 1,000,000 durable messages drained by 1 receiver",
            Map.of("durable", "true", "count", "1000000", "backlog", "true")));

    private Compare() {
    }

    public static void main(String[] args) throws Exception {
        List<String> all = new ArrayList<>(SCENARIOS.stream().map(Scenario::name).toList());
        all.addAll(PerfTestCompare.names());
        Map<String, String> defaults = new LinkedHashMap<>(Map.of("runs", "3", "duration", "20", "warmup", "5",
            "scenarios", String.join(",", all)));
        // AMQP 1.0: the load tool's engine, and whether each run is followed by one paced at half its rate
        defaults.put("engine", "lean");
        defaults.put("half-rate", "true");
        // AMQP 0-9-1: benchmarks/compare passes the RabbitMQ node it started and PerfTest's classpath
        defaults.put("rabbitmq-uri", "");
        defaults.put("rabbitmq-pid", "0");
        defaults.put("rabbitmq-version", "RabbitMQ");
        // AMQP 0-9-1: a SkiffMQ already running (a cluster's node, benchmarks/quorum-cluster) instead of a fresh
        // broker per run
        defaults.put("skiffmq-uri", "");
        defaults.put("skiffmq-pid", "0");
        defaults.put("perf-test-classpath", "benchmarks/perf-test/target/classpath");
        defaults.put("log-dir", "benchmarks/target/compare-logs");
        // a directory: every SkiffMQ and PerfTest JVM of the AMQP 0-9-1 scenarios records a JFR profile there
        defaults.put("jfr", "");
        Map<String, String> options = CommandLine.parseOrExit("compare", defaults, args);
        List<String> wanted = Arrays.asList(options.get("scenarios").split(","));
        for (String name : wanted) {
            if (!all.contains(name)) {
                System.err.println("unknown scenario " + name + "; the scenarios are " + all);
                System.exit(2);
            }
        }
        if (SCENARIOS.stream().anyMatch(s -> wanted.contains(s.name()))) {
            amqp10(options, wanted);
        }
        if (PerfTestCompare.names().stream().anyMatch(wanted::contains)) {
            new PerfTestCompare(options).run(wanted);
        }
        System.exit(0);
    }

    /** One unpaced run of a scenario on one broker, and the run paced at half its rate (null when not run). */
    private record Runs(LoadTool.Result max, LoadTool.Result half) {
    }

    /** The AMQP 1.0 scenarios: SkiffMQ and Artemis (and RabbitMQ, when one answers on :5672) with the load tool. */
    private static void amqp10(Map<String, String> options, List<String> wanted) throws Exception {
        int runs = Integer.parseInt(options.get("runs"));
        boolean halfRate = Boolean.parseBoolean(options.get("half-rate"));
        boolean rabbit = reachable(5672);
        List<String> table = new ArrayList<>();
        for (Scenario scenario : SCENARIOS) {
            if (!wanted.contains(scenario.name())) {
                continue;
            }
            boolean paced = halfRate && !scenario.load().containsKey("backlog");
            Map<String, List<Runs>> results = new LinkedHashMap<>();
            for (int run = 0; run < runs; run++) {
                for (String broker : rabbit ? List.of("skiffmq", "artemis", "rabbitmq")
                        : List.of("skiffmq", "artemis")) {
                    System.out.printf("== %s, run %d of %d, %s%n", scenario.name(), run + 1, runs, broker);
                    LoadTool.Result max = run(broker, scenario, options, 0);
                    LoadTool.Result half = null;
                    if (paced) {
                        long rate = Math.max(1, Math.round(max.receivedRate() / fanout(scenario) / 2));
                        System.out.printf("== %s, run %d of %d, %s, paced at %,d msg/s%n", scenario.name(), run + 1,
                            runs, broker, rate);
                        half = run(broker, scenario, options, rate);
                    }
                    results.computeIfAbsent(broker, b -> new ArrayList<>()).add(new Runs(max, half));
                }
            }
            table.add(row(scenario, results, rabbit));
        }
        System.out.println();
        System.out.printf("SkiffMQ against ActiveMQ Artemis 2.55.0%s: received msg/s (end to end) as median "
            + "[min-max] of %d run(s), %s s each after %s s warm-up; 12-byte bodies, credit 1000, 1,000 unconfirmed "
            + "per sender; the %s load tool engine.%n", rabbit ? " and RabbitMQ" : "", runs, options.get("duration"),
            options.get("warmup"), options.get("engine"));
        System.out.println("The load tool and the brokers share this machine's cores: unpaced latency includes any "
            + "backlog the receiver leaves. CPU: each broker process's CPU time per message received (median), and "
            + "the load tool's own in the same runs; p99 at half rate: a run paced at half the rate the unpaced "
            + "run received.");
        System.out.println();
        System.out.println("| scenario | SkiffMQ msg/s | Artemis msg/s | ratio | SkiffMQ CPU/msg | Artemis CPU/msg "
            + "| load tool CPU/msg (SkiffMQ / Artemis runs) | SkiffMQ p99 | Artemis p99 | SkiffMQ p99 at half rate "
            + "| Artemis p99 at half rate | RabbitMQ msg/s |");
        System.out.println("|---|---|---|---|---|---|---|---|---|---|---|---|");
        table.forEach(System.out::println);
        System.out.println();
    }

    /** Deliveries per message sent: the receivers of a topic each get every message. */
    private static int fanout(Scenario scenario) {
        return Boolean.parseBoolean(scenario.load().get("topic"))
            ? Integer.parseInt(scenario.load().getOrDefault("receivers", "1")) : 1;
    }

    private static String row(Scenario scenario, Map<String, List<Runs>> results, boolean rabbit) {
        List<LoadTool.Result> skiff = results.get("skiffmq").stream().map(Runs::max).toList();
        List<LoadTool.Result> artemis = results.get("artemis").stream().map(Runs::max).toList();
        return String.format(Locale.ROOT, "| %s | %s | %s | %.2f | %s | %s | %s / %s | %s | %s | %s | %s | %s |",
            scenario.description(), spread(skiff), spread(artemis), median(skiff) / Math.max(1, median(artemis)),
            cpu(skiff, LoadTool.Result::brokerMicrosPerMessage), cpu(artemis, LoadTool.Result::brokerMicrosPerMessage),
            cpu(skiff, LoadTool.Result::toolMicrosPerMessage), cpu(artemis, LoadTool.Result::toolMicrosPerMessage),
            p99(skiff), p99(artemis), p99(halves(results.get("skiffmq"))),
            p99(halves(results.get("artemis"))),
            rabbit ? spread(results.get("rabbitmq").stream().map(Runs::max).toList()) : "not run (none on :5672)");
    }

    private static List<LoadTool.Result> halves(List<Runs> runs) {
        return runs.stream().map(Runs::half).filter(java.util.Objects::nonNull).toList();
    }

    private static double median(List<LoadTool.Result> results) {
        double[] rates = results.stream().mapToDouble(LoadTool.Result::receivedRate).sorted().toArray();
        return rates[rates.length / 2];
    }

    private static String spread(List<LoadTool.Result> results) {
        double[] rates = results.stream().mapToDouble(LoadTool.Result::receivedRate).sorted().toArray();
        return String.format(Locale.ROOT, "%,.0f [%,.0f-%,.0f]", rates[rates.length / 2], rates[0],
            rates[rates.length - 1]);
    }

    private static String p99(List<LoadTool.Result> results) {
        if (results.isEmpty()) {
            return "-";
        }
        long[] p99 = results.stream().mapToLong(r -> r.micros(99)).sorted().toArray();
        return String.format(Locale.ROOT, "%.1f ms", p99[p99.length / 2] / 1000.0);
    }

    /** The median of a CPU time per message, in µs; "-" when not measured. */
    private static String cpu(List<LoadTool.Result> results, ToDoubleFunction<LoadTool.Result> micros) {
        double[] sorted = results.stream().mapToDouble(micros).sorted().toArray();
        double median = sorted[sorted.length / 2];
        return median < 0 ? "-" : String.format(Locale.ROOT, "%.2f µs", median);
    }

    private static boolean reachable(int port) {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress("127.0.0.1", port), 500);
            return true;
        } catch (java.io.IOException e) {
            return false;
        }
    }

    /**
     * One run of a scenario against a fresh broker of the given kind (RabbitMQ: the one already running).
     *
     * @param rate msg/s to pace the senders to in all, 0 for unpaced
     */
    private static LoadTool.Result run(String broker, Scenario scenario, Map<String, String> options, long rate)
            throws Exception {
        BrokerProcess process = null;
        try {
            int port = 5672;
            long pid = 0; // RabbitMQ's CPU is not measured: which process answers on :5672 is not ours to know
            if (broker.equals("skiffmq")) {
                // JMS sends non-persistent messages without a header: transient for Artemis and the AMQP default,
                // durable by SkiffMQ's RabbitMQ-like default; the comparison uses the AMQP default on both
                process = BrokerProcess.start(broker, List.of(), List.of("--durable-if-no-header=false"));
            } else if (broker.equals("artemis")) {
                process = BrokerProcess.start(broker, List.of(), List.of("--persistence=true", "--sync=true"));
            }
            if (process != null) {
                port = process.port;
                pid = process.pid();
            }
            Map<String, String> load = LoadTool.defaults();
            load.put("uri", "amqp://127.0.0.1:" + port);
            load.put("duration", options.get("duration"));
            load.put("warmup", options.get("warmup"));
            load.put("progress", "false");
            load.put("queue", "compare-" + System.nanoTime());
            load.put("engine", options.get("engine"));
            load.put("broker-pid", Long.toString(pid));
            load.putAll(scenario.load());
            load.put("rate", Long.toString(rate));
            LoadTool.Result result = LoadTool.run(load);
            System.out.println(result.describe());
            return result;
        } finally {
            if (process != null) {
                process.close();
            }
        }
    }
}
