package io.skiffmq.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import tools.jackson.databind.JsonNode;
import tools.jackson.databind.ObjectMapper;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.ConnectionFactory;
import com.rabbitmq.client.MessageProperties;
import com.rabbitmq.stream.Environment;
import io.skiffmq.codec.testing.LeakDetection;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.qpid.protonj2.client.Client;
import org.apache.qpid.protonj2.client.ConnectionOptions;
import org.apache.qpid.protonj2.client.Receiver;
import org.apache.qpid.protonj2.client.Sender;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The Grafana dashboards against a running broker's {@code /metrics}, after real traffic over AMQP 0-9-1, AMQP 1.0
 * and the stream protocol (so that per-queue and per-stream series exist): every metric and label that RabbitMQ's
 * dashboards query ({@code docker/grafana/rabbitmq-dashboards.txt}, a list derived from them) is served, or is
 * marked absent there and explained in {@code docs/metrics.md}; every metric our own dashboard
 * ({@code docker/grafana/dashboards/skiffmq.json}) queries is served. Then the metrics added for those dashboards
 * are checked for their meaning: they move as connections, channels, queues, publishers and consumers come and go.
 */
@ExtendWith(LeakDetection.class)
class DashboardMetricsTest {
    private static final Path DOCKER = Path.of("..", "docker", "grafana");
    private static final Path RABBITMQ_LIST = DOCKER.resolve("rabbitmq-dashboards.txt");
    private static final Path OUR_DASHBOARD = DOCKER.resolve("dashboards").resolve("skiffmq.json");
    private static final Path METRICS_DOC = Path.of("..", "docs", "metrics.md");
    /** A metric name in a query: what a broker of ours or the JVM's binders serve. */
    private static final Pattern METRIC =
        Pattern.compile("\\b(?:rabbitmq|skiffmq|jvm|process|netty|system)_[a-z0-9_]+");
    /** The parts of a query that hold label names, not metric names: matchers, by/on/group_left lists. */
    private static final Pattern LABEL_PARTS =
        Pattern.compile("\\{[^}]*}|\\b(?:by|on|group_left|without)\\s*\\([^)]*\\)");

    @Test
    void everyMetricTheDashboardsQueryIsServed() throws Exception {
        try (RunningBroker broker = RunningBroker.start()) {
            Map<String, List<Set<String>>> scrape = byName(trafficThenScrape(broker));

            List<String> missing = new ArrayList<>();
            String doc = Files.readString(METRICS_DOC);
            int checked = 0;
            for (String line : Files.readAllLines(RABBITMQ_LIST)) {
                if (line.isBlank() || line.startsWith("#")) {
                    continue;
                }
                String[] words = line.trim().split("\\s+");
                if (words[1].equals("absent")) {
                    // not served, and so said: a metric added later must leave the "absent" list
                    assertThat(scrape).as("%s is served: take it off the absent list", words[2])
                        .doesNotContainKey(words[2]);
                    assertThat(doc).as("docs/metrics.md says why %s is not served", words[2]).contains(words[2]);
                    continue;
                }
                checked++;
                List<Set<String>> series = scrape.get(words[1]);
                if (series == null) {
                    missing.add(words[1]);
                    continue;
                }
                for (int i = 2; i < words.length; i++) {
                    String label = words[i];
                    assertThat(series).as("%s has the label %s the %s dashboard reads", words[1], label, words[0])
                        .anyMatch(labels -> labels.contains(label));
                }
            }
            assertThat(missing).as("RabbitMQ's dashboards query these, which /metrics does not serve").isEmpty();
            assertThat(checked).isGreaterThan(50);

            Set<String> ours = dashboardMetrics(OUR_DASHBOARD);
            assertThat(ours).hasSizeGreaterThan(30);
            assertThat(ours).as("our dashboard queries these, which /metrics does not serve")
                .allMatch(scrape::containsKey);
        }
    }

