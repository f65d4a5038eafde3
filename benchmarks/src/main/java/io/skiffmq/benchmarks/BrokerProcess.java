package io.skiffmq.benchmarks;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A broker in a JVM of its own, on an ephemeral loopback port with a fresh data directory: SkiffMQ from its jar
 * with its launcher's flags, or Artemis ({@link ArtemisBroker}) from this classpath. Both print the same
 * "listening for AMQP 1.0 on …:PORT " line, which {@link #start} waits for; the rest of the output is drained.
 * Closing stops it (SIGTERM) and deletes its data.
 */
final class BrokerProcess implements AutoCloseable {
    private static final Pattern LISTENING = Pattern.compile("listening for AMQP 1\\.0 on .*:(\\d+) ");
    static final String SKIFFMQ_JAR = "broker-server/target/skiffmq.jar";
    static final String SKIFFMQ_JVM_OPTIONS = "broker-server/target/jvm.options";

    private final Process process;
    private final Path data;
    final int port;

    private BrokerProcess(Process process, Path data, int port) {
        this.process = process;
        this.data = data;
        this.port = port;
    }

    /**
     * @param kind {@code skiffmq} or {@code artemis}
     * @param jvmFlags extra flags for the broker's JVM
     * @param settings extra {@code --name=value} settings for the broker
     */
    static BrokerProcess start(String kind, List<String> jvmFlags, List<String> settings) throws Exception {
        return start(kind, jvmFlags, settings, line -> { });
    }

    /** @param output hears every line the broker prints, on the thread that reads them */
    static BrokerProcess start(String kind, List<String> jvmFlags, List<String> settings,
            java.util.function.Consumer<String> output) throws Exception {
        Path data = Files.createTempDirectory("skiffmq-bench-" + kind);
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.addAll(jvmFlags);
        switch (kind) {
            case "skiffmq" -> {
                command.addAll(List.of(Files.readString(Path.of(SKIFFMQ_JVM_OPTIONS)).trim().split("\\s+")));
                // no metrics, HTTP or stream port: brokers side by side (and other runs on the machine) must not
                // share 15692, 15672 or 5552
                command.addAll(List.of("-jar", SKIFFMQ_JAR, "--bind=127.0.0.1", "--prometheus-port=none",
                    "--management-port=none", "--stream-port=none"));
            }
            case "artemis" -> command.addAll(List.of("-cp", System.getProperty("java.class.path"),
                ArtemisBroker.class.getName()));
            default -> throw new IllegalArgumentException("the broker is skiffmq or artemis, not " + kind);
        }
        command.addAll(List.of("--port=0", "--data-dir=" + data));
        command.addAll(settings);
        Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        try {
            return new BrokerProcess(process, data, port(process, output));
        } catch (Exception e) {
            process.destroyForcibly().waitFor();
            delete(data);
            throw e;
        }
    }

    boolean isAlive() {
        return process.isAlive();
    }

    long pid() {
        return process.pid();
    }

    private static int port(Process broker, java.util.function.Consumer<String> output) throws Exception {
        CompletableFuture<Integer> port = new CompletableFuture<>();
        Thread pump = new Thread(() -> {
            try (BufferedReader in = new BufferedReader(new InputStreamReader(broker.getInputStream(),
                    StandardCharsets.UTF_8))) {
                for (String line; (line = in.readLine()) != null; ) {
                    output.accept(line);
                    Matcher m = LISTENING.matcher(line);
                    if (m.find()) {
                        port.complete(Integer.parseInt(m.group(1)));
                    }
                }
            } catch (IOException e) {
                port.completeExceptionally(e);
            }
            port.completeExceptionally(new IllegalStateException("the broker exited"));
        }, "broker-output");
        pump.setDaemon(true);
        pump.start();
        return port.get(60, TimeUnit.SECONDS);
    }

    private static void delete(Path data) throws Exception {
        new ProcessBuilder("rm", "-rf", data.toString()).start().waitFor();
    }

    @Override
    public void close() throws Exception {
        process.destroy();
        process.waitFor(30, TimeUnit.SECONDS);
        delete(data);
    }
}
