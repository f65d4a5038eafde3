package io.skiffmq.benchmarks;

import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.HdrHistogram.Histogram;

/**
 * End-to-end load over AMQP 1.0, in the spirit of quiver and PerfTest, with one of two engines
 * ({@code --engine}): {@code lean} (the default, {@link LeanEngine}), AMQP 1.0 on the project's own codec and
 * Netty, which costs the cores it shares with the broker little; or {@code jms} ({@link JmsEngine}), Qpid JMS,
 * what JMS users see, whose own ceiling is about 25k msg/s on a 2-vCPU machine.
 *
 * <p>{@code --senders} connections publish to one address and {@code --receivers} connections consume from one
 * queue. A sender publishes unsettled (at most {@code --in-flight} awaiting their disposition, i.e. their
 * confirm), or pre-settled with {@code --settled=true}. A receiver grants
 * {@code --credit} and accepts what it gets. Messages are durable (header durable) with {@code --durable=true}.
 * The run lasts {@code --duration} seconds after a {@code --warmup}, or ends after {@code --count} messages per
 * sender. {@code --rate} paces the senders to that many msg/s in all (open loop: latency counts from when a message
 * was due, so a sender held back shows as latency). {@code --topic=true} publishes to a topic that every receiver
 * subscribes to (fanout); {@code --backlog=true} fills the queue with {@code --count} messages per sender before the
 * receivers start, and measures the drain.
 *
 * <p>Each body carries its send time, its sender and sequence, and (beyond 12 bytes) a padding derived from them
 * ({@link LoadBody}). A receiver checks every body and each sender's order, and counts a damaged or misordered one
 * as an error, never as a delivery. Latency is send to receive, into an HdrHistogram. With {@code --broker-pid}, the
 * run also reports the broker process's CPU time per message received over the measured window (from
 * {@code /proc}); it always reports its own.
 *
 * <p>Output: a progress line every second, a summary, and one JSON line starting {@code RESULT } for scripts
 * ({@link Compare} reads it).
 *
 * <pre>
 * java -cp benchmarks/target/benchmarks.jar io.skiffmq.benchmarks.LoadTool --uri=amqp://127.0.0.1:5672 \
 *     --duration=60 --warmup=10 --senders=1 --receivers=1 --body-size=12 --credit=1000 [--durable=true] \
 *     [--rate=100000] [--engine=lean|jms] [--broker-pid=PID] [--histogram=FILE]
 * </pre>
 */
public final class LoadTool {
    private LoadTool() {
    }

    /** The settings, by the names of the command line. */
    static Map<String, String> defaults() {
        Map<String, String> options = new LinkedHashMap<>();
        options.put("uri", "amqp://127.0.0.1:5672");
        options.put("user", "guest");
        options.put("password", "guest");
        options.put("queue", "load-test");
        // where senders publish: the queue by default, or an address such as /exchanges/amq.fanout
        options.put("target", "");
        options.put("senders", "1");
        options.put("receivers", "1");
        options.put("body-size", "12");
        options.put("credit", "1000");
        options.put("in-flight", "1000");
        options.put("settled", "false");
        options.put("durable", "false");
        options.put("duration", "60");
        options.put("warmup", "10");
        options.put("count", "0");
        options.put("rate", "0");
        options.put("progress", "true");
        // true: senders publish to a topic and each receiver subscribes (fanout: every receiver gets every message)
        options.put("topic", "false");
        // true: with --count, the senders fill the queue first and the receivers then drain it; the rate is the drain's
        options.put("backlog", "false");
        // seconds to wait, after the end (with --count: once measuring starts), for senders still waiting for credit
        // or confirms and for the last messages; then the run reports, and with --count the missing ones are errors
        options.put("give-up", "600");
        // lean: AMQP 1.0 on the project's codec (LeanEngine); jms: Qpid JMS (JmsEngine)
        options.put("engine", "lean");
        // the lean engine's event loops, shared by all its connections
        options.put("io-threads", "1");
        // the broker's process id, for its CPU time per message; 0: not measured
        options.put("broker-pid", "0");
        // a file for the measured latency's percentile distribution (HdrHistogram's, in ms); empty: none
        options.put("histogram", "");
        return options;
    }