    @Test
    void addedMetricsFollowWhatHappens() throws Exception {
        try (RunningBroker broker = RunningBroker.start()) {
            Map<String, Double> before = PrometheusMetricsTest.scrape(broker, "/metrics");
            assertThat(before)
                .containsEntry("rabbitmq_connections_opened_total{}", 0.0)
                .containsEntry("rabbitmq_channels_opened_total{}", 0.0)
                .containsEntry("rabbitmq_queues_declared_total{}", 0.0)
                .containsEntry("rabbitmq_global_publishers{protocol=amqp091}", 0.0)
                .containsEntry("rabbitmq_resident_memory_limit_bytes{}",
                    (double) broker.broker().resourceMonitor().memoryLimit())
                .containsEntry("rabbitmq_disk_space_available_limit_bytes{}",
                    (double) broker.broker().resourceMonitor().diskFreeLimit());
            assertThat(before.get("rabbitmq_process_resident_memory_bytes{}")).isPositive();
            assertThat(before.get("rabbitmq_disk_space_available_bytes{}")).isPositive();
            assertThat(before.get("rabbitmq_process_open_fds{}")).isPositive()
                .isLessThan(before.get("rabbitmq_process_max_fds{}"));
            assertThat(before.get("rabbitmq_erlang_uptime_seconds{}")).isPositive();
            String node = broker.broker().config().node();
            assertThat(before).containsEntry("rabbitmq_identity_info{rabbitmq_cluster=" + broker.broker().clusterName()
                + ",rabbitmq_endpoint=per-object,rabbitmq_node=" + node + "}", 1.0);
            assertThat(before.keySet()).anyMatch(k -> k.startsWith("rabbitmq_build_info{erlang_version=JVM ")
                && k.contains("rabbitmq_version=" + broker.broker().config().rabbitmqVersion()));

            ConnectionFactory factory = new ConnectionFactory();
            factory.setPort(broker.port());
            try (com.rabbitmq.client.Connection connection = factory.newConnection()) {
                Channel channel = connection.createChannel();
                Channel other = connection.createChannel();
                channel.queueDeclare("churn", false, false, false, null);
                channel.queueDeclare("churn", false, false, false, null); // declared again, not created
                other.close();
                channel.confirmSelect();
                channel.basicPublish("", "churn", null, "m".getBytes());
                channel.basicPublish("", "churn", null, "m".getBytes());
                channel.waitForConfirmsOrDie(10_000);
                CountDownLatch got = new CountDownLatch(1);
                String tag = channel.basicConsume("churn", true, (t, delivery) -> got.countDown(), t -> { });
                assertThat(got.await(10, TimeUnit.SECONDS)).isTrue();
                assertThat(PrometheusMetricsTest.scrape(broker, "/metrics"))
                    .containsEntry("rabbitmq_connections_opened_total{}", 1.0)
                    .containsEntry("rabbitmq_channels_opened_total{}", 2.0)
                    .containsEntry("rabbitmq_channels_closed_total{}", 1.0)
                    .containsEntry("rabbitmq_queues_declared_total{}", 2.0)
                    .containsEntry("rabbitmq_queues_created_total{}", 1.0)
                    .containsEntry("rabbitmq_global_publishers{protocol=amqp091}", 1.0) // one channel, two messages
                    .containsEntry("rabbitmq_global_consumers{protocol=amqp091}", 1.0);
                channel.basicCancel(tag);
                channel.queueDelete("churn");
                assertThat(PrometheusMetricsTest.scrape(broker, "/metrics"))
                    .containsEntry("rabbitmq_global_consumers{protocol=amqp091}", 0.0)
                    .containsEntry("rabbitmq_queues_deleted_total{}", 1.0);
            }
            await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(
                    PrometheusMetricsTest.scrape(broker, "/metrics"))
                .containsEntry("rabbitmq_global_publishers{protocol=amqp091}", 0.0)
                .containsEntry("rabbitmq_channels_opened_total{}", 2.0)
                .containsEntry("rabbitmq_channels_closed_total{}", 2.0));

            ConnectionOptions guest = new ConnectionOptions().user("guest").password("guest");
            try (Client client = Client.create();
                    org.apache.qpid.protonj2.client.Connection connection = client.connect("127.0.0.1", broker.port(),
                        guest)) {
                Sender sender = connection.openSender("links").openFuture().get(10, TimeUnit.SECONDS);
                Receiver receiver = connection.openReceiver("links").openFuture().get(10, TimeUnit.SECONDS);
                Receiver another = connection.openReceiver("links").openFuture().get(10, TimeUnit.SECONDS);
                assertThat(PrometheusMetricsTest.scrape(broker, "/metrics"))
                    .containsEntry("rabbitmq_global_publishers{protocol=amqp10}", 1.0)
                    .containsEntry("rabbitmq_global_consumers{protocol=amqp10}", 2.0);
                another.close();
                await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(
                        PrometheusMetricsTest.scrape(broker, "/metrics"))
                    .containsEntry("rabbitmq_global_consumers{protocol=amqp10}", 1.0));
                receiver.close();
                sender.close();
            }
            await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(
                    PrometheusMetricsTest.scrape(broker, "/metrics"))
                .containsEntry("rabbitmq_global_publishers{protocol=amqp10}", 0.0)
                .containsEntry("rabbitmq_global_consumers{protocol=amqp10}", 0.0)
                .containsEntry("rabbitmq_connections_opened_total{}", 2.0));

            try (Environment streams = StreamClients.environment(broker)) {
                org.assertj.core.api.Assertions.assertThatThrownBy(() -> streams.deleteStream("no-such-stream"))
                    .isInstanceOf(com.rabbitmq.stream.StreamException.class);
            }
            assertThat(PrometheusMetricsTest.scrape(broker, "/metrics"))
                .containsEntry("rabbitmq_global_stream_error_stream_does_not_exist_total{protocol=stream}", 1.0)
                .containsEntry("rabbitmq_global_stream_error_access_refused_total{protocol=stream}", 0.0);
        }
    }

    @Test
    void identityNamesTheAggregatedEndpoint() throws Exception {
        try (RunningBroker broker = RunningBroker.start("prometheus-per-queue-metrics=false")) {
            assertThat(PrometheusMetricsTest.scrape(broker, "/metrics").keySet())
                .anyMatch(k -> k.startsWith("rabbitmq_identity_info{") && k.contains("rabbitmq_endpoint=aggregated"));
            assertThat(PrometheusMetricsTest.scrape(broker, "/metrics/per-object").keySet())
                .anyMatch(k -> k.startsWith("rabbitmq_identity_info{") && k.contains("rabbitmq_endpoint=per-object"));
        }
    }

    /**
     * Publishes, consumes and gets over AMQP 0-9-1 (a classic queue and a stream, so that their series exist),
     * publishes over the stream protocol, then scrapes {@code /metrics}.
     */
    private static Map<String, Double> trafficThenScrape(RunningBroker broker) throws Exception {
        ConnectionFactory factory = new ConnectionFactory();
        factory.setPort(broker.port());
        try (com.rabbitmq.client.Connection connection = factory.newConnection();
                Channel channel = connection.createChannel()) {
            channel.queueDeclare("dashboard", true, false, false, null);
            channel.queueDeclare("dashboard-stream", true, false, false, Map.of("x-queue-type", "stream"));
            channel.confirmSelect();
            for (int i = 0; i < 5; i++) {
                channel.basicPublish("", "dashboard", MessageProperties.PERSISTENT_TEXT_PLAIN, ("m" + i).getBytes());
            }
            channel.basicPublish("", "dashboard-stream", null, "s".getBytes());
            channel.waitForConfirmsOrDie(10_000);
            assertThat(channel.basicGet("dashboard", true)).isNotNull();
            CountDownLatch four = new CountDownLatch(4);
            channel.basicConsume("dashboard", false, (tag, delivery) -> {
                channel.basicAck(delivery.getEnvelope().getDeliveryTag(), false);
                four.countDown();
            }, tag -> { });
            assertThat(four.await(10, TimeUnit.SECONDS)).isTrue();
            try (Environment streams = StreamClients.environment(broker)) {
                assertThat(StreamClients.sendAndConfirm(streams.producerBuilder().stream("dashboard-stream").build(),
                    "p", 3)).isEmpty();
            }
            // the consumer stays: per-queue consumer series, and a publisher and a consumer counted
            return PrometheusMetricsTest.scrape(broker, "/metrics");
        }
    }

    /** The scrape's samples by metric name: the label names of each of its series. */
    private static Map<String, List<Set<String>>> byName(Map<String, Double> samples) {
        Map<String, List<Set<String>>> byName = new HashMap<>();
        for (String key : samples.keySet()) {
            int brace = key.indexOf('{');
            String labels = key.substring(brace + 1, key.length() - 1);
            Set<String> names = new HashSet<>();
            for (String pair : labels.isEmpty() ? new String[0] : labels.split(",")) {
                names.add(pair.substring(0, pair.indexOf('=')));
            }
            byName.computeIfAbsent(key.substring(0, brace), n -> new ArrayList<>()).add(names);
        }
        return byName;
    }

    /** The metric names the queries and variables of a Grafana dashboard read. */
    static Set<String> dashboardMetrics(Path dashboard) throws Exception {
        JsonNode root = new ObjectMapper().readTree(Files.readString(dashboard));
        Set<String> names = new TreeSet<>();
        List<String> queries = new ArrayList<>();
        root.findValues("expr").forEach(expr -> queries.add(expr.asString()));
        root.findValues("definition").forEach(definition -> queries.add(definition.asString()));
        assertThat(queries).isNotEmpty();
        for (String query : queries) {
            // label_values(metric, label): the second is a label
            String metricOnly = query.replaceAll("label_values\\(([^,{]+)[^)]*\\)", "$1");
            String bare = LABEL_PARTS.matcher(metricOnly).replaceAll(" ");
            Matcher m = METRIC.matcher(bare);
            while (m.find()) {
                names.add(m.group());
            }
        }
        return names;
    }
}
