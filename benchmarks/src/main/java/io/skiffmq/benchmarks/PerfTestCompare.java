package io.skiffmq.benchmarks;

import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * AMQP 0-9-1 side by side: SkiffMQ and RabbitMQ driven by RabbitMQ's PerfTest, with the same flags, in one run.
 * {@code benchmarks/compare} starts the RabbitMQ node ({@code benchmarks/rabbitmq-node}: a node of its own on
 * loopback) and resolves PerfTest's classpath ({@code benchmarks/perf-test/pom.xml}); {@link Compare} hands them here.
 *
 * <p>Every run is PerfTest in a JVM of its own for {@code warmup + duration} seconds. Rates are the means of PerfTest's
 * per-second lines after the warm-up; p50 and p99 are the medians, over those seconds, of the per-second consumer
 * latency percentiles PerfTest prints. Each SkiffMQ run gets a fresh broker ({@link BrokerProcess}, default settings:
 * {@code sync-policy=sync}), unless {@code --skiffmq-uri} names one that runs already (a cluster's node, whose pid is
 * {@code --skiffmq-pid}); RabbitMQ is one node for the whole run, and each run uses queues of its own that go
 * with it. Rounds are interleaved (every scenario on both brokers, then the next round) and the brokers' order
 * alternates from round to round; the ratio is taken within each round.
 *
 * <p>Besides the rates, each run measures the CPU (in cores, from {@code /proc}) of the broker, of PerfTest, and of
 * everything else on the machine over the measured seconds: the load tool shares the cores with the brokers, and a
 * PerfTest that is near its own limit measures itself. The {@code amqp091-publish-only} scenario is that limit for
 * publishing: one PerfTest producer into an exchange with nothing bound, so the broker drops every message.
 *
 * <p>The {@code amqp091-cac-q*} scenarios are SkiffMQ's {@code x-confirm-after-consume} (seed 002: the publisher's
 * confirm waits for the consumer's ack): run on SkiffMQ only, and compared with their {@link Scenario#baseline}, the
 * same flags without the argument, within each round. The scenarios' order alternates from round to round as the
 * brokers' does, and the two SkiffMQ runs of a pair are always next to each other, taking turns to go first, so
 * they share the machine's drift as far as they can.
 */
final class PerfTestCompare {
    /**
     * A scenario: PerfTest's flags; {@code %Q} is replaced by names unique to the run.
     *
     * @param skiffmqOnly run on SkiffMQ only: it uses what RabbitMQ does not have ({@code x-confirm-after-consume})
     * @param baseline the scenario this one is compared with on SkiffMQ, round by round; null for none
     * @param topology what is declared before PerfTest starts, and deleted after it
     * @param queues the queues it publishes to and consumes from (its label in the confirm-after-consume table)
     */
    record Scenario(String name, String description, List<String> flags, Topology topology,
            boolean skiffmqOnly, String baseline, int queues) {
        Scenario(String name, String description, List<String> flags, Topology topology) {
            this(name, description, flags, topology, false, null, 1);
        }

        boolean publishOnly() {
            return !flags.contains("-y") || flags.get(flags.indexOf("-y") + 1).equals("0");
        }

        List<String> brokers(int round) {
            if (skiffmqOnly) {
                return List.of("skiffmq");
            }
            return round % 2 == 1 ? List.of("skiffmq", "rabbitmq") : List.of("rabbitmq", "skiffmq");
        }
    }

    /**
     * Durable queues {@code %Q-1} to {@code %Q-N} bound to {@code exchange}, the i-th with {@code keys[i - 1]}, for
     * PerfTest's {@code -p} (predeclared) and {@code --queue-pattern}; and {@code unrelatedBindings} more bindings of
     * {@code exchange} to one queue {@code %Q-unrelated}, with keys no message of the run matches
     * ({@link #unrelatedKey}).
     */
    record Topology(String exchange, List<String> keys, int unrelatedBindings) {
        static final Topology NONE = new Topology("", List.of(), 0);

