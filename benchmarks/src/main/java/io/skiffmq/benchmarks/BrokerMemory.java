package io.skiffmq.benchmarks;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Samples a broker process's memory every {@code millis} on a thread of its own, keeping the peaks: its resident set
 * ({@code VmRSS} from {@code /proc/PID/status}; the kernel's own peak {@code VmHWM} is read at the end), and for a JVM
 * its heap used ({@code jstat -gc}: survivors, eden and old generation, garbage included) and its direct memory
 * (Native Memory Tracking's "Other" category, where {@code Unsafe.allocateMemory} counts: Netty's direct buffers and
 * {@code ByteBuffer.allocateDirect}; the JVM needs {@code -XX:NativeMemoryTracking=summary}). A process that is not a
 * JVM (RabbitMQ's {@code beam.smp}) gets its resident set only.
 */
final class BrokerMemory extends Thread implements AutoCloseable {
    /** NMT's summary line for the category direct buffers fall in (JDK 17: mtOther). */
    private static final Pattern OTHER = Pattern.compile("-\\s+Other \\(reserved=\\d+KB, committed=(\\d+)KB\\)");

    /** The flag a SkiffMQ or Artemis JVM needs for {@link #peakDirect}. */
    static final String NMT = "-XX:NativeMemoryTracking=summary";

    private final long pid;
    private final long millis;
    private final boolean jvm;
    private final String bin = Path.of(System.getProperty("java.home"), "bin").toString();
    final AtomicLong peakRss = new AtomicLong();
    final AtomicLong peakHeap = new AtomicLong();
    final AtomicLong peakDirect = new AtomicLong(-1);
    private volatile boolean stop;

    BrokerMemory(long pid, long millis, boolean jvm) {
        super("broker-memory");
        setDaemon(true);
        this.pid = pid;
        this.millis = millis;
        this.jvm = jvm;
    }

    @Override
    public void run() {
        while (!stop) {
            try {
                peakRss.accumulateAndGet(status("VmRSS"), Math::max);
                if (jvm) {
                    peakHeap.accumulateAndGet(heap(), Math::max);
                    peakDirect.accumulateAndGet(direct(), Math::max);
                }
                Thread.sleep(millis);
            } catch (InterruptedException e) {
                return;
            } catch (Exception e) {
                // the process is gone, or a tool failed once: keep what was read
            }
        }
    }

    /** The kernel's peak resident set of the process, in bytes (0 once it has gone). */
    long highWaterRss() {
        return Math.max(peakRss.get(), status("VmHWM"));
    }

    private long status(String field) {
        try {
            for (String line : Files.readAllLines(Path.of("/proc", Long.toString(pid), "status"))) {
                if (line.startsWith(field + ":")) {
                    return Long.parseLong(line.replaceAll("\\D", "")) * 1024;
                }
            }
        } catch (IOException | RuntimeException e) {
            // gone
        }
        return 0;
    }

    private long heap() throws Exception {
        List<String> lines = run(bin + "/jstat", "-gc", Long.toString(pid)).lines().toList();
        return lines.size() == 2 ? BoundedBacklog.used(List.of(lines.get(0).trim().split("\\s+")),
            List.of(lines.get(1).trim().split("\\s+"))) : 0;
    }

    private long direct() throws Exception {
        Matcher m = OTHER.matcher(run(bin + "/jcmd", Long.toString(pid), "VM.native_memory", "summary"));
        return m.find() ? Long.parseLong(m.group(1)) * 1024 : -1;
    }

    private static String run(String... command) throws Exception {
        Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        String out = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        process.waitFor();
        return out;
    }

    @Override
    public void close() throws InterruptedException {
        stop = true;
        interrupt();
        join();
    }
}
