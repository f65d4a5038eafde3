package io.skiffmq.benchmarks;

import java.net.InetSocketAddress;
import java.net.Socket;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * SkiffMQ and ActiveMQ Artemis side by side, in one run, with the same load tool ({@link LoadTool}) and the same
 * scenarios. Each run of each scenario gets a fresh broker process; the brokers take turns, so drift on a shared
 * machine hits both alike. RabbitMQ is a third column when one answers on 127.0.0.1:5672 (as guest/guest);
 * otherwise that column says it was not run.
 *
 * <pre>
 * benchmarks/compare [--runs=3] [--duration=20] [--warmup=5] \
 *     [--scenarios=transient-1-1,durable-1-1,durable-4-1,fanout-1,fanout-10,backlog-1m,
 *                  amqp091-transient-1-1,amqp091-confirms-1-1,amqp091-fanout-5,
 *                  amqp091-confirms-q1,amqp091-cac-q1,amqp091-confirms-q4,amqp091-cac-q4,
 *                  amqp091-confirms-q8,amqp091-cac-q8,amqp091-publish-only]
 * </pre>
 *
 * The {@code amqp091-*} scenarios compare SkiffMQ with RabbitMQ over AMQP 0-9-1, driven by PerfTest
 * ({@link PerfTestCompare}); {@code amqp091-cac-q*} (confirm after consume) run on SkiffMQ only, against
 * {@code amqp091-confirms-q*} in the same rounds. The others, described here, compare SkiffMQ with Artemis over
 * AMQP 1.0.
 *
 * Fanout is a JMS topic with one subscription per receiver: {@code amq.topic} and a transient queue per subscriber
 * in SkiffMQ, a multicast address in Artemis. The backlog scenario fills the queue first, then times the drain.
 *
 * SkiffMQ runs with {@code durable-if-no-header=false}: Qpid JMS sends non-persistent messages without a header,
 * which Artemis (and the AMQP default) treat as transient. RabbitMQ treats them as durable, so its transient
 * row is not like for like. Both brokers sync durable messages to disk before confirming them (SkiffMQ {@code
 * sync-policy=sync}, Artemis's NIO journal with sync on). The load tool runs in this JVM, on the same cores as the
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
        new Scenario("fanout-1", "fanout to 1 subscriber (JMS topic), transient", Map.of("topic", "true")),
        new Scenario("fanout-10", "fanout to 10 subscribers (JMS topic), transient; msg/s received in all",
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
        // AMQP 0-9-1: benchmarks/compare passes the RabbitMQ node it started and PerfTest's classpath
        defaults.put("rabbitmq-uri", "");
        defaults.put("rabbitmq-pid", "0");
        defaults.put("rabbitmq-version", "RabbitMQ");
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

    /** The AMQP 1.0 scenarios: SkiffMQ and Artemis (and RabbitMQ, when one answers on :5672) with the load tool. */
    private static void amqp10(Map<String, String> options, List<String> wanted) throws Exception {
        int runs = Integer.parseInt(options.get("runs"));
        boolean rabbit = reachable(5672);
        List<String> table = new ArrayList<>();
        for (Scenario scenario : SCENARIOS) {
            if (!wanted.contains(scenario.name())) {
                continue;
            }
            Map<String, List<LoadTool.Result>> results = new LinkedHashMap<>();
            for (int run = 0; run < runs; run++) {
                for (String broker : rabbit ? List.of("skiffmq", "artemis", "rabbitmq")
                        : List.of("skiffmq", "artemis")) {
                    System.out.printf("== %s, run %d of %d, %s%n", scenario.name(), run + 1, runs, broker);
                    results.computeIfAbsent(broker, b -> new ArrayList<>()).add(run(broker, scenario, options));
                }
            }
            table.add(row(scenario, results, rabbit));
        }
        System.out.println();
        System.out.printf("SkiffMQ against ActiveMQ Artemis 2.55.0%s: received msg/s (end to end) as median "
            + "[min-max] of %d run(s), %s s each after %s s warm-up; 12-byte bodies, credit 1000, 1,000 unconfirmed "
            + "per sender.%n", rabbit ? " and RabbitMQ" : "", runs, options.get("duration"), options.get("warmup"));
        System.out.println("The load tool (Qpid JMS) and the brokers share this machine's cores: unpaced latency "
            + "includes any backlog the receiver leaves.");
        System.out.println();
        System.out.println("| scenario | SkiffMQ msg/s | Artemis msg/s | ratio | SkiffMQ p99 | Artemis p99 "
            + "| RabbitMQ msg/s |");
        System.out.println("|---|---|---|---|---|---|---|");
        table.forEach(System.out::println);
        System.out.println();
    }

    private static String row(Scenario scenario, Map<String, List<LoadTool.Result>> results, boolean rabbit) {
        double skiff = median(results.get("skiffmq"));
        double artemis = median(results.get("artemis"));
        return String.format(Locale.ROOT, "| %s | %s | %s | %.2f | %s | %s | %s |", scenario.description(),
            spread(results.get("skiffmq")), spread(results.get("artemis")), skiff / Math.max(1, artemis),
            p99(results.get("skiffmq")), p99(results.get("artemis")),
            rabbit ? spread(results.get("rabbitmq")) : "not run (none on :5672)");
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
        long[] p99 = results.stream().mapToLong(r -> r.micros(99)).sorted().toArray();
        return String.format(Locale.ROOT, "%.1f ms", p99[p99.length / 2] / 1000.0);
    }

    private static boolean reachable(int port) {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress("127.0.0.1", port), 500);
            return true;
        } catch (java.io.IOException e) {
            return false;
        }
    }

    /** One run of a scenario against a fresh broker of the given kind (RabbitMQ: the one already running). */
    private static LoadTool.Result run(String broker, Scenario scenario, Map<String, String> options) throws Exception {
        BrokerProcess process = null;
        try {
            int port = 5672;
            if (broker.equals("skiffmq")) {
                // JMS sends non-persistent messages without a header: transient for Artemis and the AMQP default,
                // durable by SkiffMQ's RabbitMQ-like default; the comparison uses the AMQP default on both
                process = BrokerProcess.start(broker, List.of(), List.of("--durable-if-no-header=false"));
            } else if (broker.equals("artemis")) {
                process = BrokerProcess.start(broker, List.of(), List.of("--persistence=true", "--sync=true"));
            }
            if (process != null) {
                port = process.port;
            }
            Map<String, String> load = LoadTool.defaults();
            load.put("uri", "amqp://127.0.0.1:" + port);
            load.put("duration", options.get("duration"));
            load.put("warmup", options.get("warmup"));
            load.put("progress", "false");
            load.put("queue", "compare-" + System.nanoTime());
            load.putAll(scenario.load());
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
