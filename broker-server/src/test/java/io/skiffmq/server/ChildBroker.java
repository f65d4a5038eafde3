package io.skiffmq.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.lang.management.ManagementFactory;
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
 * A broker in a child JVM on a free loopback port, started with this JVM's module flags and classpath; its output
 * goes to {@code target/child-brokers/NAME.log}. Closing kills it if it still runs.
 */
final class ChildBroker implements AutoCloseable {
    private static final Pattern LISTENING = Pattern.compile("listening for AMQP 1\\.0 on .*:(\\d+) ");
    private static final Pattern HTTP_API = Pattern.compile("listening for HTTP API requests on .*:(\\d+)");
    private static final Pattern STREAMS = Pattern.compile("listening for RabbitMQ streams on .*:(\\d+)");
    private static final Pattern METRICS = Pattern.compile("serving Prometheus metrics on http://.*:(\\d+)/metrics");

    final Process process;
    final int port;
    /** Where its output goes. */
    final Path log;
    /** The HTTP API's port, once the child logged it (it binds last). */
    private final CompletableFuture<Integer> managementPort;
    /** The stream protocol's port, once the child logged it. */
    private final CompletableFuture<Integer> streamPort;
    /** The Prometheus endpoint's port, once the child logged it. */
    private final CompletableFuture<Integer> metricsPort;

    private ChildBroker(Process process, int port, Path log, CompletableFuture<Integer> managementPort,
            CompletableFuture<Integer> streamPort, CompletableFuture<Integer> metricsPort) {
        this.process = process;
        this.port = port;
        this.log = log;
        this.managementPort = managementPort;
        this.streamPort = streamPort;
        this.metricsPort = metricsPort;
    }

    /** The Prometheus endpoint's port ({@code prometheus-port=0}), waiting for the child to bind it. */
    int metricsPort() throws Exception {
        return metricsPort.get(60, TimeUnit.SECONDS);
    }

    /** The stream protocol's port ({@code stream-port=0}), waiting for the child to bind it. */
    int streamPort() throws Exception {
        return streamPort.get(60, TimeUnit.SECONDS);
    }

    /** The HTTP API's port ({@code management-port=0}), waiting for the child to bind it. */
    int managementPort() throws Exception {
        return managementPort.get(60, TimeUnit.SECONDS);
    }

    /**
     * This JVM's java with the module and Chronicle flags the broker needs, before a child's own flags. A child lives
     * seconds to a minute: it compiles with C1 alone, as C2's compiler threads took the 2 cores from its start (to its
     * HTTP API, 6-8 s with C2, 2-2.7 s without, at a load of 12-17).
     */
    static List<String> javaCommand() {
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.add("-XX:TieredStopAtLevel=1");
        for (String flag : ManagementFactory.getRuntimeMXBean().getInputArguments()) {
            if (flag.startsWith("--add-") || flag.startsWith("-Dchronicle")) {
                command.add(flag);
            }
        }
        return command;
    }

    /**
     * @param jvmFlags heap size and the like
     * @param settings {@code --name=value} broker settings beyond port, bind address and data directory
     */
    static ChildBroker start(Path dataDir, String name, List<String> jvmFlags, List<String> settings)
            throws Exception {
        return start(List.of(), dataDir, name, jvmFlags, settings);
    }

    /**
     * @param wrapper words before java, such as {@code ip netns exec NS}, which must exec java in its own place
     *        (the process is then java's, for kill -9)
     */
    static ChildBroker start(List<String> wrapper, Path dataDir, String name, List<String> jvmFlags,
            List<String> settings) throws Exception {
        List<String> command = new ArrayList<>(wrapper);
        command.addAll(javaCommand());
        command.addAll(jvmFlags);
        command.addAll(List.of("-cp", System.getProperty("java.class.path"), SkiffMq.class.getName(), "--port=0",
            "--prometheus-port=0", "--management-port=0", "--stream-port=0",
            "--bind=127.0.0.1", "--data-dir=" + dataDir.resolve("broker")));
        command.addAll(settings);
        Path log = Path.of("target", "child-brokers", name + ".log");
        Files.createDirectories(log.getParent());
        Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        CompletableFuture<Integer> port = new CompletableFuture<>();
        CompletableFuture<Integer> managementPort = new CompletableFuture<>();
        CompletableFuture<Integer> streamPort = new CompletableFuture<>();
        CompletableFuture<Integer> metricsPort = new CompletableFuture<>();
        Thread pump = new Thread(() -> pump(process, log, port, managementPort, streamPort, metricsPort),
            "child-broker-log-" + name);
        pump.setDaemon(true);
        pump.start();
        try {
            return new ChildBroker(process, port.get(60, TimeUnit.SECONDS), log, managementPort, streamPort,
                metricsPort);
        } catch (Exception e) {
            process.destroyForcibly().waitFor();
            throw new AssertionError("the child broker did not start; see " + log.toAbsolutePath(), e);
        }
    }

