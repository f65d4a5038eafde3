package io.skiffmq.benchmarks;

import com.rabbitmq.stream.OffsetSpecification;
import com.rabbitmq.stream.impl.Client;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.HdrHistogram.Histogram;

/**
 * Load over RabbitMQ's stream protocol (port 5552), for SkiffMQ and RabbitMQ alike, in the spirit of
 * stream-perf-test (not on Maven Central), on {@code com.rabbitmq:stream-client}'s protocol-level {@code Client}:
 * one connection per producer and per consumer, all on {@code --io-threads} Netty threads.
 *
 * <ul>
 *   <li>Producers publish {@code --batch-size} messages per publish frame, at most {@code --in-flight} unconfirmed
 *       each, unpaced or paced to {@code --rate} msg/s in all. A message is one {@code data} section of
 *       {@code --size} bytes carrying its send time ({@link StreamLoadCodec}).</li>
 *   <li>Consumers subscribe from {@code --offset} ({@code first}, {@code last}, {@code next}, an offset, or
 *       {@code timestamp:MILLIS}) with {@code --credit} chunks of credit, given back one per chunk received, and
 *       optionally a filter ({@code --filter=a,b}, {@code --match-unfiltered}; RabbitMQ 3.13 and later). With a
 *       filter and {@code --count}, a consumer is done once it has read the count or no chunk came for
 *       {@code --filter-idle-ms} (a second; the chunks its filter rules out never come).</li>
 *   <li>With {@code --filter-value-set=a,b,c}, producers give their messages filter values (publish v2, RabbitMQ
 *       3.13 and later): each value for {@code --filter-run} messages in turn (a batch by default), so a chunk
 *       holds few values and a filtering consumer reads less: the bytes read, filtered against unfiltered.</li>
 *   <li>The run lasts {@code --duration} seconds after {@code --warmup}, or, with {@code --count}, until the
 *       producers have had {@code --count} messages confirmed in all and each consumer has read {@code --count}
 *       (a pre-filled stream read from {@code first}: the rate is the whole read's).</li>
 * </ul>
 *
 * It uses nothing RabbitMQ 3.10's stream plugin lacks: no command versions, consumer updates, stats, filters (unless
 * asked for) or super streams. Measured: per second and over the run, messages confirmed and consumed, the chunks
 * and bytes consumers read (the deliver frames' chunk sizes: messages per chunk, what a filter saves), confirm
 * latency and end-to-end latency (send to receipt, HdrHistogram; for messages sent in this run), and with
 * {@code --broker-pid} the broker's CPU time per message from {@code /proc}, beside the tool's own.
 *
 * <pre>
 * java -cp benchmarks/target/benchmarks.jar io.skiffmq.benchmarks.StreamLoad --port=5552 --stream=s \
 *     --producers=1 --consumers=1 --size=12 --batch-size=100 --in-flight=10000 --duration=20 --warmup=5 \
 *     [--offset=next] [--rate=0] [--count=0] [--broker-pid=PID]
 * </pre>
 */
public final class StreamLoad {
    private StreamLoad() {
    }

    /** The settings, by the names of the command line. */
    static Map<String, String> defaults() {
        Map<String, String> options = new LinkedHashMap<>();
        options.put("host", "127.0.0.1");
        options.put("port", "5552");
        options.put("user", "guest");
        options.put("password", "guest");
        options.put("vhost", "/");
        options.put("stream", "stream-load");
        // create the stream if it is missing (a stream that exists is used as it is)
        options.put("create", "true");
        options.put("delete", "false");
        options.put("producers", "1");
        options.put("consumers", "1");
        options.put("size", "12");
        options.put("batch-size", "100");
        options.put("in-flight", "10000");
        options.put("rate", "0");
        options.put("offset", "next");
        options.put("credit", "10");
        // consumers: filter values (comma-separated) and match-unfiltered
        options.put("filter", "");
        options.put("match-unfiltered", "false");
        // a filtering consumer with a count is done after this long without a chunk
        options.put("filter-idle-ms", "1000");
        // producers: the filter values messages carry (comma-separated; none by default), each for a run of
        // filter-run messages in turn (0: a batch)
        options.put("filter-value-set", "");
        options.put("filter-run", "0");
        options.put("duration", "20");
        options.put("warmup", "5");
        options.put("count", "0");
        options.put("io-threads", "1");
        options.put("broker-pid", "0");
        options.put("progress", "true");
        return options;
    }

