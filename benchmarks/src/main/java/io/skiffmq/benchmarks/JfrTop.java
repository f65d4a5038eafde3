package io.skiffmq.benchmarks;

import java.nio.file.Path;
import java.time.Instant;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordedFrame;
import jdk.jfr.consumer.RecordedStackTrace;
import jdk.jfr.consumer.RecordingFile;

/**
 * A JFR recording's CPU samples ({@code jdk.ExecutionSample}) summarised: by thread, by the frame on top of the stack
 * (self), by the first SkiffMQ frame from the top (where the JDK's and Netty's time is spent on our behalf), and by
 * SkiffMQ method anywhere on the stack (inclusive). {@code benchmarks/compare --jfr=DIR} records one per SkiffMQ run.
 *
 * <pre>
 * java -cp benchmarks/target/benchmarks.jar io.skiffmq.benchmarks.JfrTop FILE.jfr [--skip=5] [--top=15]
 * </pre>
 */
public final class JfrTop {
    private JfrTop() {
    }

    public static void main(String[] args) throws Exception {
        if (args.length == 0) {
            System.err.println("usage: JfrTop FILE.jfr [--skip=SECONDS] [--top=N]");
            System.exit(2);
        }
        Map<String, String> options = CommandLine.parseOrExit("JfrTop", Map.of("skip", "5", "top", "15"),
            java.util.Arrays.copyOfRange(args, 1, args.length));
        List<RecordedEvent> events = RecordingFile.readAllEvents(Path.of(args[0])).stream()
            .filter(e -> e.getEventType().getName().equals("jdk.ExecutionSample")).toList();
        if (events.isEmpty()) {
            System.out.println("no execution samples");
            return;
        }
        Instant first = events.stream().map(RecordedEvent::getStartTime).min(Instant::compareTo).orElseThrow();
        Instant from = first.plusSeconds(Long.parseLong(options.get("skip")));
        int top = Integer.parseInt(options.get("top"));
        Map<String, Integer> threads = new HashMap<>();
        Map<String, Integer> self = new HashMap<>();
        Map<String, Integer> firstOurs = new HashMap<>();
        Map<String, Integer> inclusive = new HashMap<>();
        int samples = 0;
        for (RecordedEvent event : events) {
            RecordedStackTrace stack = event.getStackTrace();
            if (event.getStartTime().isBefore(from) || stack == null || stack.getFrames().isEmpty()) {
                continue;
            }
            samples++;
            String thread = event.getThread("sampledThread") == null ? "?"
                : event.getThread("sampledThread").getJavaName();
            threads.merge(thread == null ? "?" : thread.replaceAll("\\d+", "#"), 1, Integer::sum);
            List<RecordedFrame> frames = stack.getFrames();
            self.merge(name(frames.get(0)), 1, Integer::sum);
            Set<String> seen = new HashSet<>();
            boolean found = false;
            for (RecordedFrame frame : frames) {
                String name = name(frame);
                if (!name.startsWith("io.skiffmq.")) {
                    continue;
                }
                if (!found) {
                    firstOurs.merge(name, 1, Integer::sum);
                    found = true;
                }
                if (seen.add(name)) {
                    inclusive.merge(name, 1, Integer::sum);
                }
            }
            if (!found) {
                firstOurs.merge("(no SkiffMQ frame)", 1, Integer::sum);
            }
        }
        System.out.printf(Locale.ROOT, "%s: %d execution samples after the first %s s%n", args[0], samples,
            options.get("skip"));
        print("threads", threads, samples, top);
        print("self (top frame)", self, samples, top);
        print("first SkiffMQ frame from the top", firstOurs, samples, top);
        print("SkiffMQ methods anywhere on the stack", inclusive, samples, top);
    }

    private static String name(RecordedFrame frame) {
        return frame.getMethod().getType().getName() + "." + frame.getMethod().getName();
    }

    private static void print(String title, Map<String, Integer> counts, int samples, int top) {
        System.out.println();
        System.out.println(title + ":");
        counts.entrySet().stream().sorted(Map.Entry.<String, Integer>comparingByValue().reversed()).limit(top)
            .forEach(e -> System.out.printf(Locale.ROOT, "  %5.1f%%  %s%n", 100.0 * e.getValue() / samples,
                e.getKey()));
    }
}
