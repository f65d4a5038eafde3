package io.skiffmq.server;

import static io.skiffmq.server.Amqp091Support.TIMEOUT;
import static io.skiffmq.server.Amqp091Support.await;
import static io.skiffmq.server.HttpApiClient.seg;
import static org.assertj.core.api.Assertions.assertThat;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Connection;
import io.skiffmq.codec.testing.LeakDetection;
import jakarta.jms.JMSException;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.qpid.jms.JmsConnectionFactory;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * {@code DELETE /api/connections/{name}} with {@code X-Reason}: the client is told the reason, a 0-9-1 client
 * as 320 CONNECTION_FORCED in its shutdown signal, an AMQP 1.0 (Qpid JMS) client as
 * {@code amqp:connection:forced}; who may close whose connection.
 */
@ExtendWith(LeakDetection.class)
class HttpApiConnectionCloseTest {
    private RunningBroker broker;
    private HttpApiClient api;

    @BeforeEach
    void start() throws Exception {
        broker = RunningBroker.start();
        api = HttpApiClient.guest(broker);
    }

    @AfterEach
    void stop() {
        broker.close();
    }

    private String onlyConnection(String protocol) throws Exception {
        await().atMost(TIMEOUT).until(() -> api.get("/api/connections").list().stream()
            .anyMatch(c -> protocol.equals(c.get("protocol")) && "running".equals(c.get("state"))));
        return api.get("/api/connections").list().stream().filter(c -> protocol.equals(c.get("protocol")))
            .map(c -> (String) c.get("name")).findFirst().orElseThrow();
    }

    @Test
    void anAmqp091ClientIsToldTheReason() throws Exception {
        Connection connection = VirtualHostTest.factory(broker, "/", "guest", "guest").newConnection();
        String name = onlyConnection("AMQP 0-9-1");
        HttpApiClient.Answer answer = api.send("DELETE", "/api/connections/" + seg(name), null,
            Map.of("X-Reason", "maintenance window"));
        assertThat(answer.status()).isEqualTo(204);
        await().atMost(TIMEOUT).until(() -> !connection.isOpen());
        AMQP.Connection.Close close = (AMQP.Connection.Close) connection.getCloseReason().getReason();
        assertThat(close.getReplyCode()).isEqualTo(320);
        assertThat(close.getReplyText()).isEqualTo("CONNECTION_FORCED - maintenance window");
        await().atMost(TIMEOUT).until(() -> api.get("/api/connections").list().isEmpty());
        assertThat(api.get("/api/connections/" + seg(name)).status()).isEqualTo(404);
    }

    @Test
    void withoutAReasonRabbitMqsDefaultIsGiven() throws Exception {
        Connection connection = VirtualHostTest.factory(broker, "/", "guest", "guest").newConnection();
        assertThat(api.delete("/api/connections/" + seg(onlyConnection("AMQP 0-9-1"))).status()).isEqualTo(204);
        await().atMost(TIMEOUT).until(() -> !connection.isOpen());
        assertThat(((AMQP.Connection.Close) connection.getCloseReason().getReason()).getReplyText())
            .isEqualTo("CONNECTION_FORCED - Closed via management plugin");
    }

    @Test
    void aQpidJmsClientIsToldTheReason() throws Exception {
        JmsConnectionFactory factory = new JmsConnectionFactory("guest", "guest", broker.amqpUri());
        jakarta.jms.Connection connection = factory.createConnection();
        CompletableFuture<JMSException> failure = new CompletableFuture<>();
        connection.setExceptionListener(failure::complete);
        connection.start();
        try {
            String name = onlyConnection("AMQP 1.0");
            HttpApiClient.Answer answer = api.send("DELETE", "/api/connections/" + seg(name), null,
                Map.of("X-Reason", "moved to another node"));
            assertThat(answer.status()).isEqualTo(204);
            JMSException e = failure.get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
            assertThat(e.getMessage()).contains("Connection forced: moved to another node");
        } finally {
            connection.close();
        }
    }

    @Test
    void aManagementUserClosesOnlyItsOwnConnections() throws Exception {
        broker.admin().putUser("mgmt", "pw", List.of("management"));
        broker.admin().setPermissions("mgmt", "/", ".*", ".*", ".*");
        HttpApiClient mgmt = new HttpApiClient(broker.managementPort(), "mgmt", "pw");
        // closed through the API, so not by the test
        Connection own = VirtualHostTest.factory(broker, "/", "mgmt", "pw").newConnection();
        try (Connection guests = VirtualHostTest.factory(broker, "/", "guest", "guest").newConnection()) {
            await().atMost(TIMEOUT).until(() -> api.get("/api/connections").list().size() == 2);
            List<Map<String, Object>> visible = mgmt.get("/api/connections").list();
            assertThat(visible).extracting(c -> c.get("user")).containsExactly("mgmt");
            String guestsName = api.get("/api/connections").list().stream()
                .filter(c -> "guest".equals(c.get("user"))).map(c -> (String) c.get("name")).findFirst()
                .orElseThrow();
            assertThat(mgmt.delete("/api/connections/" + seg(guestsName)).status()).isEqualTo(401);
            assertThat(guests.isOpen()).isTrue();
            assertThat(mgmt.delete("/api/connections/" + seg((String) visible.get(0).get("name"))).status())
                .isEqualTo(204);
            await().atMost(TIMEOUT).until(() -> !own.isOpen());
        }
    }
}