    public static void main(String[] args) throws Exception {
        Result result = run(CommandLine.parseOrExit("StreamLoad", defaults(), args));
        System.out.println(result.describe());
        System.exit(result.errors() == 0 ? 0 : 1);
    }

    /**
     * What a run measured over its measured window (warm-up left out; with {@code --count}, the whole run).
     *
     * @param brokerCpuSeconds the broker's CPU time over the window, -1 when not measured
     */
    record Result(Map<String, String> options, double seconds, long confirmed, long consumed, long chunks,
            long bytes, long errors, Histogram confirmLatency, Histogram latency, double brokerCpuSeconds,
            double toolCpuSeconds) {
        double confirmedRate() {
            return confirmed / seconds;
        }

        double consumedRate() {
            return consumed / seconds;
        }

        /** What the table compares: messages consumed in all consumers, or confirmed when there is none. */
        double rate() {
            return consumed > 0 ? consumedRate() : confirmedRate();
        }

        private long messages() {
            return consumed > 0 ? consumed : confirmed;
        }

        double messagesPerChunk() {
            return chunks == 0 ? 0 : (double) consumed / chunks;
        }

        /** The broker's CPU time per message of {@link #rate}, in µs; -1 when not measured. */
        double brokerMicros() {
            return brokerCpuSeconds < 0 || messages() == 0 ? -1 : brokerCpuSeconds * 1e6 / messages();
        }

        double toolMicros() {
            return messages() == 0 ? -1 : toolCpuSeconds * 1e6 / messages();
        }

        /**
         * The tool's own ceiling: the msg/s it could drive with one whole core at its measured CPU per message
         * (the machine's cores are shared with the broker, so a rate near it measures the tool).
         */
        double toolCeiling() {
            double micros = toolMicros();
            return micros <= 0 ? -1 : 1e6 / micros;
        }

        static long micros(Histogram h, double percentile) {
            return h.getTotalCount() == 0 ? -1 : h.getValueAtPercentile(percentile);
        }

        String describe() {
            return String.format(Locale.ROOT, "%.1f s measured, %s producer(s) (batch %s, in flight %s%s), %s "
                + "consumer(s) from %s, %s B: confirmed %,.0f msg/s, consumed %,.0f msg/s, %,d chunks (%.1f msg per "
                + "chunk, %,d bytes read); confirm latency p50 %s p99 %s; end-to-end latency p50 %s p99 %s; CPU per "
                + "message: broker %s, tool %s (tool ceiling %s msg/s per core); %d errors",
                seconds, options.get("producers"), options.get("batch-size"), options.get("in-flight"),
                options.get("rate").equals("0") ? "" : ", paced at " + options.get("rate") + " msg/s",
                options.get("consumers"), options.get("offset"), options.get("size"), confirmedRate(), consumedRate(),
                chunks, messagesPerChunk(), bytes, ms(micros(confirmLatency, 50)), ms(micros(confirmLatency, 99)),
                ms(micros(latency, 50)), ms(micros(latency, 99)), us(brokerMicros()), us(toolMicros()),
                toolCeiling() < 0 ? "-" : String.format(Locale.ROOT, "%,.0f", toolCeiling()), errors);
        }

        static String ms(long micros) {
            return micros < 0 ? "-" : String.format(Locale.ROOT, "%.2f ms", micros / 1000.0);
        }

        static String us(double micros) {
            return micros < 0 ? "-" : String.format(Locale.ROOT, "%.2f µs", micros);
        }
    }

