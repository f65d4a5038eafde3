package io.skiffmq.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.skiffmq.codec.testing.LeakDetection;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A non-Java client stack: rhea (AMQP 1.0 for Node.js) sends and receives through the broker. The test installs
 * rhea from npm into target/ itself; where Node.js is absent it is skipped, except on CI, where it fails.
 */
@ExtendWith(LeakDetection.class)
class RheaClientTest {
    private static RunningBroker broker;
    private static Path workDir;

    @BeforeAll
    static void setUp() throws Exception {
        boolean hasNode = run(List.of("node", "--version"), Path.of(".")) == 0;
        if (!hasNode) {
            if (System.getenv("CI") != null) {
                throw new IllegalStateException("node is needed on CI for the rhea test");
            }
            Assumptions.abort("Node.js is not installed");
        }
        workDir = Path.of("target", "rhea");
        Files.createDirectories(workDir);
        for (String file : List.of("package.json", "send-receive.js")) {
            try (InputStream in = RheaClientTest.class.getResourceAsStream("/rhea/" + file)) {
                Files.copy(in, workDir.resolve(file), java.nio.file.StandardCopyOption.REPLACE_EXISTING);
            }
        }
        if (!Files.isDirectory(workDir.resolve("node_modules/rhea"))) {
            assertThat(run(List.of("npm", "install", "--no-audit", "--no-fund", "--loglevel=error"), workDir))
                .as("npm install rhea").isZero();
        }
        broker = RunningBroker.start();
    }

    @AfterAll
    static void tearDown() {
        if (broker != null) {
            broker.close();
        }
    }

    private static int run(List<String> command, Path dir) throws IOException, InterruptedException {
        try {
            Process process = new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true)
                .redirectOutput(new File(dir.toFile(), ".out-" + command.get(0))).start();
            if (!process.waitFor(5, TimeUnit.MINUTES)) {
                process.destroyForcibly();
                return -1;
            }
            return process.exitValue();
        } catch (IOException e) {
            return -1;
        }
    }

    @Test
    void rheaSendsAndReceives() throws Exception {
        Process process = new ProcessBuilder("node", "send-receive.js", String.valueOf(broker.port()), "rhea-queue", "50")
            .directory(workDir.toFile()).redirectErrorStream(true).start();
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(process.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(process.exitValue()).as(output).isZero();
        assertThat(output).contains("\"error\":null").contains("\"accepted\":50").contains("\"released\":0")
            .contains("\"body\":\"rhea-1\"").contains("\"body\":\"rhea-50\"").contains("\"exchange\":\"\"");
    }
}
