package io.skiffmq.benchmarks;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Issue 12's scenario: a broker with a small heap ({@code --heap}, 512m) takes {@code --count} (10,000,000) transient
 * 12-byte messages ({@code --durable=true}: durable ones, synced) from one publisher with no consumer, then one
 * receiver drains them ({@link LoadTool} with {@code --backlog=true}, over AMQP 1.0: the publisher keeps up to
 * {@code --in-flight} unconfirmed, as fast as the broker confirms). The broker's heap is sampled every
 * {@code --sample-ms} with {@code jstat -gc} (used = survivors + eden + old; the old generation alone is what
 * survives collections).
 *
 * <p>How long publishers were blocked is read from the broker's log: the time between each
 * {@code memory resource limit alarm set} and the {@code … cleared} that follows (the memory alarm holds publishers
 * back above {@code memory-high-watermark}, 0.4 of the heap by default; see docs/alarms.md).
 *
 * <pre>
 * benchmarks/bounded-backlog [--count=10000000] [--heap=512m] [--durable=false]
 * </pre>
 */
public final class BoundedBacklog {
    private BoundedBacklog() {
    }

    public static void main(String[] args) throws Exception {
        Map<String, String> defaults = LoadTool.defaults();
        defaults.put("count", "10000000");
        defaults.put("backlog", "true");
        defaults.put("credit", "1000");
        defaults.put("in-flight", "5000");
        defaults.put("heap", "512m");
        defaults.put("sample-ms", "500");
        defaults.put("give-up", "3600");
        // a full GC (jcmd GC.run) then a sample, this often: the heap that is live, not garbage not yet collected
        defaults.put("live-every-s", "30");
        Map<String, String> options = CommandLine.parseOrExit("BoundedBacklog", defaults, args);
        String heap = options.remove("heap");
        long sampleMillis = Long.parseLong(options.remove("sample-ms"));
        long liveSeconds = Long.parseLong(options.remove("live-every-s"));
        boolean durable = Boolean.parseBoolean(options.get("durable"));
        boolean ok;
        // Qpid JMS sends a non-persistent message without a header, which RabbitMQ's rule makes durable
        Alarms alarms = new Alarms();
        try (BrokerProcess broker = BrokerProcess.start("skiffmq", List.of("-Xmx" + heap,
                "-XX:+ExitOnOutOfMemoryError"), durable ? List.of() : List.of("--durable-if-no-header=false"),
                alarms)) {
            options.put("uri", "amqp://127.0.0.1:" + broker.port);
            HeapSampler sampler = new HeapSampler(broker.pid(), sampleMillis);
            sampler.start();
            LiveHeap live = new LiveHeap(broker.pid(), liveSeconds);
            live.start();
            LoadTool.Result result = LoadTool.run(options);
            sampler.stop = true;
            live.interrupt();
            sampler.join();
            live.join();
            System.out.println(result.describe());
            System.out.printf(Locale.ROOT, "%n%,d %s 12-byte messages, broker at -Xmx%s, no consumer while publishing%n",
                result.sent(), durable ? "durable" : "transient", heap);
            System.out.printf(Locale.ROOT, "publish:            %.1f s (%,.0f msg/s)%n", result.sendSeconds(),
                result.sent() / result.sendSeconds());
            System.out.printf(Locale.ROOT, "drain:              %.1f s (%,.0f msg/s), %,d received, %d errors%n",
                result.seconds(), result.received() / result.seconds(), result.received(), result.errors());
            System.out.printf(Locale.ROOT, "peak heap used:     %,d MB (old generation %,d MB) in %d samples%n",
                sampler.peakUsed.get() >> 20, sampler.peakOld.get() >> 20, sampler.samples.get());
            System.out.printf(Locale.ROOT, "peak live heap:     %,d MB (after a full GC every %d s, %d times)%n",
                live.peak.get() >> 20, liveSeconds, live.samples.get());
            System.out.printf(Locale.ROOT, "publishers blocked: %.1f s, by %d memory alarm(s)%n",
                alarms.blockedNanos() / 1e9, alarms.raised);
            System.out.println("broker alive:       " + broker.isAlive());
            ok = result.errors() == 0 && result.received() == result.sent() && broker.isAlive();
        }
        System.exit(ok ? 0 : 1); // after the broker is stopped and its data deleted
    }