        /**
         * The i-th unrelated topic key, in three shapes that each share a word with the run's routing key
         * {@code orders.eu.created} (so the lookup walks past them in the same trie nodes) and never match it.
         */
        static String unrelatedKey(int i) {
            return switch (i % 3) {
                case 0 -> "orders.r" + i + ".*";
                case 1 -> "*.r" + i + ".created";
                default -> "r" + i + ".#";
            };
        }
    }

    /** Patterns that all match the routing key {@code orders.eu.created}, cycled over the topic scenario's queues. */
    static final List<String> MATCHING = List.of("orders.eu.created", "orders.*.created", "orders.#", "#.created",
        "*.eu.*", "#");

    /** The confirm-after-consume queue argument as PerfTest's {@code -qa} sends it: "true" becomes a boolean. */
    static final String CONFIRM_AFTER_CONSUME = "x-confirm-after-consume=true";

    static final List<Scenario> SCENARIOS;

    static {
        List<Scenario> scenarios = new ArrayList<>(List.of(
            new Scenario("amqp091-transient-1-1", "1 → 1 transient, autoack, 12 B",
                List.of("-x", "1", "-y", "1", "-u", "%Q", "-s", "12", "--autoack"), Topology.NONE),
            new Scenario("amqp091-confirms-1-1",
                "1 → 1 persistent, confirms (1,000 in flight), multi-ack every 100, qos 1,000, 12 B",
                List.of("-x", "1", "-y", "1", "-u", "%Q", "-s", "12", "-f", "persistent", "-c", "1000",
                    "--multi-ack-every", "100", "-q", "1000"), Topology.NONE),
            // seed 001's "-p -e amq.fanout -u q1 -s 5 --autoack", with five predeclared durable queues bound to
            // amq.fanout instead of one, a consumer on each (PerfTest pads bodies to 12 bytes: sequence and timestamp)
            new Scenario("amqp091-fanout-5", "amq.fanout → 5 queues, autoack (seed 001's flags); received in all 5",
                List.of("-p", "-e", "amq.fanout", "--queue-pattern", "%Q-%d", "--queue-pattern-from", "1",
                    "--queue-pattern-to", "5", "-x", "1", "-y", "5", "-s", "5", "--autoack"),
                new Topology("amq.fanout", Collections.nCopies(5, ""), 0)),
            // issue 30 item 6: one publisher, 100 subscribers whose patterns match its key, among 100,000 bindings
            // that do not match it
            new Scenario("amqp091-topic-100k", "amq.topic, 100,000 bindings; 1 publisher (orders.eu.created) → 100 "
                + "queues whose patterns match, autoack, 12 B; received in all 100",
                List.of("-p", "-e", "amq.topic", "-k", "orders.eu.created", "--queue-pattern", "%Q-%d",
                    "--queue-pattern-from", "1", "--queue-pattern-to", "100", "-x", "1", "-y", "100", "-s", "12",
                    "--autoack"),
                new Topology("amq.topic", java.util.stream.IntStream.range(0, 100)
                    .mapToObj(i -> MATCHING.get(i % MATCHING.size())).toList(), 99_900))));
        // confirm after consume against ordinary confirms with 1, 4 and 8 queues (seed 002's comparison): one
        // producer and one consumer per queue, persistent 12-byte messages, 1,000 unconfirmed per producer,
        // multi-ack every 100, qos 1,000; the same flags with and without the queue argument
        for (int queues : new int[] {1, 4, 8}) {
            String n = String.valueOf(queues);
            List<String> flags = List.of("--queue-pattern", "%Q-%d", "--queue-pattern-from", "1",
                "--queue-pattern-to", n, "-x", n, "-y", n, "-s", "12", "-f", "persistent", "-c", "1000",
                "--multi-ack-every", "100", "-q", "1000");
            String layout = queues + " queue" + (queues == 1 ? "" : "s") + ", 1 producer → 1 consumer each, "
                + "persistent, 1,000 unconfirmed per producer, multi-ack every 100, qos 1,000, 12 B";
            String ordinary = "amqp091-confirms-q" + n;
            List<String> cac = new ArrayList<>(flags);
            cac.addAll(List.of("-qa", CONFIRM_AFTER_CONSUME));
            // CAC before its baseline: SkiffMQ comes first in odd rounds and last in even ones, when the order of
            // the scenarios is reversed, so the two SkiffMQ runs of a pair are always next to each other, in turns
            scenarios.add(new Scenario("amqp091-cac-q" + n, layout + ", x-confirm-after-consume", List.copyOf(cac),
                Topology.NONE, true, ordinary, queues));
            scenarios.add(new Scenario(ordinary, layout + ", ordinary confirms", flags, Topology.NONE, false, null,
                queues));
        }
        // issue 28: one quorum queue, 1 KB, 1 → 1, qos 1,000, with 1, 20 and 1,000 confirms in flight; then 2 → 2
        // at 10 B. PerfTest's --quorum-queue declares x-queue-type=quorum and publishes persistent messages.
        for (int inFlight : new int[] {1, 20, 1000}) {
            scenarios.add(new Scenario("amqp091-quorum-c" + inFlight, String.format(Locale.ROOT,
                "quorum queue, 1 → 1, 1 KB, %,d unconfirmed, qos 1,000, manual acks", inFlight),
                List.of("--quorum-queue", "-u", "%Q", "-x", "1", "-y", "1", "-s", "1000", "-c",
                    String.valueOf(inFlight), "-q", "1000"), Topology.NONE));
        }
        scenarios.add(new Scenario("amqp091-quorum-2-2", "quorum queue, 2 → 2, 10 B, 1,000 unconfirmed per "
            + "producer, qos 1,000, manual acks", List.of("--quorum-queue", "-u", "%Q", "-x", "2", "-y", "2", "-s",
            "10", "-c", "1000", "-q", "1000"), Topology.NONE));
        scenarios.add(new Scenario("amqp091-publish-only",
            "ceiling: 1 publisher, 12 B, into a fanout exchange with nothing bound (dropped); published msg/s",
            List.of("-x", "1", "-y", "0", "-e", "%Q", "-t", "fanout", "-s", "12"), Topology.NONE));
        SCENARIOS = List.copyOf(scenarios);
    }

