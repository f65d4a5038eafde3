package io.skiffmq.server;

import static io.skiffmq.server.Amqp091Support.TIMEOUT;
import static io.skiffmq.server.Amqp091Support.await;
import static io.skiffmq.server.HttpApiClient.seg;
import static org.assertj.core.api.Assertions.assertThat;

import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.DefaultConsumer;
import io.skiffmq.codec.testing.LeakDetection;
import jakarta.jms.MessageConsumer;
import jakarta.jms.Session;
import java.util.List;
import java.util.Map;
import org.apache.qpid.jms.JmsConnectionFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** {@code /api/channels} and {@code /api/consumers}, with a 0-9-1 and an AMQP 1.0 (Qpid JMS) consumer. */
@ExtendWith(LeakDetection.class)
class HttpApiChannelsTest {

    @Test
    void channelsAndConsumersOfBothProtocols() throws Exception {
        try (RunningBroker broker = RunningBroker.start();
                Connection connection = VirtualHostTest.factory(broker, "/", "guest", "guest").newConnection()) {
            HttpApiClient api = HttpApiClient.guest(broker);
            Channel channel = connection.createChannel();
            channel.queueDeclare("watched", false, false, false, null);
            channel.basicQos(7);
            channel.confirmSelect();
            channel.basicConsume("watched", false, "my-tag", new DefaultConsumer(channel));

            List<Map<String, Object>> channels = api.get("/api/channels").list();
            assertThat(channels).singleElement().satisfies(c -> {
                assertThat(c.keySet()).contains("name", "number", "node", "user", "vhost", "connection_details",
                    "prefetch_count", "messages_unacknowledged", "confirm", "transactional", "consumer_count");
                assertThat(c).containsEntry("number", 1).containsEntry("prefetch_count", 7)
                    .containsEntry("confirm", true).containsEntry("transactional", false)
                    .containsEntry("consumer_count", 1).containsEntry("user", "guest").containsEntry("vhost", "/");
                assertThat((String) c.get("name")).endsWith(" (1)");
            });
            String channelName = (String) channels.get(0).get("name");
            assertThat(api.get("/api/channels/" + seg(channelName)).map()).containsEntry("number", 1);
            String connectionName = (String) api.get("/api/connections").list().get(0).get("name");
            assertThat(api.get("/api/connections/" + seg(connectionName) + "/channels").list()).hasSize(1);
            assertThat(api.get("/api/connections/" + seg(connectionName)).map()).containsEntry("channels", 1);
            assertThat(api.get("/api/vhosts/%2F/channels").list()).hasSize(1);

            List<Map<String, Object>> consumers = api.get("/api/consumers").list();
            assertThat(consumers).singleElement().satisfies(c -> {
                assertThat(c).containsEntry("consumer_tag", "my-tag").containsEntry("ack_required", true)
                    .containsEntry("prefetch_count", 7).containsEntry("queue", Map.of("name", "watched", "vhost", "/"));
                @SuppressWarnings("unchecked")
                Map<String, Object> details = (Map<String, Object>) c.get("channel_details");
                assertThat(details).containsEntry("name", channelName).containsEntry("number", 1)
                    .containsEntry("connection_name", connectionName).containsKeys("peer_host", "peer_port");
            });

            JmsConnectionFactory factory = new JmsConnectionFactory("guest", "guest", broker.amqpUri());
            try (jakarta.jms.Connection jms = factory.createConnection()) {
                jms.start();
                Session session = jms.createSession(false, Session.CLIENT_ACKNOWLEDGE);
                MessageConsumer consumer = session.createConsumer(session.createQueue("watched"));
                await().atMost(TIMEOUT).until(() -> api.get("/api/consumers/%2F").list().size() == 2);
                assertThat(api.get("/api/consumers").list()).anySatisfy(c -> assertThat(c)
                    .containsEntry("queue", Map.of("name", "watched", "vhost", "/"))
                    .containsEntry("ack_required", true)
                    .satisfies(m -> assertThat((String) m.get("consumer_tag")).startsWith("ctag-")));
                consumer.close();
            }
        }
    }
}