    public static void main(String[] args) throws Exception {
        Map<String, String> options = CommandLine.parseOrExit("LoadTool", defaults(), args);
        Result result = run(options);
        System.out.println(result.describe());
        if (!options.get("histogram").isEmpty()) {
            try (java.io.PrintStream out = new java.io.PrintStream(options.get("histogram"), "UTF-8")) {
                result.latency().outputPercentileDistribution(out, 5, 1000.0);
            }
        }
        System.out.println("RESULT " + result.json());
        System.exit(result.errors() == 0 ? 0 : 1);
    }

    /**
     * What a run measured, over the measured window (warm-up left out).
     *
     * @param sendSeconds how long the sending took: the window, or the filling of a backlog
     * @param brokerCpuSeconds the broker process's CPU time over the window, -1 when not measured
     * @param toolCpuSeconds this process's CPU time over the window (the broker's too when it runs in it)
     */
    record Result(Map<String, String> options, double seconds, double sendSeconds, long sent, long received,
            long errors, Histogram latency, double endToEndSeconds, double brokerCpuSeconds, double toolCpuSeconds) {
        double sentRate() {
            return sent / sendSeconds;
        }

        double receivedRate() {
            return received / seconds;
        }

        /** Messages received over the time from the first send measured to the last receipt (quiver's rate). */
        double endToEndRate() {
            return endToEndSeconds <= 0 ? 0 : received / endToEndSeconds;
        }

        long micros(double percentile) {
            return latency.getTotalCount() == 0 ? -1 : latency.getValueAtPercentile(percentile);
        }

        /** The broker's CPU time per message received, in microseconds; -1 when not measured. */
        double brokerMicrosPerMessage() {
            return brokerCpuSeconds < 0 || received == 0 ? -1 : brokerCpuSeconds * 1e6 / received;
        }

        double toolMicrosPerMessage() {
            return received == 0 ? -1 : toolCpuSeconds * 1e6 / received;
        }

        String describe() {
            return String.format(Locale.ROOT, "%.1f s measured, %s engine, %s sender(s), %s receiver(s), %s, "
                + "%s publish, body %s B, credit %s%s: sent %.0f msg/s, received %.0f msg/s, end to end %.0f msg/s; "
                + "latency p50 %s, p90 %s, p99 %s, p99.9 %s, max %s; CPU per message: broker %s, load tool %s; "
                + "%d errors",
                seconds, options.get("engine"), options.get("senders"), options.get("receivers"),
                Boolean.parseBoolean(options.get("durable")) ? "durable" : "transient",
                Boolean.parseBoolean(options.get("settled")) ? "settled" : "unsettled", options.get("body-size"),
                options.get("credit"), rate() > 0 ? ", paced at " + rate() + " msg/s" : "", sentRate(),
                receivedRate(), endToEndRate(), ms(micros(50)), ms(micros(90)), ms(micros(99)), ms(micros(99.9)),
                ms(latency.getMaxValue()), us(brokerMicrosPerMessage()), us(toolMicrosPerMessage()), errors);
        }

        String json() {
            return String.format(Locale.ROOT, "{\"seconds\":%.3f,\"engine\":\"%s\",\"senders\":%s,\"receivers\":%s,"
                + "\"durable\":%s,\"settled\":%s,\"body_size\":%s,\"rate\":%d,\"sent_per_s\":%.1f,"
                + "\"received_per_s\":%.1f,\"end_to_end_per_s\":%.1f,\"p50_us\":%d,\"p90_us\":%d,\"p99_us\":%d,"
                + "\"p999_us\":%d,\"max_us\":%d,\"broker_cpu_us_per_msg\":%.3f,\"tool_cpu_us_per_msg\":%.3f,"
                + "\"errors\":%d}",
                seconds, options.get("engine"), options.get("senders"), options.get("receivers"),
                options.get("durable"), options.get("settled"), options.get("body-size"), rate(), sentRate(),
                receivedRate(), endToEndRate(), micros(50), micros(90), micros(99), micros(99.9),
                latency.getMaxValue(), brokerMicrosPerMessage(), toolMicrosPerMessage(), errors);
        }

        private long rate() {
            return Long.parseLong(options.get("rate"));
        }

        private static String ms(long micros) {
            return micros < 0 ? "-" : String.format(Locale.ROOT, "%.2f ms", micros / 1000.0);
        }

        private static String us(double micros) {
            return micros < 0 ? "-" : String.format(Locale.ROOT, "%.2f µs", micros);
        }
    }

