package io.skiffmq.server;

import static io.skiffmq.server.Amqp091Support.TIMEOUT;
import static io.skiffmq.server.Amqp091Support.await;
import static org.assertj.core.api.Assertions.assertThat;

import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.GetResponse;
import io.skiffmq.codec.testing.LeakDetection;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * {@code message_stats} of the overview, a virtual host, a queue and a connection, and a connection's and a virtual
 * host's byte counts, from the metrics counters:
 * counts move as an AMQP 0-9-1 client publishes and consumes, and rates appear once the sampler (every 100 ms
 * here, {@code collect-statistics-interval}) has seen two readings apart, and fall to 0 once nothing moves.
 */
@ExtendWith(LeakDetection.class)
class HttpApiRatesTest {
    private static final List<String> QUEUE_FIELDS = List.of("publish", "deliver", "deliver_no_ack", "get",
        "get_no_ack", "deliver_get", "get_empty", "redeliver", "ack");
    private static final List<String> OVERVIEW_FIELDS = List.of("publish", "confirm", "deliver", "deliver_no_ack",
        "get", "get_no_ack", "deliver_get", "get_empty", "redeliver", "ack", "return_unroutable", "drop_unroutable");

    @Test
    void countsMoveAndRatesAppear() throws Exception {
        try (RunningBroker broker = RunningBroker.start("collect-statistics-interval=100");
                Connection connection = VirtualHostTest.factory(broker, "/", "guest", "guest").newConnection()) {
            HttpApiClient api = HttpApiClient.guest(broker);
            Channel channel = connection.createChannel();
            channel.confirmSelect();
            channel.queueDeclare("rated", false, false, false, null);
            for (int i = 0; i < 3; i++) {
                publish(channel);
            }
            GetResponse manual = channel.basicGet("rated", false);
            channel.basicAck(manual.getEnvelope().getDeliveryTag(), false);
            assertThat(channel.basicGet("rated", true)).isNotNull();
            channel.basicGet("rated", true);
            assertThat(channel.basicGet("rated", true)).isNull();

            Map<String, Object> overview = api.get("/api/overview").map();
            assertThat(overview).containsEntry("rates_mode", "basic");
            await().atMost(TIMEOUT).untilAsserted(() -> {
                Map<String, Object> queue = stats(api.get("/api/queues/%2F/rated").map());
                assertThat(queue.keySet()).containsAll(QUEUE_FIELDS);
                QUEUE_FIELDS.forEach(f -> assertThat(queue).containsKey(f + "_details"));
                assertThat(queue).containsEntry("publish", 3).containsEntry("get", 1).containsEntry("get_no_ack", 2)
                    .containsEntry("deliver_get", 3).containsEntry("get_empty", 1).containsEntry("ack", 1)
                    .containsEntry("deliver", 0).containsEntry("redeliver", 0);
                Map<String, Object> global = stats(api.get("/api/overview").map());
                assertThat(global.keySet()).containsAll(OVERVIEW_FIELDS);
                assertThat(global).containsEntry("publish", 3).containsEntry("confirm", 3)
                    .containsEntry("get", 1).containsEntry("get_no_ack", 2).containsEntry("deliver_get", 3)
                    .containsEntry("get_empty", 1).containsEntry("ack", 1).containsEntry("drop_unroutable", 0);
                Map<String, Object> c = api.get("/api/connections").list().get(0);
                assertThat(number(c, "recv_oct")).isPositive();
                assertThat(number(c, "send_oct")).isPositive();
                assertThat(c).containsKeys("recv_oct_details", "send_oct_details");
                assertThat(stats(c)).containsEntry("publish", 3).containsEntry("confirm", 3)
                    .containsEntry("deliver_get", 3).containsEntry("ack", 1).containsKey("publish_details");
                Map<String, Object> vhost = api.get("/api/vhosts/%2F").map();
                assertThat(stats(vhost)).containsEntry("publish", 3).containsEntry("deliver_get", 3)
                    .containsEntry("get_empty", 1).containsKey("ack_details");
                assertThat(number(vhost, "recv_oct")).isPositive();
                assertThat(vhost).containsKeys("recv_oct_details", "send_oct_details");
            });

            // a user who sees only some virtual hosts gets theirs summed
            assertThat(api.put("/api/users/manager", Map.of("password", "pw", "tags", "management")).status())
                .isEqualTo(201);
            assertThat(api.put("/api/permissions/%2F/manager", Map.of("configure", ".*", "write", ".*", "read",
                ".*")).status()).isEqualTo(201);
            Map<String, Object> managers = new HttpApiClient(broker.managementPort(), "manager", "pw")
                .get("/api/overview").map();
            assertThat(stats(managers)).containsEntry("publish", 3).containsEntry("deliver_get", 3);
            assertThat(api.put("/api/vhosts/other", Map.of()).status()).isEqualTo(201);
            assertThat(api.put("/api/users/elsewhere", Map.of("password", "pw", "tags", "management")).status())
                .isEqualTo(201);
            assertThat(api.put("/api/permissions/other/elsewhere", Map.of("configure", ".*", "write", ".*",
                "read", ".*")).status()).isEqualTo(201);
            assertThat(stats(new HttpApiClient(broker.managementPort(), "elsewhere", "pw").get("/api/overview")
                .map())).as("another vhost's counts").containsEntry("publish", 0);

            // a message per poll, so that every sample interval sees some
            await().atMost(TIMEOUT).until(() -> {
                publish(channel);
                Map<String, Object> c = api.get("/api/connections").list().get(0);
                return rate(stats(api.get("/api/overview").map()), "publish") > 0
                    && rate(stats(api.get("/api/overview").map()), "confirm") > 0
                    && rate(stats(api.get("/api/queues/%2F/rated").map()), "publish") > 0
                    && rate(stats(c), "publish") > 0 && rate(stats(api.get("/api/vhosts/%2F").map()), "publish") > 0
                    && rate(c, "recv_oct") > 0 && rate(c, "send_oct") > 0;
            });

            // once nothing moves, the rates are 0 again (the sampler keeps no rate for an idle object)
            await().atMost(TIMEOUT).untilAsserted(() -> {
                assertThat(rate(stats(api.get("/api/queues/%2F/rated").map()), "publish")).isZero();
                assertThat(rate(stats(api.get("/api/overview").map()), "publish")).isZero();
            });
            assertThat(stats(api.get("/api/queues/%2F/rated").map())).as("counts stay")
                .containsEntry("get_empty", 1).containsEntry("ack", 1);
        }
    }

