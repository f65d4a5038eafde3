package io.skiffmq.server;

import static io.skiffmq.server.Amqp091Support.await;
import static io.skiffmq.server.Amqp091Support.channelError;
import static io.skiffmq.server.Amqp091Support.connectionError;
import static io.skiffmq.server.Amqp091Support.TIMEOUT;
import static org.assertj.core.api.Assertions.assertThat;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import io.skiffmq.codec.amqp10.AmqpError;
import io.skiffmq.codec.testing.LeakDetection;
import java.util.List;
import org.apache.qpid.proton.amqp.UnsignedInteger;
import org.apache.qpid.proton.amqp.transport.Begin;
import org.apache.qpid.proton.amqp.transport.Close;
import org.apache.qpid.proton.amqp.transport.Detach;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Per virtual host {@code max-connections} and {@code max-queues}, per user {@code max-connections} and
 * {@code max-channels} (0-9-1 channels, AMQP 1.0 sessions), with RabbitMQ's texts (its two readers word the
 * connection limits differently): 530 NOT_ALLOWED over 0-9-1 for
 * connections and channels, 406 for queues; {@code amqp:resource-limit-exceeded} over AMQP 1.0. Closing frees the
 * place.
 */
@ExtendWith(LeakDetection.class)
class LimitsTest {
    private static RunningBroker broker;

    @BeforeAll
    static void start() throws Exception {
        broker = RunningBroker.start();
        Admin admin = broker.admin();
        for (String vhost : List.of("one-connection", "one-queue")) {
            admin.createVhost(vhost);
            admin.setPermissions("guest", vhost, ".*", ".*", ".*");
        }
        admin.setVhostLimits("one-connection", 1, -1);
        admin.setVhostLimits("one-queue", -1, 1);
        admin.putUser("single", "pw", List.of());
        admin.setPermissions("single", "/", ".*", ".*", ".*");
        admin.setUserLimits("single", 1, -1);
        admin.putUser("narrow", "pw", List.of());
        admin.setPermissions("narrow", "/", ".*", ".*", ".*");
        admin.setUserLimits("narrow", -1, 2);
    }

    @AfterAll
    static void stop() {
        broker.close();
    }

    @Test
    void aVirtualHostsConnectionLimitRefusesTheNextConnectionOnBothProtocols() throws Exception {
        try (Connection first = VirtualHostTest.factory(broker, "one-connection", "guest", "guest").newConnection()) {
            AMQP.Connection.Close refused = VirtualHostTest.openRefused(
                VirtualHostTest.factory(broker, "one-connection", "guest", "guest"));
            assertThat(refused.getReplyCode()).isEqualTo(530);
            assertThat(refused.getReplyText()).isEqualTo("NOT_ALLOWED - access to vhost 'one-connection' refused for "
                + "user 'guest': connection limit (1) is reached");
            try (RawClient client = new RawClient(broker.port())) {
                client.sasl("guest", "guest");
                client.open("vhost:one-connection");
                Close close = client.read().as(Close.class);
                assertThat((Object) close.getError().getCondition())
                    .isEqualTo(AmqpError.RESOURCE_LIMIT_EXCEEDED.symbol());
                assertThat(close.getError().getDescription()).isEqualTo("access to vhost 'one-connection' refused for "
                    + "user 'guest': vhost connection limit (1) is reached");
            }
        }
        // the place is free again once the first one closed
        await().atMost(TIMEOUT).untilAsserted(() -> {
            try (Connection again = VirtualHostTest.factory(broker, "one-connection", "guest", "guest")
                    .newConnection()) {
                assertThat(again.isOpen()).isTrue();
            }
        });
    }

    @Test
    void aUsersConnectionLimitRefusesItsNextConnection() throws Exception {
        try (Connection first = VirtualHostTest.factory(broker, "/", "single", "pw").newConnection()) {
            AMQP.Connection.Close refused = VirtualHostTest.openRefused(
                VirtualHostTest.factory(broker, "/", "single", "pw"));
            assertThat(refused.getReplyCode()).isEqualTo(530);
            assertThat(refused.getReplyText())
                .isEqualTo("NOT_ALLOWED - Connection refused for user 'single': user connection limit (1) is reached");
        }
    }

    @Test
    void aUsersChannelLimitCountsChannelsAndSessions() throws Exception {
        Connection connection = VirtualHostTest.factory(broker, "/", "narrow", "pw").newConnection();
        try {
            connection.createChannel();
            Channel second = connection.createChannel();
            second.close(); // a closed channel frees its place
            connection.createChannel();
            try (RawClient client = new RawClient(broker.port())) {
                client.sasl("narrow", "pw");
                client.open();
                Begin begin = new Begin();
                begin.setNextOutgoingId(UnsignedInteger.ZERO);
                begin.setIncomingWindow(UnsignedInteger.valueOf(100));
                begin.setOutgoingWindow(UnsignedInteger.valueOf(100));
                client.write(0, begin);
                Close close = client.readUntil(Close.class);
                assertThat((Object) close.getError().getCondition())
                    .isEqualTo(AmqpError.RESOURCE_LIMIT_EXCEEDED.symbol());
                assertThat(close.getError().getDescription()).isEqualTo("number of channels opened for user 'narrow' "
                    + "has reached the maximum allowed user limit of (2)");
            }
            connectionError(connection, 530, "NOT_ALLOWED - number of channels opened for user 'narrow' has reached "
                + "the maximum allowed user limit of (2)", connection::createChannel);
        } finally {
            if (connection.isOpen()) {
                connection.close();
            }
        }
    }

    @Test
    void aVirtualHostsQueueLimitRefusesTheNextQueue() throws Exception {
        try (Connection connection = VirtualHostTest.factory(broker, "one-queue", "guest", "guest").newConnection()) {
            Channel channel = connection.createChannel();
            channel.queueDeclare("first", false, false, false, null);
            channel.queueDeclare("first", false, false, false, null); // redeclaring is no new queue
            channelError(channel, 406, "PRECONDITION_FAILED - cannot declare queue 'second': queue limit in vhost "
                + "'one-queue' (1) is reached", () -> channel.queueDeclare("second", false, false, false, null));
        }
        try (RawClient client = new RawClient(broker.port())) {
            client.sasl("guest", "guest");
            client.open("vhost:one-queue");
            client.begin();
            client.attachReceiver(0, RawClient.source("/queue/third"), false);
            Detach detach = client.readUntil(Detach.class);
            assertThat((Object) detach.getError().getCondition()).isEqualTo(AmqpError.RESOURCE_LIMIT_EXCEEDED.symbol());
            assertThat(detach.getError().getDescription())
                .isEqualTo("cannot declare queue 'third': queue limit in vhost 'one-queue' (1) is reached");
        }
    }
}
