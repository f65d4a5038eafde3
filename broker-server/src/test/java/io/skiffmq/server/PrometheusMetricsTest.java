package io.skiffmq.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.rabbitmq.client.Channel;
import com.rabbitmq.client.ConnectionFactory;
import com.rabbitmq.client.GetResponse;
import com.rabbitmq.client.MessageProperties;
import io.skiffmq.codec.testing.LeakDetection;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.qpid.protonj2.client.Client;
import org.apache.qpid.protonj2.client.Connection;
import org.apache.qpid.protonj2.client.ConnectionOptions;
import org.apache.qpid.protonj2.client.Delivery;
import org.apache.qpid.protonj2.client.DeliveryState;
import org.apache.qpid.protonj2.client.Message;
import org.apache.qpid.protonj2.client.Receiver;
import org.apache.qpid.protonj2.client.ReceiverOptions;
import org.apache.qpid.protonj2.client.Sender;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The Prometheus endpoint of a running broker, scraped over HTTP and parsed by a real Prometheus text-format parser
 * ({@link PrometheusParser}): the values move as messages flow over AMQP 0-9-1 and 1.0, and switching per-queue
 * metrics off leaves only the aggregates on {@code /metrics}.
 */
@ExtendWith(LeakDetection.class)
class PrometheusMetricsTest {
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();