    /** PerfTest's line for one second; the fields between the time and the rates depend on the flags. */
    private static final Pattern SECOND = Pattern.compile("time:? ([0-9.]+) ?s, sent: (\\d+) msg/s");
    private static final Pattern CONFIRMED = Pattern.compile(", confirmed: (\\d+) msg/s");
    private static final Pattern NACKED = Pattern.compile(", nacked: (\\d+) msg/s");
    private static final Pattern RECEIVED = Pattern.compile(", received: (\\d+) msg/s");
    private static final Pattern CONSUMER_LATENCY = Pattern.compile(
        "consumer latency: (\\d+)/(\\d+)/(\\d+)/(\\d+)/(\\d+) µs");
    private static final Pattern CONFIRM_LATENCY = Pattern.compile(
        "confirm latency: (\\d+)/(\\d+)/(\\d+)/(\\d+)/(\\d+) µs");
    private static final Pattern SUMMARY = Pattern.compile("rate avg|latency min");
    /** USER_HZ: the unit of utime and stime in /proc/PID/stat (100 on every Linux we run). */
    private static final double TICKS_PER_SECOND = 100;

    /** One PerfTest run: rates over the measured seconds, median per-second latency, CPU in cores. */
    record Result(double sent, double confirmed, double nacked, double received, long p50, long p99,
            long confirmP50, long confirmP99, double brokerCores, double toolCores, double otherCores, int seconds,
            List<String> summary) {
        /** The rate the table compares: received in all consumers, or published when there is no consumer. */
        double rate(Scenario scenario) {
            return scenario.publishOnly() ? sent : received;
        }

        /** The broker's CPU time per message of {@link #rate}, in µs: what it costs, whatever the tool's limit. */
        double brokerMicros(Scenario scenario) {
            return brokerCores * 1e6 / Math.max(1, rate(scenario));
        }

        String describe() {
            return String.format(Locale.ROOT, "%d s measured: sent %,.0f msg/s, confirmed %,.0f msg/s, nacked "
                + "%,.0f msg/s, received %,.0f msg/s, consumer latency p50 %s, p99 %s, confirm latency p50 %s, p99 %s "
                + "(medians of the per-second figures); CPU cores: broker %.2f, PerfTest %.2f, other %.2f", seconds,
                sent, confirmed, nacked, received, PerfTestTables.ms(p50), PerfTestTables.ms(p99), PerfTestTables.ms(confirmP50), PerfTestTables.ms(confirmP99), brokerCores,
                toolCores, otherCores);
        }
    }