    /** Where senders publish: {@code --target}, or the queue when it is empty. */
    static String target(Map<String, String> options) {
        return options.get("target").isEmpty() ? options.get("queue") : options.get("target");
    }

    static int bodySize(Map<String, String> options) {
        return Math.max(LoadBody.HEADER, Integer.parseInt(options.get("body-size")));
    }

    /** Runs the load the options describe and returns what it measured. */
    static Result run(Map<String, String> options) throws Exception {
        int senders = Integer.parseInt(options.get("senders"));
        int receivers = Integer.parseInt(options.get("receivers"));
        long count = Long.parseLong(options.get("count"));
        if (senders > LoadBody.MAX_SENDERS) {
            throw new IllegalArgumentException("at most " + LoadBody.MAX_SENDERS + " senders");
        }
        String target = target(options);
        if (target.startsWith("/exchanges/")) {
            bindToQueue(options, target.substring("/exchanges/".length()));
        }
        boolean topic = Boolean.parseBoolean(options.get("topic"));
        boolean backlog = Boolean.parseBoolean(options.get("backlog"));
        if (backlog && count == 0) {
            throw new IllegalArgumentException("--backlog needs --count");
        }
        long brokerPid = Long.parseLong(options.get("broker-pid"));
        LoadCounters counters = new LoadCounters();
        try (LoadEngine engine = switch (options.get("engine")) {
            case "lean" -> new LeanEngine(options, counters);
            case "jms" -> new JmsEngine(options, counters);
            default -> throw new IllegalArgumentException("the engine is lean or jms, not " + options.get("engine"));
        }) {
            if (!backlog) {
                engine.startReceivers();
            }
            long start = System.nanoTime();
            long warmup = count > 0 ? 0 : TimeUnit.SECONDS.toNanos(Long.parseLong(options.get("warmup")));
            long end = count > 0 ? Long.MAX_VALUE
                : start + warmup + TimeUnit.SECONDS.toNanos(Long.parseLong(options.get("duration")));
            long measureFrom = start + warmup;
            engine.startSenders(measureFrom, end);
            double sendSeconds = 0;
            if (backlog) {
                while (engine.sending()) {
                    Thread.sleep(10);
                }
                sendSeconds = (System.nanoTime() - start) / 1e9;
                System.out.printf(Locale.ROOT, "backlog of %,d messages in %.1f s; draining%n", counters.sent.get(),
                    sendSeconds);
                measureFrom = System.nanoTime();
            }
            while (System.nanoTime() < measureFrom) {
                Thread.sleep(10);
            }
            long brokerTicksAtStart = brokerPid > 0 ? cpuTicks(brokerPid) : 0;
            long toolTicksAtStart = cpuTicks(ProcessHandle.current().pid());
            if (backlog) {
                engine.startReceivers();
            }
            long sentAtStart = count > 0 ? 0 : counters.sent.get();
            long receivedAtStart = count > 0 ? 0 : counters.received.get();
            Histogram measured = new Histogram(3);
            counters.latencies.getIntervalHistogram();
            boolean progress = Boolean.parseBoolean(options.get("progress"));
            long lastSent = counters.sent.get();
            long lastReceived = counters.received.get();
            long expected = count * senders * (topic ? receivers : 1);
            // after the end (or once measuring starts, with --count), a sender still waiting for credit or
            // confirms, or messages still on their way, are waited for this long at most; then the run reports
            long giveUp = Math.max(end == Long.MAX_VALUE ? measureFrom : end, measureFrom)
                + TimeUnit.SECONDS.toNanos(Long.parseLong(options.get("give-up")));
            while ((engine.sending() || count > 0 && counters.received.get() + counters.errors.get() < expected)
                    && System.nanoTime() < giveUp) {
                Thread.sleep(1000);
                Histogram second = counters.latencies.getIntervalHistogram();
                measured.add(second);
                long s = counters.sent.get();
                long r = counters.received.get();
                if (progress) {
                    System.out.printf(Locale.ROOT, "%5.0f s  sent %,9d/s  received %,9d/s  latency p50 %s  p90 %s  "
                        + "p99 %s  p99.9 %s  max %s  errors %d%n", (System.nanoTime() - start) / 1e9, s - lastSent,
                        r - lastReceived, percentile(second, 50), percentile(second, 90), percentile(second, 99),
                        percentile(second, 99.9), Result.ms(second.getTotalCount() == 0 ? -1 : second.getMaxValue()),
                        counters.errors.get());
                }
                lastSent = s;
                lastReceived = r;
            }
            measured.add(counters.latencies.getIntervalHistogram());
            double seconds = (System.nanoTime() - measureFrom) / 1e9;
            double brokerCpu = brokerPid > 0 ? (cpuTicks(brokerPid) - brokerTicksAtStart) / TICKS_PER_SECOND : -1;
            double toolCpu = (cpuTicks(ProcessHandle.current().pid()) - toolTicksAtStart) / TICKS_PER_SECOND;
            long received = counters.received.get();
            long errors = counters.errors.get();
            if (count > 0 && received < expected) {
                errors += Math.max(0, expected - received - errors); // never arrived
            }
            return new Result(options, seconds, backlog ? sendSeconds : seconds, counters.sent.get() - sentAtStart,
                received - receivedAtStart, errors, measured, (counters.lastReceipt.get() - measureFrom) / 1e9,
                brokerCpu, toolCpu);
        }
    }

