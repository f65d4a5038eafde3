package io.skiffmq.docker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The Docker image's entrypoint, {@code docker/entrypoint.sh}, run outside a container (no Docker engine here) on
 * the packaged broker ({@code broker-server/target}, as {@code SKIFFMQ_HOME}): it honours {@code JAVA_OPTS}, passes
 * its arguments to the broker, and execs java, so that the container's SIGTERM reaches the JVM; the image's
 * HEALTHCHECK command ({@code HealthProbe}) passes against it, and so does {@code bin/skiffmqctl}; SIGTERM stops it
 * cleanly (status 143, 128 + SIGTERM, as every JVM that shuts down on the signal exits). Beside it, the jar run
 * as a newcomer runs it, {@code java -jar skiffmq.jar} without {@code jvm.options}: its manifest opens what
 * Chronicle Queue needs.
 *
 * <p>In the benchmarks module because it needs {@code skiffmq.jar}, which broker-server's package phase makes:
 * in {@code mvn verify} this module's tests run after it. Skipped when the jar is not there (a targeted run
 * without {@code package}).
 */
class EntrypointScriptTest {
    private static final Pattern HTTP_API =
        Pattern.compile("listening for HTTP API requests on /127\\.0\\.0\\.1:(\\d+)");
    private static final Pattern AMQP = Pattern.compile("listening for AMQP 1\\.0 on /127\\.0\\.0\\.1:(\\d+) ");

    @TempDir
    Path dataDir;

    @Test
    void startsTheBrokerPassesTheHealthCheckAndStopsOnSigterm() throws Exception {
        Path root = Path.of("").toAbsolutePath().getParent();
        Path home = root.resolve("broker-server/target");
        Path jar = home.resolve("skiffmq.jar");
        assumeTrue(Files.isRegularFile(jar) && Files.isRegularFile(home.resolve("jvm.options")),
            "broker-server/target/skiffmq.jar is not built (mvn package)");

        ProcessBuilder builder = new ProcessBuilder("sh", root.resolve("docker/entrypoint.sh").toString(),
            "--port=0", "--management-port=0", "--prometheus-port=0", "--stream-port=0").redirectErrorStream(true);
        builder.environment().put("SKIFFMQ_HOME", home.toString());
        builder.environment().put("SKIFFMQ_DATA_DIR", dataDir.toString());
        // a setting through JAVA_OPTS: the broker listening on 127.0.0.1 shows the flags reached the JVM
        builder.environment().put("JAVA_OPTS", "-Xmx256m -Dskiffmq.bind=127.0.0.1");
        Process broker = builder.start();
        List<String> output = new CopyOnWriteArrayList<>();
        CompletableFuture<Integer> amqpPort = new CompletableFuture<>();
        CompletableFuture<Integer> httpPort = new CompletableFuture<>();
        Thread pump = new Thread(() -> pump(broker, output, amqpPort, httpPort), "entrypoint-output");
        pump.setDaemon(true);
        pump.start();
        try {
            int management = httpPort.get(60, TimeUnit.SECONDS);
            assertThat(amqpPort.get(60, TimeUnit.SECONDS)).as("--port=0 reached the broker").isNotEqualTo(5672);
            assertThat(management).as("--management-port=0 reached the broker").isNotEqualTo(15672);
            // exec: the script's process is now the JVM, which gets the signals the container gets
            assertThat(broker.toHandle().info().command().orElseThrow()).endsWith("/java");
            assertThat(Files.exists(dataDir.resolve(".lock"))).as("data-dir from SKIFFMQ_DATA_DIR").isTrue();

            Process probe = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp", jar.toString(), "io.skiffmq.server.HealthProbe",
                "http://127.0.0.1:" + management + "/api/health/checks/is-in-service").redirectErrorStream(true)
                .start();
            String said = new String(probe.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertThat(probe.waitFor(60, TimeUnit.SECONDS)).isTrue();
            assertThat(probe.exitValue()).as(said).isZero();

            if (!stale(root, jar)) {
                // bin/skiffmqctl on the same jar (when the jar is older than a source, the wrapper would rebuild it)
                Process ctl = new ProcessBuilder("bash", root.resolve("bin/skiffmqctl").toString(), "--port",
                    String.valueOf(management), "-q", "list_exchanges", "name", "type").redirectErrorStream(true)
                    .start();
                String listed = new String(ctl.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
                assertThat(ctl.waitFor(60, TimeUnit.SECONDS)).isTrue();
                assertThat(ctl.exitValue()).as(listed).isZero();
                assertThat(listed.split("\n")).contains("name\ttype", "amq.fanout\tfanout");
            }

            broker.toHandle().destroy(); // SIGTERM
            assertThat(broker.waitFor(60, TimeUnit.SECONDS)).as("stopped on SIGTERM").isTrue();
            assertThat(broker.exitValue()).isEqualTo(143);
            pump.join(TimeUnit.SECONDS.toMillis(10));
            assertThat(output).anyMatch(line -> line.contains("SkiffMQ stopped"));
        } finally {
            broker.destroyForcibly().waitFor();
        }
    }

    @Test
    void aPlainJavaJarHasTheModuleFlagsChronicleNeedsFromItsManifest() throws Exception {
        Path jar = Path.of("").toAbsolutePath().getParent().resolve("broker-server/target/skiffmq.jar");
        assumeTrue(Files.isRegularFile(jar), "broker-server/target/skiffmq.jar is not built (mvn package)");
        Process broker = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
            "-Xmx256m", "-jar", jar.toString(), "--bind=127.0.0.1", "--port=0", "--management-port=0",
            "--prometheus-port=0", "--stream-port=0", "--data-dir=" + dataDir).redirectErrorStream(true).start();
        List<String> output = new CopyOnWriteArrayList<>();
        CompletableFuture<Integer> amqpPort = new CompletableFuture<>();
        CompletableFuture<Integer> httpPort = new CompletableFuture<>();
        Thread pump = new Thread(() -> pump(broker, output, amqpPort, httpPort), "plain-jar-output");
        pump.setDaemon(true);
        pump.start();
        try {
            int management = httpPort.get(60, TimeUnit.SECONDS);
            // a stream's log is Chronicle Queue's: without the module flags its files cannot be mapped (a 500)
            java.net.http.HttpResponse<String> declared = java.net.http.HttpClient.newHttpClient().send(
                java.net.http.HttpRequest.newBuilder(java.net.URI.create("http://127.0.0.1:" + management
                        + "/api/queues/%2F/plain-jar-stream"))
                    .header("authorization", "Basic " + java.util.Base64.getEncoder().encodeToString(
                        "guest:guest".getBytes(StandardCharsets.UTF_8)))
                    .header("content-type", "application/json")
                    .PUT(java.net.http.HttpRequest.BodyPublishers.ofString(
                        "{\"durable\":true,\"arguments\":{\"x-queue-type\":\"stream\"}}"))
                    .build(), java.net.http.HttpResponse.BodyHandlers.ofString());
            assertThat(declared.statusCode()).as(declared.body()).isEqualTo(201);
            assertThat(output).noneMatch(line -> line.contains("Chronicle products may require command line"));
        } finally {
            broker.destroyForcibly().waitFor();
        }
    }