    /** The client settings every connection of a run shares. */
    static Client.ClientParameters parameters(Map<String, String> options, EventLoopGroup group) {
        return new Client.ClientParameters().host(options.get("host")).port(Integer.parseInt(options.get("port")))
            .username(options.get("user")).password(options.get("password")).virtualHost(options.get("vhost"))
            .eventLoopGroup(group).codec(new StreamLoadCodec(Integer.parseInt(options.get("size"))));
    }

    static OffsetSpecification offset(String spec) {
        return switch (spec) {
            case "first" -> OffsetSpecification.first();
            case "last" -> OffsetSpecification.last();
            case "next" -> OffsetSpecification.next();
            default -> spec.startsWith("timestamp:") ? OffsetSpecification.timestamp(Long.parseLong(spec.substring(
                "timestamp:".length()))) : OffsetSpecification.offset(Long.parseLong(spec));
        };
    }

    /** Runs the load the options describe and returns what it measured. */
    static Result run(Map<String, String> options) throws Exception {
        int producers = Integer.parseInt(options.get("producers"));
        int consumers = Integer.parseInt(options.get("consumers"));
        long count = Long.parseLong(options.get("count"));
        if (Integer.parseInt(options.get("size")) < LoadBody.HEADER) {
            throw new IllegalArgumentException("--size is at least " + LoadBody.HEADER + " (send time and id)");
        }
        if (producers > LoadBody.MAX_SENDERS) {
            throw new IllegalArgumentException("at most " + LoadBody.MAX_SENDERS + " producers");
        }
        long brokerPid = Long.parseLong(options.get("broker-pid"));
        boolean progress = Boolean.parseBoolean(options.get("progress"));
        EventLoopGroup group = new MultiThreadIoEventLoopGroup(Integer.parseInt(options.get("io-threads")),
            NioIoHandler.newFactory());
        StreamLoadCounters counters = new StreamLoadCounters();
        List<StreamLoadProducer> producing = new ArrayList<>();
        List<StreamLoadConsumer> consuming = new ArrayList<>();
        try {
            prepare(options, group);
            // connected first, so the clock runs from the first subscription and publish
            for (int i = 0; i < consumers; i++) {
                consuming.add(new StreamLoadConsumer(options, group, counters, count));
            }
            long perProducer = count == 0 || producers == 0 ? 0 : (count + producers - 1) / producers;
            for (int i = 0; i < producers; i++) {
                producing.add(new StreamLoadProducer(options, group, counters, i, perProducer));
            }
            long start = System.nanoTime();
            long warmup = count > 0 ? 0 : TimeUnit.SECONDS.toNanos(Long.parseLong(options.get("warmup")));
            long measureFrom = start + warmup;
            long end = count > 0 ? Long.MAX_VALUE
                : measureFrom + TimeUnit.SECONDS.toNanos(Long.parseLong(options.get("duration")));
            // without a warm-up, measured from before the first subscription and publish: the first chunks and
            // confirms can come before this thread looks again
            Mark from = warmup == 0 ? Mark.take(counters, brokerPid) : null;
            consuming.forEach(StreamLoadConsumer::subscribe);
            producing.forEach(producer -> producer.start(end));
            while (System.nanoTime() < measureFrom) {
                Thread.sleep(10);
            }
            if (from == null) {
                from = Mark.take(counters, brokerPid);
            }
            Histogram confirmLatency = new Histogram(3);
            Histogram latency = new Histogram(3);
            long lastConfirmed = from.confirmed;
            long lastConsumed = from.consumed;
            long nextSecond = measureFrom + 1_000_000_000L;
            while ((producing.stream().anyMatch(StreamLoadProducer::running)
                    || count > 0 && consuming.stream().anyMatch(c -> !c.done()))
                    && System.nanoTime() < end && counters.failure == null) {
                Thread.sleep(10);
                if (System.nanoTime() < nextSecond) {
                    continue;
                }
                nextSecond += 1_000_000_000L;
                Histogram secondConfirms = counters.confirmLatency.getIntervalHistogram();
                Histogram second = counters.latency.getIntervalHistogram();
                confirmLatency.add(secondConfirms);
                latency.add(second);
                long confirmed = counters.confirmed.sum();
                long consumed = counters.consumed.sum();
                if (progress) {
                    System.out.printf(Locale.ROOT, "%5.0f s  confirmed %,10d/s  consumed %,10d/s  chunks %,9d  "
                        + "confirm p99 %s  latency p50 %s p99 %s  errors %d%n", (System.nanoTime() - start) / 1e9,
                        confirmed - lastConfirmed, consumed - lastConsumed, counters.chunks.sum(),
                        Result.ms(Result.micros(secondConfirms, 99)), Result.ms(Result.micros(second, 50)),
                        Result.ms(Result.micros(second, 99)), counters.errors.sum());
                }
                lastConfirmed = confirmed;
                lastConsumed = consumed;
            }
            long measuredUntil = Math.min(System.nanoTime(), end);
            if (count > 0) {
                measuredUntil = Math.max(counters.lastConfirm.get(), counters.lastConsume.get());
            }
            double brokerCpu = brokerPid > 0 ? (LoadTool.cpuTicks(brokerPid) - from.brokerTicks) / 100.0 : -1;
            double toolCpu = (LoadTool.cpuTicks(ProcessHandle.current().pid()) - from.toolTicks) / 100.0;
            confirmLatency.add(counters.confirmLatency.getIntervalHistogram());
            latency.add(counters.latency.getIntervalHistogram());
            long errors = counters.errors.sum();
            if (counters.failure != null) {
                System.err.println("stream load: " + counters.failure);
            }
            return new Result(options, Math.max(1e-3, (measuredUntil - measureFrom) / 1e9),
                counters.confirmed.sum() - from.confirmed, counters.consumed.sum() - from.consumed,
                counters.chunks.sum() - from.chunks, counters.bytes.sum() - from.bytes, errors, confirmLatency,
                latency, brokerCpu, toolCpu);
        } finally {
            producing.forEach(StreamLoadProducer::close);
            consuming.forEach(StreamLoadConsumer::close);
            if (Boolean.parseBoolean(options.get("delete"))) {
                Client client = new Client(parameters(options, group));
                client.delete(options.get("stream"));
                client.close();
            }
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS);
        }
    }

    /** The counters and CPU times where measuring starts. */
    private record Mark(long brokerTicks, long toolTicks, long confirmed, long consumed, long chunks, long bytes) {
        /** Also drops the latencies recorded until now (the warm-up's). */
        static Mark take(StreamLoadCounters counters, long brokerPid) {
            counters.confirmLatency.getIntervalHistogram();
            counters.latency.getIntervalHistogram();
            return new Mark(brokerPid > 0 ? LoadTool.cpuTicks(brokerPid) : 0,
                LoadTool.cpuTicks(ProcessHandle.current().pid()), counters.confirmed.sum(), counters.consumed.sum(),
                counters.chunks.sum(), counters.bytes.sum());
        }
    }

    /** Creates the stream when asked to and it is missing. */
    private static void prepare(Map<String, String> options, EventLoopGroup group) {
        if (!Boolean.parseBoolean(options.get("create"))) {
            return;
        }
        Client client = new Client(parameters(options, group));
        try {
            Client.Response response = client.create(options.get("stream"));
            if (!response.isOk()
                    && response.getResponseCode() != com.rabbitmq.stream.Constants.RESPONSE_CODE_STREAM_ALREADY_EXISTS) {
                throw new IllegalStateException("cannot create stream " + options.get("stream") + ": response code "
                    + response.getResponseCode());
            }
        } finally {
            client.close();
        }
    }
}