    @Test
    void aVhostKeepsTheCountsOfItsClosedConnections() throws Exception {
        try (RunningBroker broker = RunningBroker.start("collect-statistics-interval=100")) {
            HttpApiClient api = HttpApiClient.guest(broker);
            try (Connection connection = VirtualHostTest.factory(broker, "/", "guest", "guest").newConnection()) {
                Channel channel = connection.createChannel();
                channel.confirmSelect();
                channel.queueDeclare("rated", false, false, false, null);
                publish(channel);
                publish(channel);
            }
            await().atMost(TIMEOUT).until(() -> api.get("/api/connections").list().isEmpty());
            assertThat(stats(api.get("/api/vhosts/%2F").map())).containsEntry("publish", 2)
                .containsEntry("confirm", 2);
        }
    }

    private static void publish(Channel channel) throws Exception {
        channel.basicPublish("", "rated", null, "m".getBytes(StandardCharsets.UTF_8));
        channel.waitForConfirmsOrDie(TIMEOUT.toMillis());
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> stats(Map<String, Object> object) {
        assertThat(object).containsKey("message_stats");
        return (Map<String, Object>) object.get("message_stats");
    }

    private static long number(Map<String, Object> m, String field) {
        return ((Number) m.get(field)).longValue();
    }

    @SuppressWarnings("unchecked")
    private static double rate(Map<String, Object> m, String field) {
        return ((Number) ((Map<String, Object>) m.get(field + "_details")).get("rate")).doubleValue();
    }
}
