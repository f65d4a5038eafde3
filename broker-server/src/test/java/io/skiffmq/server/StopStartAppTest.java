package io.skiffmq.server;

import static io.skiffmq.server.SkiffmqCtlTest.ctl;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import io.skiffmq.server.SkiffmqCtlTest.Result;
import java.net.ConnectException;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * skiffmqctl's {@code stop_app} and {@code start_app}: the client listeners and connections close and open again
 * on the same ports, while the node's queues, messages and HTTP API stay, as the RabbitMQ clients' recovery tests
 * use them (AMQP 1.0 client's {@code connectionShouldRecoverAfterBrokerStopStart}).
 */
class StopStartAppTest {
    private RunningBroker broker;

    @BeforeEach
    void start() throws Exception {
        broker = RunningBroker.start();
    }

    @AfterEach
    void stop() {
        broker.close();
    }

    private ConnectionFactory factory() {
        ConnectionFactory factory = new ConnectionFactory();
        factory.setHost("127.0.0.1");
        factory.setPort(broker.port());
        factory.setAutomaticRecoveryEnabled(false);
        return factory;
    }

    @Test
    void stopAppClosesListenersAndConnectionsAndStartAppOpensThemAgain() throws Exception {
        int streamPort = broker.streamPort();
        Connection connection = factory().newConnection();
        try {
            Channel channel = connection.createChannel();
            channel.queueDeclare("kept", true, false, false, null);
            channel.basicPublish("", "kept", null, "still here".getBytes());
            await().atMost(Duration.ofSeconds(10)).until(() -> ctl(broker.managementPort(), "list_queues", "-q",
                "name", "messages").rows("name\tmessages").contains(List.of("kept", "1")));

            Result stopped = ctl(broker.managementPort(), "stop_app");
            assertThat(stopped.code()).as(stopped.err()).isZero();
            assertThat(stopped.out()).startsWith("Stopping rabbit application on node ");
            await().atMost(Duration.ofSeconds(10)).until(() -> !connection.isOpen());
            AMQP.Connection.Close reason = (AMQP.Connection.Close) connection.getCloseReason().getReason();
            assertThat(reason.getReplyCode()).isEqualTo(320);
            assertThatThrownBy(() -> factory().newConnection()).isInstanceOf(ConnectException.class);
            // the node stays: its HTTP API answers, its queue keeps its message
            assertThat(ctl(broker.managementPort(), "list_queues", "-q", "name", "messages").rows("name\tmessages"))
                .contains(List.of("kept", "1"));
            assertThat(ctl(broker.managementPort(), "stop_app").code()).isZero();
        } finally {
            connection.abort();
        }

        Result started = ctl(broker.managementPort(), "start_app");
        assertThat(started.code()).as(started.err()).isZero();
        assertThat(started.out()).startsWith("Starting node ");
        assertThat(broker.streamPort()).isEqualTo(streamPort);
        try (Connection again = factory().newConnection()) {
            Channel channel = again.createChannel();
            assertThat(new String(channel.basicGet("kept", true).getBody())).isEqualTo("still here");
        }
        assertThat(ctl(broker.managementPort(), "start_app").code()).isZero();
    }

    @Test
    void onlyAnAdministratorStopsTheApplication() throws Exception {
        assertThat(ctl(broker.managementPort(), "add_user", "watcher", "pw").code()).isZero();
        assertThat(ctl(broker.managementPort(), "set_user_tags", "watcher", "monitoring").code()).isZero();
        Result refused = ctl(broker.managementPort(), "-u", "watcher", "--password", "pw", "stop_app");
        assertThat(refused.code()).isEqualTo(70);
        assertThat(refused.err()).contains("POST /api/app/stop failed: HTTP 40");
        try (Connection connection = factory().newConnection()) {
            assertThat(connection.isOpen()).isTrue();
        }
    }
}