    /** USER_HZ: the unit of utime and stime in /proc/PID/stat (100 on every Linux we run). */
    private static final double TICKS_PER_SECOND = 100;

    /** utime + stime of a process, in ticks; 0 when unknown. */
    static long cpuTicks(long pid) {
        try {
            String stat = java.nio.file.Files.readString(java.nio.file.Path.of("/proc", String.valueOf(pid), "stat"));
            // the command name (field 2) may hold spaces: count fields from the closing parenthesis
            String[] fields = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
            return Long.parseLong(fields[11]) + Long.parseLong(fields[12]);
        } catch (java.io.IOException | RuntimeException e) {
            return 0;
        }
    }

    private static String percentile(Histogram histogram, double percentile) {
        return Result.ms(histogram.getTotalCount() == 0 ? -1 : histogram.getValueAtPercentile(percentile));
    }

    /** Declares the queue and binds it to {@code exchange}, through SkiffMQ's (RabbitMQ's) management node. */
    private static void bindToQueue(Map<String, String> options, String exchange) {
        java.net.URI uri = java.net.URI.create(options.get("uri"));
        try (com.rabbitmq.client.amqp.Environment environment =
                new com.rabbitmq.client.amqp.impl.AmqpEnvironmentBuilder().connectionSettings().host(uri.getHost())
                    .port(uri.getPort()).username(options.get("user")).password(options.get("password"))
                    .environmentBuilder().build();
             com.rabbitmq.client.amqp.Connection connection = environment.connectionBuilder().build()) {
            connection.management().queue().name(options.get("queue")).declare();
            connection.management().binding().sourceExchange(exchange).destinationQueue(options.get("queue")).bind();
        }
    }
}