    /** CPU counters at one moment. */
    private record Cpu(long nanos, long brokerTicks, long toolTicks, long machineBusy, long machineAll) {
        static Cpu now(long brokerPid, long toolPid) {
            long[] machine = machine();
            return new Cpu(System.nanoTime(), ticks(brokerPid), ticks(toolPid), machine[0], machine[1]);
        }
    }

    private final Map<String, String> options;
    private final String perfTestClasspath;
    private final String rabbitUri;
    private final long rabbitPid;
    private final Path logs;

    PerfTestCompare(Map<String, String> options) throws IOException {
        this.options = options;
        this.perfTestClasspath = String.join(":", Files.readAllLines(Path.of(options.get("perf-test-classpath"))))
            .trim();
        this.rabbitUri = options.get("rabbitmq-uri");
        this.rabbitPid = Long.parseLong(options.get("rabbitmq-pid"));
        this.logs = Path.of(options.get("log-dir"));
        Files.createDirectories(logs);
        if (!options.get("jfr").isEmpty()) {
            Files.createDirectories(Path.of(options.get("jfr")));
        }
    }

    static List<String> names() {
        return SCENARIOS.stream().map(Scenario::name).toList();
    }

    /** Runs the wanted scenarios in interleaved rounds and prints the tables. */
    void run(List<String> wanted) throws Exception {
        if (rabbitUri.isEmpty()) {
            throw new IllegalArgumentException("the AMQP 0-9-1 scenarios need --rabbitmq-uri and --rabbitmq-pid "
                + "(run them through benchmarks/compare, which starts a RabbitMQ node)");
        }
        List<Scenario> scenarios = SCENARIOS.stream().filter(s -> wanted.contains(s.name())).toList();
        int rounds = Integer.parseInt(options.get("runs"));
        String loadBefore = loadAverage();
        Map<Scenario, Map<String, List<Result>>> results = new LinkedHashMap<>();
        scenarios.forEach(scenario -> results.put(scenario, new LinkedHashMap<>()));
        for (int round = 1; round <= rounds; round++) {
            // the scenarios' order alternates too, so drift over a round hits both of a compared pair alike
            List<Scenario> inOrder = new ArrayList<>(scenarios);
            if (round % 2 == 0) {
                Collections.reverse(inOrder);
            }
            for (Scenario scenario : inOrder) {
                for (String broker : scenario.brokers(round)) {
                    System.out.printf("== %s, round %d of %d, %s (load average %s)%n", scenario.name(), round, rounds,
                        broker, loadAverage());
                    Result result = run(scenario, broker, round);
                    System.out.println(result.describe());
                    results.get(scenario).computeIfAbsent(broker, b -> new ArrayList<>()).add(result);
                }
            }
        }
        String loadAfter = loadAverage();
        System.out.println();
        System.out.printf(Locale.ROOT, "AMQP 0-9-1, PerfTest 2.22.1: SkiffMQ against %s, %d round(s), %s s measured "
            + "after %s s warm-up; median [min-max] over the rounds; the ratio is SkiffMQ / RabbitMQ within a round. "
            + "Load average (1, 5, 15 min) before: %s, after: %s.%n", options.get("rabbitmq-version"), rounds,
            options.get("duration"), options.get("warmup"), loadBefore, loadAfter);
        System.out.println();
        PerfTestTables.print(results);
        System.out.println();
        System.out.println("PerfTest's output, run by run: " + logs);
    }