    @Test
    void valuesMoveAsMessagesFlowOverBothProtocols() throws Exception {
        try (RunningBroker broker = RunningBroker.start()) {
            Map<String, Double> before = scrape(broker, "/metrics");
            assertThat(before).containsKey("process_uptime_seconds{}");
            assertThat(before.keySet()).anyMatch(k -> k.startsWith("netty_allocator_memory_used{"));
            assertThat(before.keySet()).anyMatch(k -> k.startsWith("jvm_memory_used_bytes{"));
            assertThat(before).containsEntry("rabbitmq_global_messages_received_total{protocol=amqp091}", 0.0)
                .containsEntry("rabbitmq_alarms_memory_used_watermark{}", 0.0)
                .containsEntry("rabbitmq_alarms_free_disk_space_watermark{}", 0.0);
            assertThat(before.keySet()).anyMatch(k -> k.startsWith("rabbitmq_identity_info{rabbitmq_cluster=skiffmq@"));

            ConnectionFactory factory = new ConnectionFactory();
            factory.setPort(broker.port());
            try (com.rabbitmq.client.Connection connection = factory.newConnection();
                    Channel channel = connection.createChannel()) {
                channel.queueDeclare("metered", true, false, false, null);
                channel.confirmSelect();
                for (int i = 0; i < 5; i++) {
                    channel.basicPublish("", "metered", MessageProperties.PERSISTENT_TEXT_PLAIN, ("m" + i).getBytes());
                }
                channel.basicPublish("", "no-such-queue", null, "lost".getBytes());
                channel.waitForConfirmsOrDie(10_000);

                Map<String, Double> published = scrape(broker, "/metrics");
                assertThat(published)
                    .containsEntry("rabbitmq_connections{}", 1.0)
                    .containsEntry("rabbitmq_channels{}", 1.0)
                    .containsEntry("rabbitmq_global_messages_received_total{protocol=amqp091}", 6.0)
                    .containsEntry("rabbitmq_global_messages_received_confirm_total{protocol=amqp091}", 6.0)
                    .containsEntry("rabbitmq_global_messages_routed_total{protocol=amqp091}", 5.0)
                    .containsEntry("rabbitmq_global_messages_unroutable_dropped_total{protocol=amqp091}", 1.0)
                    .containsEntry("rabbitmq_queue_messages_ready{queue=metered,vhost=/}", 5.0)
                    .containsEntry("rabbitmq_queue_messages{queue=metered,vhost=/}", 5.0)
                    .containsEntry("skiffmq_queue_messages_published_total{queue=metered,vhost=/}", 5.0);
                assertThat(published.get("skiffmq_queue_messages_published_bytes_total{queue=metered,vhost=/}"))
                    .isGreaterThanOrEqualTo(10);
                // confirms are counted on the connection's loop before they are sent: the client saw them all (the
                // unroutable one too, confirmed at once, as RabbitMQ confirms and counts it)
                assertThat(published.get("rabbitmq_global_messages_confirmed_total{protocol=amqp091}")).isEqualTo(6.0);
                assertThat(published.get("skiffmq_journal_records_written_total{vhost=/}")).isGreaterThanOrEqualTo(5);
                assertThat(published.get("skiffmq_journal_sync_seconds_count{vhost=/}")).isGreaterThan(0);
                assertThat(published.get("skiffmq_journal_segments{vhost=/}")).isGreaterThanOrEqualTo(1);
                assertThat(published.get("rabbitmq_connection_incoming_bytes_total{}"))
                    .isGreaterThan(before.get("rabbitmq_connection_incoming_bytes_total{}"));

                GetResponse got = channel.basicGet("metered", false);
                channel.basicAck(got.getEnvelope().getDeliveryTag(), false);
                assertThat(channel.basicGet("metered", true)).isNotNull();
                String manual = "rabbitmq_global_messages_delivered_consume_manual_ack_total"
                    + "{protocol=amqp091,queue_type=rabbit_classic_queue}";
                java.util.concurrent.CountDownLatch three = new java.util.concurrent.CountDownLatch(3);
                channel.basicConsume("metered", false, (tag, delivery) -> {
                    channel.basicAck(delivery.getEnvelope().getDeliveryTag(), false);
                    three.countDown();
                }, tag -> { });
                assertThat(three.await(10, TimeUnit.SECONDS)).isTrue();
                channel.basicGet("metered", true); // empty now

                await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(scrape(broker, "/metrics"))
                    .containsEntry("rabbitmq_queue_messages_ready{queue=metered,vhost=/}", 0.0)
                    .containsEntry("rabbitmq_queue_messages_unacked{queue=metered,vhost=/}", 0.0)
                    .containsEntry("rabbitmq_queue_consumers{queue=metered,vhost=/}", 1.0)
                    .containsEntry(manual, 3.0)
                    .containsEntry("rabbitmq_global_messages_delivered_get_manual_ack_total"
                        + "{protocol=amqp091,queue_type=rabbit_classic_queue}", 1.0)
                    .containsEntry("rabbitmq_global_messages_delivered_get_auto_ack_total"
                        + "{protocol=amqp091,queue_type=rabbit_classic_queue}", 1.0)
                    .containsEntry("rabbitmq_global_messages_get_empty_total"
                        + "{protocol=amqp091,queue_type=rabbit_classic_queue}", 1.0)
                    .containsEntry("rabbitmq_global_messages_delivered_total"
                        + "{protocol=amqp091,queue_type=rabbit_classic_queue}", 5.0)
                    .containsEntry("rabbitmq_global_messages_acknowledged_total"
                        + "{protocol=amqp091,queue_type=rabbit_classic_queue}", 4.0)
                    .containsEntry("skiffmq_queue_messages_delivered_total{queue=metered,vhost=/}", 5.0)
                    .containsEntry("skiffmq_queue_messages_acknowledged_total{queue=metered,vhost=/}", 4.0));
            }

            try (Client client = Client.create(); Connection connection = client.connect("127.0.0.1", broker.port(),
                    new ConnectionOptions().user("guest").password("guest"))) {
                Sender sender = connection.openSender("metered-10");
                for (int i = 0; i < 3; i++) {
                    assertThat(sender.send(Message.create("x" + i)).awaitSettlement(10, TimeUnit.SECONDS)
                        .remoteState()).isEqualTo(DeliveryState.accepted());
                }
                await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(scrape(broker, "/metrics"))
                    .containsEntry("rabbitmq_queue_messages_ready{queue=metered-10,vhost=/}", 3.0)
                    .containsEntry("rabbitmq_global_messages_received_total{protocol=amqp10}", 3.0)
                    .containsEntry("rabbitmq_global_messages_confirmed_total{protocol=amqp10}", 3.0));
                Receiver receiver = connection.openReceiver("metered-10",
                    new ReceiverOptions().creditWindow(10).autoAccept(false));
                for (int i = 0; i < 3; i++) {
                    Delivery delivery = receiver.receive(10, TimeUnit.SECONDS);
                    assertThat(delivery).isNotNull();
                    assertThat(delivery.message().body()).isEqualTo("x" + i); // read: the client lets go of it
                    delivery.accept();
                }
                await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(scrape(broker, "/metrics"))
                    .containsEntry("rabbitmq_queue_messages_ready{queue=metered-10,vhost=/}", 0.0)
                    .containsEntry("rabbitmq_queue_messages_unacked{queue=metered-10,vhost=/}", 0.0)
                    .containsEntry("rabbitmq_global_messages_delivered_consume_manual_ack_total"
                        + "{protocol=amqp10,queue_type=rabbit_classic_queue}", 3.0)
                    .containsEntry("rabbitmq_global_messages_acknowledged_total"
                        + "{protocol=amqp10,queue_type=rabbit_classic_queue}", 3.0)
                    .containsEntry("rabbitmq_connections{}", 1.0));
                receiver.close();
                sender.close();
            }
            // a closed connection's counts stay in the totals
            await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(scrape(broker, "/metrics"))
                .containsEntry("rabbitmq_connections{}", 0.0)
                .containsEntry("rabbitmq_channels{}", 0.0)
                .containsEntry("rabbitmq_global_messages_received_total{protocol=amqp091}", 6.0)
                .containsEntry("rabbitmq_global_messages_received_total{protocol=amqp10}", 3.0));
        }
    }

    @Test
    void perQueueMetricsOffLeavesOnlyAggregates() throws Exception {
        try (RunningBroker broker = RunningBroker.start("prometheus-per-queue-metrics=false")) {
            ConnectionFactory factory = new ConnectionFactory();
            factory.setPort(broker.port());
            try (com.rabbitmq.client.Connection connection = factory.newConnection();
                    Channel channel = connection.createChannel()) {
                channel.queueDeclare("a", false, false, false, null);
                channel.queueDeclare("b", false, false, false, null);
                channel.confirmSelect();
                channel.basicPublish("", "a", null, "1".getBytes());
                channel.basicPublish("", "b", null, "2".getBytes());
                channel.basicPublish("", "b", null, "3".getBytes());
                channel.waitForConfirmsOrDie(10_000);
            }
            Map<String, Double> aggregated = scrape(broker, "/metrics");
            assertThat(aggregated.keySet()).noneMatch(k -> k.contains("queue=a") || k.contains("queue=b"));
            assertThat(aggregated)
                .containsEntry("rabbitmq_queue_messages_ready{}", 3.0)
                .containsEntry("rabbitmq_queues{}", 2.0);
            Map<String, Double> perObject = scrape(broker, "/metrics/per-object");
            assertThat(perObject)
                .containsEntry("rabbitmq_queue_messages_ready{queue=a,vhost=/}", 1.0)
                .containsEntry("rabbitmq_queue_messages_ready{queue=b,vhost=/}", 2.0)
                .doesNotContainKey("rabbitmq_queue_messages_ready{}");
            HttpResponse<String> missing = HTTP.send(HttpRequest.newBuilder(
                URI.create("http://127.0.0.1:" + broker.metricsPort() + "/nothing")).build(),
                HttpResponse.BodyHandlers.ofString());
            assertThat(missing.statusCode()).isEqualTo(404);
        }
    }

    @Test
    void alarmGaugesFollowTheAlarms() throws Exception {
        try (RunningBroker broker = RunningBroker.start()) {
            ForcedAlarms alarms = broker.forceAlarms();
            alarms.raise(io.skiffmq.core.alarm.ResourceAlarms.Resource.DISK);
            assertThat(scrape(broker, "/metrics"))
                .containsEntry("rabbitmq_alarms_free_disk_space_watermark{}", 1.0)
                .containsEntry("rabbitmq_alarms_memory_used_watermark{}", 0.0);
            alarms.clear(io.skiffmq.core.alarm.ResourceAlarms.Resource.DISK);
            assertThat(scrape(broker, "/metrics")).containsEntry("rabbitmq_alarms_free_disk_space_watermark{}", 0.0);
        }
    }

    @Test
    void connectionEndsAreCountedByReason() throws Exception {
        try (RunningBroker broker = RunningBroker.start()) {
            try (RawClient garbage = new RawClient(broker.port())) {
                garbage.writeRaw("GET / HTTP/1.1\r\n\r\n".getBytes(java.nio.charset.StandardCharsets.US_ASCII));
                garbage.readRaw(8); // the AMQP 1.0 header we speak, then the close
            }
            RawClient client = RawClient.openSession(broker.port());
            client.write(0, new org.apache.qpid.proton.amqp.transport.Close());
            client.readUntil(org.apache.qpid.proton.amqp.transport.Close.class);
            client.close();
            await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(scrape(broker, "/metrics"))
                .containsEntry("rabbitmq_connections_closed_total{}", 2.0)
                .containsEntry("skiffmq_connection_ends_total{reason=protocol_error}", 1.0)
                .containsEntry("skiffmq_connection_ends_total{reason=client_close}", 1.0)
                .containsEntry("skiffmq_connection_ends_total{reason=internal_error}", 0.0));
        }
    }

    @Test
    void noneServesNoMetrics() throws Exception {
        try (RunningBroker broker = RunningBroker.start("prometheus-port=none")) {
            org.assertj.core.api.Assertions.assertThatThrownBy(broker::metricsPort)
                .isInstanceOf(NullPointerException.class);
        }
    }

    static Map<String, Double> scrape(RunningBroker broker, String path) throws Exception {
        HttpResponse<String> response = HTTP.send(HttpRequest.newBuilder(
            URI.create("http://127.0.0.1:" + broker.metricsPort() + path)).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(response.statusCode()).isEqualTo(200);
        assertThat(response.headers().firstValue("content-type")).hasValueSatisfying(
            type -> assertThat(type).startsWith("text/plain; version=0.0.4"));
        return PrometheusParser.parse(response.body());
    }
}
