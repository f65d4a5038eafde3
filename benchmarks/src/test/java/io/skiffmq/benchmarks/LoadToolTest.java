package io.skiffmq.benchmarks;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.skiffmq.server.transport.AmqpListener;
import io.skiffmq.server.config.BrokerConfig;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The load tool against a real broker on an ephemeral port, with counts small enough for CI: it counts exactly
 * what arrives, with the lean engine (the default) and the JMS one.
 */
class LoadToolTest {
    @TempDir
    static Path data;
    private static AmqpListener broker;
    private static int port;

    @BeforeAll
    static void start() throws Exception {
        broker = new AmqpListener(BrokerConfig.defaults().with("port", "0").with("bind", "127.0.0.1")
            .with("data-dir", data.toString()).with("sync-policy", "os").with("prometheus-port", "0")
            .with("management-port", "0").with("stream-port", "0"));
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
    void theLeanEngineChecksEveryBodyOfTransientMessagesAndMeasuresTheBroker() throws Exception {
        long pid = ProcessHandle.current().pid();
        LoadTool.Result result = run("lean-queue", Map.of("count", "3000", "broker-pid", Long.toString(pid)));
        assertThat(result.options().get("engine")).isEqualTo("lean");
        assertThat(result.errors()).isZero();
        assertThat(result.sent()).isEqualTo(3000);
        assertThat(result.received()).isEqualTo(3000);
        assertThat(result.latency().getTotalCount()).isEqualTo(3000);
        // the broker runs in this process here: its CPU is measured, whatever it was
        assertThat(result.brokerCpuSeconds()).isGreaterThanOrEqualTo(0);
        assertThat(result.json()).contains("\"engine\":\"lean\"").contains("\"broker_cpu_us_per_msg\"");
    }

    @Test
    void aPacedRunSendsEveryMessage() throws Exception {
        LoadTool.Result result = run("paced-queue", Map.of("count", "500", "rate", "5000", "senders", "2"));
        assertThat(result.errors()).isZero();
        assertThat(result.received()).isEqualTo(1000);
    }

    @Test
    void aMessageLargerThanTheFrameSizeIsSplitAndJoined() throws Exception {
        LoadTool.Result result = run("large-queue", Map.of("count", "20", "body-size", "300000"));
        assertThat(result.errors()).isZero();
        assertThat(result.received()).isEqualTo(20);
    }

    @Test
    void presettledMessagesCountAsSentOnceWritten() throws Exception {
        LoadTool.Result result = run("settled-queue", Map.of("count", "800", "settled", "true"));
        assertThat(result.errors()).isZero();
        assertThat(result.sent()).isEqualTo(800);
        assertThat(result.received()).isEqualTo(800);
    }

    @Test
    void aRefusedLinkFailsTheRunWithTheBrokersReason() {
        assertThatThrownBy(() -> run("unused", Map.of("target", "/queues/missing", "count", "10")))
            .hasStackTraceContaining("amqp:not-found");
    }

    /** A queue that refuses every publish: no room, and {@code reject-publish}. */
    private static void declareRefusingQueue(String queue) {
        try (com.rabbitmq.client.amqp.Environment environment =
                new com.rabbitmq.client.amqp.impl.AmqpEnvironmentBuilder().connectionSettings().host("127.0.0.1")
                    .port(port).username("guest").password("guest").environmentBuilder().build();
             com.rabbitmq.client.amqp.Connection connection = environment.connectionBuilder().build()) {
            connection.management().queue().name(queue).argument("x-max-length", 0L)
                .argument("x-overflow", "reject-publish").declare();
        }
    }

    @Test
    void aRunWhoseEveryDeliveryIsRejectedEndsAndCountsThemAsErrors() throws Exception {
        // every publish refused: no confirm, no delivery; the run still ends at its time and reports
        declareRefusingQueue("refusing-queue");
        LoadTool.Result timed = org.junit.jupiter.api.Assertions.assertTimeoutPreemptively(
            java.time.Duration.ofSeconds(120),
            () -> run("refusing-queue", Map.of("duration", "2", "warmup", "0", "in-flight", "50")));
        assertThat(timed.sent()).isZero();
        assertThat(timed.received()).isZero();
        assertThat(timed.errors()).isPositive();
        LoadTool.Result counted = org.junit.jupiter.api.Assertions.assertTimeoutPreemptively(
            java.time.Duration.ofSeconds(120), () -> run("refusing-queue", Map.of("count", "200", "in-flight", "50")));
        assertThat(counted.sent()).isZero();
        assertThat(counted.errors()).isEqualTo(200);
    }

    @Test
    void aRunEndsAtItsTimeWhenTheBrokerGrantsNoMoreCredit() throws Exception {
        // a sender that spent its credit and has every delivery settled gets no frame that would make it look at
        // the clock again: it never ended, and the run with it (as when every delivery is rejected and no credit
        // follows)
        var monitor = broker.broker().resourceMonitor();
        long limit = monitor.memoryLimit();
        monitor.memoryLimit(0); // the memory alarm: publishers get no more credit
        try {
            LoadTool.Result result = org.junit.jupiter.api.Assertions.assertTimeoutPreemptively(
                java.time.Duration.ofSeconds(120), () -> run("no-credit-queue", Map.of("duration", "2", "warmup",
                    "0", "give-up", "5")));
            assertThat(result.seconds()).isLessThan(60);
        } finally {
            monitor.memoryLimit(limit);
        }
    }

    @Test
    void theJmsEngineCountsTheSameWay() throws Exception {
        LoadTool.Result result = run("jms-queue", Map.of("engine", "jms", "senders", "2", "count", "500",
            "durable", "true"));
        assertThat(result.errors()).isZero();
        assertThat(result.sent()).isEqualTo(1000);
        assertThat(result.received()).isEqualTo(1000);
    }

    @Test
    void aBacklogIsFilledFirstThenDrained() throws Exception {
        LoadTool.Result result = run("load-backlog", Map.of("backlog", "true", "count", "1500", "durable", "true"));
        assertThat(result.errors()).isZero();
        assertThat(result.received()).isEqualTo(1500);
    }
}