    /** Copies the child's output to its log file, and finds the port it listens on. */
    private static void pump(Process process, Path log, CompletableFuture<Integer> port,
            CompletableFuture<Integer> managementPort, CompletableFuture<Integer> streamPort,
            CompletableFuture<Integer> metricsPort) {
        try (BufferedReader in = new BufferedReader(new InputStreamReader(process.getInputStream(),
                StandardCharsets.UTF_8)); var out = Files.newBufferedWriter(log)) {
            for (String line; (line = in.readLine()) != null; ) {
                out.write(line);
                out.newLine();
                out.flush();
                Matcher m = LISTENING.matcher(line);
                if (m.find()) {
                    port.complete(Integer.parseInt(m.group(1)));
                }
                Matcher http = HTTP_API.matcher(line);
                if (http.find()) {
                    managementPort.complete(Integer.parseInt(http.group(1)));
                }
                Matcher streams = STREAMS.matcher(line);
                if (streams.find()) {
                    streamPort.complete(Integer.parseInt(streams.group(1)));
                }
                Matcher metrics = METRICS.matcher(line);
                if (metrics.find()) {
                    metricsPort.complete(Integer.parseInt(metrics.group(1)));
                }
            }
        } catch (IOException e) {
            port.completeExceptionally(e);
            managementPort.completeExceptionally(e);
            streamPort.completeExceptionally(e);
            metricsPort.completeExceptionally(e);
        }
        port.completeExceptionally(new IllegalStateException("the child broker exited"));
        managementPort.completeExceptionally(new IllegalStateException("the child broker exited"));
        streamPort.completeExceptionally(new IllegalStateException("the child broker exited"));
        metricsPort.completeExceptionally(new IllegalStateException("the child broker exited"));
    }

    boolean alive() {
        return process.isAlive();
    }

    /**
     * Why an exited child stopped, for a failure's message: its exit code and its last lines (a broker that cannot
     * go on says why in one {@code skiffmq:} line before it exits).
     */
    String exitReport() {
        return "exited" + (process.isAlive() ? " (not yet)" : " with " + process.exitValue()) + ", " + logTail(3);
    }

    /** Its log's path and last {@code count} lines, for a failure's message. */
    String logTail(int count) {
        List<String> lines;
        try {
            lines = Files.readAllLines(log);
        } catch (IOException e) {
            lines = List.of("(its log unreadable: " + e + ")");
        }
        return "its log " + log.toAbsolutePath() + " ending\n  "
            + String.join("\n  ", lines.subList(Math.max(0, lines.size() - count), lines.size()));
    }

    /** Prints the child's threads to this JVM's output (jcmd), for a failure that left it alive but not answering. */
    void printThreads() {
        try {
            Process jcmd = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "jcmd").toString(),
                Long.toString(process.pid()), "Thread.print").inheritIO().start();
            if (!jcmd.waitFor(30, TimeUnit.SECONDS)) {
                jcmd.destroyForcibly();
            }
        } catch (IOException e) {
            System.out.println("no thread dump of " + process.pid() + ": " + e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** SIGKILL: no shutdown hook runs. */
    void kill() throws InterruptedException {
        process.destroyForcibly();
        process.waitFor();
    }

    /** SIGSTOP: the broker stands still, its sockets open, until {@link #resume}. */
    void pause() throws Exception {
        signal("STOP");
    }

    /** SIGCONT. */
    void resume() throws Exception {
        signal("CONT");
    }

    private void signal(String name) throws Exception {
        Process kill = new ProcessBuilder("kill", "-" + name, Long.toString(process.pid())).inheritIO().start();
        assertThat(kill.waitFor(10, TimeUnit.SECONDS) && kill.exitValue() == 0).as("kill -" + name).isTrue();
    }

    /**
     * SIGTERM: the broker shuts down cleanly. Sent through the process handle: {@code Process.destroy()} sends the
     * same signal but also closes our end of the child's output, which would lose what the broker logs while it
     * stops.
     */
    void stop() throws InterruptedException {
        process.toHandle().destroy();
        assertThat(process.waitFor(60, TimeUnit.SECONDS)).as("clean stop").isTrue();
    }

    @Override
    public void close() throws InterruptedException {
        if (process.isAlive()) {
            kill();
        }
    }
}
