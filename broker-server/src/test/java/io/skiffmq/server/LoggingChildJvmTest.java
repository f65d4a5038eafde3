package io.skiffmq.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.rabbitmq.client.ConnectionFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.ObjectMapper;

/**
 * The broker's log as {@code bin/skiffmq} writes it, from a child JVM: with {@code log-format=json} every line is
 * a JSON object with time, level, logger and message; our own, Netty's and Chronicle's events are all there; a
 * connection's events name it as RabbitMQ does, peer address first.
 */
class LoggingChildJvmTest {
    @TempDir
    Path dataDir;

    @Test
    void jsonLinesCarryOurNettysAndChroniclesEventsAndNameTheConnection() throws Exception {
        int clientPort;
        ChildBroker broker = ChildBroker.start(dataDir, "logging-json", List.of(),
            List.of("--log-format=json", "--log-level=debug"));
        try (broker) {
            ConnectionFactory factory = new ConnectionFactory();
            factory.setHost("127.0.0.1");
            factory.setPort(broker.port);
            factory.setAutomaticRecoveryEnabled(false);
            try (com.rabbitmq.client.Connection connection = factory.newConnection()) {
                clientPort = ((com.rabbitmq.client.impl.AMQConnection) connection).getLocalPort();
            }
            broker.stop();
            await().atMost(Duration.ofSeconds(30))
                .until(() -> Files.readString(broker.log).contains("SkiffMQ stopped"));
        }
        ObjectMapper json = new ObjectMapper();
        List<JsonNode> events = new ArrayList<>();
        for (String line : Files.readAllLines(broker.log)) {
            JsonNode event = json.readTree(line);
            assertThat(event.has("timestamp") && event.has("level") && event.has("loggerName")
                && event.has("formattedMessage")).as(line).isTrue();
            events.add(event);
        }
        assertThat(events).anyMatch(e -> e.get("loggerName").asString().startsWith("io.netty"));
        assertThat(events).anyMatch(e -> e.get("loggerName").asString().startsWith("net.openhft"));
        String name = "127.0.0.1:" + clientPort + " -> 127.0.0.1:" + broker.port;
        List<String> messages = events.stream().map(e -> e.get("formattedMessage").asString())
            .filter(m -> m.startsWith("connection " + name + ": ")).toList();
        assertThat(messages).containsSubsequence(
            "connection " + name + ": accepted (AMQP 0-9-1)",
            "connection " + name + ": user 'guest' authenticated and granted access to vhost '/'",
            "connection " + name + ": closed (client_close): the client closed with 200 OK");
    }

    @Test
    void textLinesHaveTimeLevelThreadLoggerAndMessage() throws Exception {
        ChildBroker broker = ChildBroker.start(dataDir, "logging-text", List.of(), List.of());
        try (broker) {
            broker.stop();
            await().atMost(Duration.ofSeconds(30))
                .until(() -> Files.readString(broker.log).contains("SkiffMQ stopped"));
        }
        List<String> lines = Files.readAllLines(broker.log);
        assertThat(lines).isNotEmpty().allMatch(line -> line.matches(
            "\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{3}(Z|[+-]\\d\\d:\\d\\d)"
                + " (ERROR|WARN |INFO ) \\[[^]]+] \\S+ - .+"));
        assertThat(lines).anyMatch(line -> line.contains(" INFO  [main] i.s.server.transport.AmqpListener - listening"
            + " for AMQP 1.0 on /127.0.0.1:" + broker.port + " "));
        assertThat(lines).as("Chronicle's INFO chatter is held back at log-level info")
            .noneMatch(line -> line.contains(" INFO ") && line.contains(" n.o.c."));
    }
}
