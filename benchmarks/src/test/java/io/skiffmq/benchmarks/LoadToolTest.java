package io.skiffmq.benchmarks;

import static org.assertj.core.api.Assertions.assertThat;

import io.skiffmq.server.transport.AmqpListener;
import io.skiffmq.server.BrokerConfig;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The load tool against a real broker, with counts small enough for CI: it counts exactly what arrives. */
class LoadToolTest {
    @TempDir
    static Path data;
    private static AmqpListener broker;
    private static int port;

    @BeforeAll
    static void start() throws Exception {
        broker = new AmqpListener(BrokerConfig.defaults().with("port", "0").with("bind", "127.0.0.1")
            .with("data-dir", data.toString()).with("sync-policy", "os"));
        port = broker.start().getPort();
    }

    @AfterAll
    static void stop() {
        broker.close();
    }

    private static LoadTool.Result run(String queue, Map<String, String> settings) throws Exception {
        Map<String, String> options = LoadTool.defaults();
        options.put("uri", "amqp://127.0.0.1:" + port);
        options.put("queue", queue);
        options.put("progress", "false");
        options.putAll(settings);
        return LoadTool.run(options);
    }

    @Test
    void everyMessageOfSeveralSendersArrivesCheckedOnce() throws Exception {
        LoadTool.Result result = run("load-queue", Map.of("senders", "2", "count", "1000", "body-size", "64",
            "durable", "true"));
        assertThat(result.errors()).isZero();
        assertThat(result.sent()).isEqualTo(2000);
        assertThat(result.received()).isEqualTo(2000);
        assertThat(result.json()).contains("\"received_per_s\"").contains("\"errors\":0");
    }

    @Test
    void aTopicDeliversEveryMessageToEveryReceiver() throws Exception {
        LoadTool.Result result = run("unused", Map.of("topic", "true", "target", "load-topic", "receivers", "3",
            "count", "300"));
        assertThat(result.errors()).isZero();
        assertThat(result.received()).isEqualTo(900);
    }

    @Test
    void aBacklogIsFilledFirstThenDrained() throws Exception {
        LoadTool.Result result = run("load-backlog", Map.of("backlog", "true", "count", "1500", "durable", "true"));
        assertThat(result.errors()).isZero();
        assertThat(result.received()).isEqualTo(1500);
    }
}