    /** True when a source is newer than the jar: bin/skiffmqctl would build it (bin/skiffmq's rule). */
    private static boolean stale(Path root, Path jar) throws IOException {
        long built = Files.getLastModifiedTime(jar).toMillis();
        try (var files = Files.walk(root)) {
            return files.filter(f -> f.toString().contains("/src/main/") && Files.isRegularFile(f))
                .anyMatch(f -> f.toFile().lastModified() > built)
                || root.resolve("pom.xml").toFile().lastModified() > built;
        }
    }

    private static void pump(Process process, List<String> output, CompletableFuture<Integer> amqpPort,
            CompletableFuture<Integer> httpPort) {
        try (BufferedReader in = new BufferedReader(new InputStreamReader(process.getInputStream(),
                StandardCharsets.UTF_8))) {
            for (String line; (line = in.readLine()) != null; ) {
                output.add(line);
                Matcher amqp = AMQP.matcher(line);
                if (amqp.find()) {
                    amqpPort.complete(Integer.parseInt(amqp.group(1)));
                }
                Matcher http = HTTP_API.matcher(line);
                if (http.find()) {
                    httpPort.complete(Integer.parseInt(http.group(1)));
                }
            }
        } catch (IOException e) {
            httpPort.completeExceptionally(e);
        }
        IllegalStateException exited = new IllegalStateException("the broker exited: " + String.join("\n", output));
        amqpPort.completeExceptionally(exited);
        httpPort.completeExceptionally(exited);
    }
}