    /** Times the broker's memory alarms from its log lines: how long publishers were held back. */
    private static final class Alarms implements java.util.function.Consumer<String> {
        long raised;
        private long since = -1;
        private long blocked;

        @Override
        public synchronized void accept(String line) {
            if (line.contains("memory resource limit alarm set")) {
                raised++;
                since = System.nanoTime();
            } else if (line.contains("memory resource limit alarm cleared") && since >= 0) {
                blocked += System.nanoTime() - since;
                since = -1;
            }
        }

        synchronized long blockedNanos() {
            return blocked + (since >= 0 ? System.nanoTime() - since : 0);
        }
    }

    /** Every so often: a full GC of the broker ({@code jcmd PID GC.run}), then its used heap ({@code jstat -gc}). */
    private static final class LiveHeap extends Thread {
        final long pid;
        final long seconds;
        final AtomicLong peak = new AtomicLong();
        final AtomicLong samples = new AtomicLong();

        LiveHeap(long pid, long seconds) {
            super("live-heap");
            setDaemon(true);
            this.pid = pid;
            this.seconds = seconds;
        }

        @Override
        public void run() {
            String bin = java.nio.file.Path.of(System.getProperty("java.home"), "bin").toString();
            try {
                while (!isInterrupted()) {
                    Thread.sleep(seconds * 1000);
                    new ProcessBuilder(bin + "/jcmd", Long.toString(pid), "GC.run").redirectErrorStream(true)
                        .redirectOutput(ProcessBuilder.Redirect.DISCARD).start().waitFor();
                    Process jstat = new ProcessBuilder(bin + "/jstat", "-gc", Long.toString(pid)).start();
                    List<String> lines = new String(jstat.getInputStream().readAllBytes(), StandardCharsets.US_ASCII)
                        .lines().toList();
                    jstat.waitFor();
                    if (lines.size() == 2) {
                        peak.accumulateAndGet(used(List.of(lines.get(0).trim().split("\\s+")),
                            List.of(lines.get(1).trim().split("\\s+"))), Math::max);
                        samples.incrementAndGet();
                    }
                }
            } catch (InterruptedException e) {
                // the run is over
            } catch (Exception e) {
                System.err.println("live heap sampling failed: " + e);
            }
        }
    }

    /** Survivors, eden and old generation in bytes, from a {@code jstat -gc} header and line. */
    static long used(List<String> header, List<String> fields) {
        double used = 0;
        for (String column : List.of("S0U", "S1U", "EU", "OU")) {
            used += Double.parseDouble(fields.get(header.indexOf(column)));
        }
        return (long) (used * 1024);
    }

    /** Polls {@code jstat -gc PID} for the broker's heap. */
    private static final class HeapSampler extends Thread {
        final long pid;
        final long millis;
        final AtomicLong peakUsed = new AtomicLong();
        final AtomicLong peakOld = new AtomicLong();
        final AtomicLong samples = new AtomicLong();
        volatile boolean stop;

        HeapSampler(long pid, long millis) {
            super("heap-sampler");
            setDaemon(true);
            this.pid = pid;
            this.millis = millis;
        }

        @Override
        public void run() {
            String jstat = java.nio.file.Path.of(System.getProperty("java.home"), "bin", "jstat").toString();
            try {
                Process process = new ProcessBuilder(jstat, "-gc", Long.toString(pid), Long.toString(millis))
                    .redirectErrorStream(true).start();
                try (BufferedReader in = new BufferedReader(new InputStreamReader(process.getInputStream(),
                        StandardCharsets.US_ASCII))) {
                    List<String> header = null;
                    for (String line; !stop && (line = in.readLine()) != null; ) {
                        List<String> fields = List.of(line.trim().split("\\s+"));
                        if (fields.contains("EU")) {
                            header = fields;
                            continue;
                        }
                        if (header == null || fields.size() != header.size()) {
                            continue;
                        }
                        double old = Double.parseDouble(fields.get(header.indexOf("OU")));
                        peakUsed.accumulateAndGet(used(header, fields), Math::max);
                        peakOld.accumulateAndGet((long) (old * 1024), Math::max);
                        samples.incrementAndGet();
                    }
                } finally {
                    process.destroy();
                }
            } catch (Exception e) {
                System.err.println("heap sampling failed: " + e);
            }
        }
    }
}
