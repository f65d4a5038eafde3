package io.skiffmq.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.skiffmq.codec.testing.LeakDetection;
import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * A non-Java AMQP 0-9-1 client: pika (Python), pinned, installed from PyPI into {@code target/pika} by the test
 * itself, runs {@code src/test/python/pika_roundtrip.py} (confirms, a mandatory return, properties and headers,
 * basic_consume with manual acks and one nack-requeue, basic.get, transactions) and prints one JSON line that this
 * test checks. Skipped where python3 is absent, except on CI, where that fails.
 */
@ExtendWith(LeakDetection.class)
class Amqp091PikaTest {
    private static final String PIKA_VERSION = "1.4.4";
    private static final int COUNT = 100;
    private static final Path INSTALL_DIR = Path.of("target", "pika");
    private static final Path SCRIPT = Path.of("src", "test", "python", "pika_roundtrip.py");

    private static Amqp091Target target;

    @BeforeAll
    static void setUp() throws Exception {
        if (run(List.of("python3", "--version"), Path.of("target", "python3-version.out")) != 0) {
            if (System.getenv("CI") != null) {
                throw new IllegalStateException("python3 is needed on CI for the pika test");
            }
            Assumptions.abort("python3 is not installed: the pika test needs it");
        }
        if (!Files.isDirectory(INSTALL_DIR.resolve("pika-" + PIKA_VERSION + ".dist-info"))) {
            Path log = Path.of("target", "pika-install.out");
            int status = run(List.of("python3", "-m", "pip", "install", "--disable-pip-version-check", "--no-input",
                "--no-deps", "--upgrade", "--target", INSTALL_DIR.toString(), "pika==" + PIKA_VERSION), log);
            assertThat(status).as("pip install pika==%s:%n%s", PIKA_VERSION, Files.readString(log)).isZero();
        }
        target = Amqp091Target.start();
    }

    @AfterAll
    static void tearDown() {
        if (target != null) {
            target.close();
        }
    }

    private static int run(List<String> command, Path output) throws IOException, InterruptedException {
        Files.createDirectories(output.getParent());
        try {
            Process process = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(output.toFile())
                .start();
            if (!process.waitFor(5, TimeUnit.MINUTES)) {
                process.destroyForcibly();
                return -1;
            }
            return process.exitValue();
        } catch (IOException e) {
            return -1; // not installed
        }
    }

    @Test
    void pikaPublishesWithConfirmsConsumesWithAcksAndRunsTransactions() throws Exception {
        List<String> command = new ArrayList<>(List.of("python3", SCRIPT.toString(), target.host(),
            String.valueOf(target.port()), String.valueOf(COUNT)));
        ProcessBuilder builder = new ProcessBuilder(command).redirectError(new File("target/pika-roundtrip.err"));
        builder.environment().put("PYTHONPATH", INSTALL_DIR.toAbsolutePath().toString());
        builder.environment().put("PYTHONDONTWRITEBYTECODE", "1");
        Process process = builder.start();
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(process.waitFor(60, TimeUnit.SECONDS)).as("pika script finished").isTrue();
        String errors = Files.readString(Path.of("target", "pika-roundtrip.err"));
        assertThat(process.exitValue()).as("exit status; stderr:%n%s%nstdout:%n%s", errors, output).isZero();

        JsonNode result = JsonMapper.builder().build().readTree(output.strip());
        assertThat(result.path("product").asString()).isNotBlank();
        List<String> capabilities = new ArrayList<>();
        result.path("capabilities").forEach(node -> capabilities.add(node.asString()));
        assertThat(capabilities).contains("publisher_confirms", "basic.nack", "consumer_cancel_notify",
            "exchange_exchange_bindings", "connection.blocked", "authentication_failure_close", "per_consumer_qos",
            "direct_reply_to", "consumer_priorities");

        assertThat(result.path("confirmed").asInt()).isEqualTo(COUNT);
        assertThat(result.path("returned").asInt()).isEqualTo(1);
        assertThat(result.path("return").path("code").asInt()).isEqualTo(312);
        assertThat(result.path("return").path("text").asString()).isEqualTo("NO_ROUTE");
        assertThat(result.path("return").path("routing_key").asString()).isEqualTo("nobody.listens");
        assertThat(result.path("ready_before").asInt()).isEqualTo(COUNT);

        assertThat(result.path("consumed").asInt()).isEqualTo(COUNT);
        assertThat(result.path("in_order").asBoolean()).isTrue();
        assertThat(result.path("redelivered").toString()).isEqualTo("[\"msg-3\"]");
        assertThat(result.path("ready_after").asInt()).isZero();
        assertThat(result.path("consumers_after").asInt()).isZero();
        assertThat(result.path("get_empty").asBoolean()).isTrue();

        JsonNode first = result.path("first");
        assertThat(first.path("exchange").asString()).startsWith("pika-topic-");
        assertThat(first.path("routing_key").asString()).isEqualTo("pika.msg.0");
        assertThat(first.path("redelivered").asBoolean()).isFalse();
        assertThat(first.path("body").asString()).isEqualTo("{\"i\": 0}");
        JsonNode properties = first.path("properties");
        assertThat(properties.path("content_type").asString()).isEqualTo("application/json");
        assertThat(properties.path("content_encoding").asString()).isEqualTo("utf-8");
        assertThat(properties.path("delivery_mode").asInt()).isEqualTo(2);
        assertThat(properties.path("priority").asInt()).isZero();
        assertThat(properties.path("correlation_id").asString()).isEqualTo("corr-0");
        assertThat(properties.path("reply_to").asString()).isEqualTo("pika-replies");
        assertThat(properties.path("expiration").asString()).isEqualTo("600000");
        assertThat(properties.path("message_id").asString()).isEqualTo("msg-0");
        assertThat(properties.path("timestamp").asLong()).isEqualTo(1_700_000_000L);
        assertThat(properties.path("type").asString()).isEqualTo("pika.test");
        assertThat(properties.path("user_id").asString()).isEqualTo("guest");
        assertThat(properties.path("app_id").asString()).isEqualTo("pika-roundtrip");
        assertThat(first.path("headers").toString()).isEqualTo("{\"big\":1099511627776,\"flag\":true,\"index\":0,"
            + "\"list\":[1,\"two\",false],\"name\":\"pika\",\"nested\":{\"a\":1,\"b\":\"two\"},"
            + "\"ratio\":{\"decimal\":\"1.5\"},\"when\":{\"timestamp\":\"2024-01-02T03:04:05+00:00\"}}");

        assertThat(result.path("tx_body").asString()).as("the rolled back publish never arrived")
            .isEqualTo("committed");
        assertThat(result.path("tx_get_message_count").asInt()).isZero();
        assertThat(result.path("deleted_messages").asInt()).isZero();
    }
}