    /** One run of a scenario: a fresh SkiffMQ, or the RabbitMQ node, and PerfTest in a JVM of its own. */
    private Result run(Scenario scenario, String broker, int round) throws Exception {
        String name = "bench-" + scenario.name() + "-r" + round + "-" + Long.toHexString(System.nanoTime());
        BrokerProcess process = null;
        try {
            String uri = rabbitUri;
            long brokerPid = rabbitPid;
            if (broker.equals("skiffmq") && !options.get("skiffmq-uri").isEmpty()) {
                uri = options.get("skiffmq-uri");
                brokerPid = Long.parseLong(options.get("skiffmq-pid"));
            } else if (broker.equals("skiffmq")) {
                List<String> jvm = new ArrayList<>();
                if (!options.get("jfr").isEmpty()) {
                    Path jfr = Path.of(options.get("jfr")).toAbsolutePath();
                    jvm.add("-XX:StartFlightRecording=settings=profile,dumponexit=true,filename="
                        + jfr.resolve(scenario.name() + "-r" + round + ".jfr"));
                }
                process = BrokerProcess.start("skiffmq", jvm, List.of());
                uri = "amqp://guest:guest@127.0.0.1:" + process.port;
                brokerPid = process.pid();
            }
            List<String> queues = declare(uri, scenario.topology(), name);
            try {
                return perfTest(scenario, broker, round, uri, brokerPid, name);
            } finally {
                deleteQueues(uri, queues);
            }
        } finally {
            if (process != null) {
                process.close();
            }
        }
    }

