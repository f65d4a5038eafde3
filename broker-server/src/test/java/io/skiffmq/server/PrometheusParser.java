package io.skiffmq.server;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;

/**
 * Python's {@code prometheus_client} text-format parser, run as a child process: the real parser Prometheus users
 * read our scrapes with (no Java parser for the text format resolves here). Installed once with pip into
 * {@code target/python}; tests are skipped only when there is no {@code python3}.
 */
final class PrometheusParser {
    private static final Path LIB = Path.of("target", "python");
    private static Path script;

    private PrometheusParser() {
    }

    /** The samples of {@code scrape}, keyed {@code name{k=v,...}} with labels sorted by name. */
    static synchronized Map<String, Double> parse(String scrape) throws IOException, InterruptedException {
        prepare();
        Files.writeString(Path.of("target", "last-scrape.prom"), scrape); // kept, to read by eye
        Process python = new ProcessBuilder("python3", script.toString())
            .redirectError(ProcessBuilder.Redirect.INHERIT).start();
        try (var in = python.getOutputStream()) {
            in.write(scrape.getBytes(StandardCharsets.UTF_8));
        }
        String out;
        try (InputStream stdout = python.getInputStream()) {
            out = new String(stdout.readAllBytes(), StandardCharsets.UTF_8);
        }
        if (!python.waitFor(60, TimeUnit.SECONDS) || python.exitValue() != 0) {
            throw new AssertionError("prometheus_client could not parse the scrape:\n" + scrape);
        }
        Map<String, Double> samples = new HashMap<>();
        for (String line : out.split("\n")) {
            if (line.isEmpty()) {
                continue;
            }
            String[] parts = line.split("\t", -1);
            String key = parts[0] + "{" + parts[1] + "}";
            if (samples.put(key, Double.parseDouble(parts[2])) != null) {
                throw new AssertionError("sample twice in one scrape: " + key);
            }
        }
        return samples;
    }

    private static void prepare() throws IOException, InterruptedException {
        if (script != null) {
            return;
        }
        Assumptions.assumeTrue(run("python3", "--version") == 0, "python3 is not installed: the Prometheus "
            + "text-format parser (python prometheus_client) cannot run, so the scrape is not parsed");
        if (!Files.isDirectory(LIB.resolve("prometheus_client"))) {
            int pip = run("python3", "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                "--target", LIB.toString(), "prometheus_client");
            if (pip != 0) {
                throw new AssertionError("pip could not install prometheus_client into " + LIB);
            }
        }
        Path file = LIB.resolve("parse_metrics.py");
        try (InputStream source = PrometheusParser.class.getResourceAsStream("/parse_metrics.py")) {
            String body = "import sys\nsys.path.insert(0, " + quoted(LIB.toAbsolutePath().toString()) + ")\n"
                + new String(source.readAllBytes(), StandardCharsets.UTF_8);
            Files.writeString(file, body);
        }
        script = file;
    }

    private static String quoted(String path) {
        return "'" + path.replace("\\", "\\\\").replace("'", "\\'") + "'";
    }

    private static int run(String... command) throws InterruptedException {
        try {
            Process process = new ProcessBuilder(command).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
            if (!process.waitFor(300, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                return -1;
            }
            return process.exitValue();
        } catch (IOException e) {
            return -1;
        }
    }
}