    private Result perfTest(Scenario scenario, String broker, int round, String uri, long brokerPid, String name)
            throws Exception {
        int warmup = Integer.parseInt(options.get("warmup"));
        int duration = Integer.parseInt(options.get("duration"));
        List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java")
            .toString()));
        if (!options.get("jfr").isEmpty()) {
            command.add("-XX:StartFlightRecording=settings=profile,dumponexit=true,filename=" + Path.of(
                options.get("jfr")).toAbsolutePath().resolve("perf-test-" + scenario.name() + "-" + broker + "-r"
                + round + ".jfr"));
        }
        command.addAll(List.of("-cp", perfTestClasspath, "com.rabbitmq.perf.PerfTest", "--uri", uri, "--id", name,
            "-z", String.valueOf(warmup + duration)));
        scenario.flags().forEach(flag -> command.add(flag.replace("%Q", name)));
        Path log = logs.resolve(String.format(Locale.ROOT, "r%d-%s-%s.txt", round, scenario.name(), broker));
        Process perfTest = new ProcessBuilder(command).redirectErrorStream(true).start();
        double sent = 0;
        double confirmed = 0;
        double nacked = 0;
        double received = 0;
        int seconds = 0;
        List<Long> p50 = new ArrayList<>();
        List<Long> p99 = new ArrayList<>();
        List<Long> confirmP50 = new ArrayList<>();
        List<Long> confirmP99 = new ArrayList<>();
        List<String> summary = new ArrayList<>();
        Cpu start = null;
        Cpu end = null;
        try (BufferedReader in = new BufferedReader(new InputStreamReader(perfTest.getInputStream(),
                StandardCharsets.UTF_8)); PrintWriter out = new PrintWriter(Files.newBufferedWriter(log))) {
            out.println(String.join(" ", command));
            for (String line; (line = in.readLine()) != null; ) {
                out.println(line);
                Second second = Second.parse(line);
                if (second != null) {
                    if (start == null && second.time() >= warmup - 0.5) {
                        start = Cpu.now(brokerPid, perfTest.pid());
                    }
                    if (second.time() > warmup + 0.5 && second.time() < warmup + duration + 0.5) {
                        seconds++;
                        sent += second.sent();
                        confirmed += second.confirmed();
                        nacked += second.nacked();
                        received += second.received();
                        addIfMeasured(p50, second.p50());
                        addIfMeasured(p99, second.p99());
                        addIfMeasured(confirmP50, second.confirmP50());
                        addIfMeasured(confirmP99, second.confirmP99());
                        end = Cpu.now(brokerPid, perfTest.pid());
                    }
                } else if (SUMMARY.matcher(line).find() || line.contains("test stopped")
                        || line.toLowerCase(Locale.ROOT).contains("error")
                        || line.toLowerCase(Locale.ROOT).contains("exception")) {
                    summary.add(line);
                    System.out.println("  perf-test: " + line);
                }
            }
        } finally {
            if (!perfTest.waitFor(warmup + duration + 60L, TimeUnit.SECONDS)) {
                perfTest.destroyForcibly();
            }
        }
        if (seconds == 0 || start == null || end == null) {
            throw new IllegalStateException("PerfTest printed no measured second against " + broker + "; see " + log);
        }
        double wall = (end.nanos() - start.nanos()) / 1e9;
        double brokerCores = (end.brokerTicks() - start.brokerTicks()) / TICKS_PER_SECOND / wall;
        double toolCores = (end.toolTicks() - start.toolTicks()) / TICKS_PER_SECOND / wall;
        double machineCores = (double) (end.machineBusy() - start.machineBusy())
            / Math.max(1, end.machineAll() - start.machineAll()) * Runtime.getRuntime().availableProcessors();
        return new Result(sent / seconds, confirmed / seconds, nacked / seconds, received / seconds, median(p50),
            median(p99), median(confirmP50), median(confirmP99), brokerCores, toolCores,
            Math.max(0, machineCores - brokerCores - toolCores), seconds, summary);
    }

    private static void addIfMeasured(List<Long> values, long value) {
        if (value >= 0) {
            values.add(value);
        }
    }

    /**
     * One of PerfTest's per-second lines: msg/s sent, confirmed, nacked and received, and the median and 99th
     * percentile of the consumer and confirm latencies in µs (-1 when the line has none).
     */
    record Second(double time, long sent, long confirmed, long nacked, long received, long p50, long p99,
            long confirmP50, long confirmP99) {
        /** @return null for any other line */
        static Second parse(String line) {
            Matcher m = SECOND.matcher(line);
            if (!m.find()) {
                return null;
            }
            long[] consumer = percentiles(CONSUMER_LATENCY, line);
            long[] confirm = percentiles(CONFIRM_LATENCY, line);
            return new Second(Double.parseDouble(m.group(1)), Long.parseLong(m.group(2)), rate(CONFIRMED, line),
                rate(NACKED, line), rate(RECEIVED, line), consumer[0], consumer[1], confirm[0], confirm[1]);
        }

        private static long rate(Pattern pattern, String line) {
            Matcher m = pattern.matcher(line);
            return m.find() ? Long.parseLong(m.group(1)) : 0;
        }

        /** The median and the 99th percentile of PerfTest's min/median/75th/95th/99th. */
        private static long[] percentiles(Pattern pattern, String line) {
            Matcher m = pattern.matcher(line);
            return m.find() ? new long[] {Long.parseLong(m.group(2)), Long.parseLong(m.group(5))}
                : new long[] {-1, -1};
        }
    }

    private static long median(List<Long> values) {
        if (values.isEmpty()) {
            return -1;
        }
        List<Long> sorted = values.stream().sorted().toList();
        return sorted.get(sorted.size() / 2);
    }

    /** Durable queues bound to amq.fanout, as seed 001 declared its queue before running PerfTest with -p. */
    /** Declares the topology's queues and bindings (the unrelated ones timed: a bind rate); the queues made. */
    private static List<String> declare(String uri, Topology topology, String name) throws Exception {
        List<String> queues = new ArrayList<>();
        if (topology.keys().isEmpty() && topology.unrelatedBindings() == 0) {
            return queues;
        }
        try (Connection connection = connect(uri); Channel channel = connection.createChannel()) {
            for (int i = 1; i <= topology.keys().size(); i++) {
                String queue = name + "-" + i;
                channel.queueDeclare(queue, true, false, false, null);
                queues.add(queue);
                channel.queueBind(queue, topology.exchange(), topology.keys().get(i - 1));
            }
            if (topology.unrelatedBindings() > 0) {
                String unrelated = name + "-unrelated";
                channel.queueDeclare(unrelated, true, false, false, null);
                queues.add(unrelated);
                // from 8 connections at once, each waiting for bind-ok: a durable store's fsync is then shared by up
                // to 8 binds (one channel waiting for each measures one fsync per bind).
                // Connections, not channels: SkiffMQ takes a connection's methods one at a time while one waits
                // for the disk
                int channels = 8;
                long start = System.nanoTime();
                List<Future<?>> binders = new ArrayList<>();
                ExecutorService pool = Executors.newFixedThreadPool(channels);
                try {
                    for (int c = 0; c < channels; c++) {
                        int first = c;
                        binders.add(pool.submit(() -> {
                            try (Connection own = connect(uri); Channel binder = own.createChannel()) {
                                for (int i = first; i < topology.unrelatedBindings(); i += channels) {
                                    binder.queueBind(unrelated, topology.exchange(), Topology.unrelatedKey(i));
                                }
                            }
                            return null;
                        }));
                    }
                    for (Future<?> binder : binders) {
                        binder.get();
                    }
                } finally {
                    pool.shutdownNow();
                }
                double seconds = (System.nanoTime() - start) / 1e9;
                System.out.printf(Locale.ROOT, "%,d unrelated bindings in %.1f s (%,.0f binds/s, %d connections "
                    + "each waiting for bind-ok)%n", topology.unrelatedBindings(), seconds,
                    topology.unrelatedBindings() / seconds, channels);
            }
        }
        return queues;
    }

    private static void deleteQueues(String uri, List<String> queues) throws Exception {
        if (queues.isEmpty()) {
            return;
        }
        try (Connection connection = connect(uri); Channel channel = connection.createChannel()) {
            for (String queue : queues) {
                channel.queueDelete(queue);
            }
        }
    }

    private static Connection connect(String uri) throws Exception {
        ConnectionFactory factory = new ConnectionFactory();
        factory.setUri(uri);
        return factory.newConnection("benchmarks-compare");
    }

    /** utime + stime of a process, in ticks; 0 once it has gone. */
    static long ticks(long pid) {
        try {
            String stat = Files.readString(Path.of("/proc", String.valueOf(pid), "stat"));
            // the command name (field 2) may hold spaces: count fields from the closing parenthesis
            String[] fields = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
            return Long.parseLong(fields[11]) + Long.parseLong(fields[12]);
        } catch (IOException | RuntimeException e) {
            return 0;
        }
    }

    /** The machine's busy and total CPU time (all CPUs), from the first line of /proc/stat. */
    private static long[] machine() {
        try {
            String[] cpu = Files.readAllLines(Path.of("/proc/stat")).get(0).trim().split("\\s+");
            long all = 0;
            for (int i = 1; i <= 8 && i < cpu.length; i++) {
                all += Long.parseLong(cpu[i]);
            }
            long idle = Long.parseLong(cpu[4]) + Long.parseLong(cpu[5]);
            return new long[] {all - idle, all};
        } catch (IOException | RuntimeException e) {
            return new long[] {0, 1};
        }
    }

    static String loadAverage() {
        try {
            String[] parts = Files.readString(Path.of("/proc/loadavg")).trim().split(" ");
            return parts[0] + ", " + parts[1] + ", " + parts[2];
        } catch (IOException e) {
            return "unknown";
        }
    }
}
