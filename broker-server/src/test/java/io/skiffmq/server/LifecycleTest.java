package io.skiffmq.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.skiffmq.codec.amqp10.AmqpError;
import io.skiffmq.codec.testing.LeakDetection;
import io.skiffmq.server.connection.ConnectionEnd;
import java.time.Duration;
import org.apache.qpid.proton.amqp.UnsignedInteger;
import org.apache.qpid.proton.amqp.transport.Close;
import org.apache.qpid.proton.amqp.transport.Open;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** Idle timeouts both ways [2.4.5] and graceful shutdown. */
@ExtendWith(LeakDetection.class)
class LifecycleTest {

    @Test
    void heartbeatsAtHalfThePeersTimeoutAndASilentPeerIsClosed() throws Exception {
        try (RunningBroker broker = RunningBroker.start("idle-timeout=1500");
             RawClient client = new RawClient(broker.port())) {
            client.sasl("guest", "guest");
            Open open = new Open();
            open.setContainerId("idle");
            open.setIdleTimeOut(UnsignedInteger.valueOf(400));
            client.write(0, open);
            Open ours = client.read().as(Open.class);
            assertThat(ours.getIdleTimeOut().intValue()).isEqualTo(1500);
            // we send nothing: the broker's empty frames (every ~200 ms) precede its close at 1500 ms
            int emptyFrames = client.countEmptyFramesUntil(Close.class);
            assertThat(emptyFrames).isGreaterThanOrEqualTo(3);
            assertThat((Object) client.lastClose().getError().getCondition())
                .isEqualTo(AmqpError.RESOURCE_LIMIT_EXCEEDED.symbol());
        }
    }

    /**
     * A consumer that stops reading (its window full of deliveries, the broker's send queue behind it) and stops
     * sending is closed at the idle timeout with a reset after the close, as RabbitMQ's sockets close
     * ({@code linger 0}): a FIN would wait behind everything unread, and the peer would find its connection alive
     * for megabytes once it reads again.
     */
    @Test
    void aConsumerThatStopsReadingIsResetAtTheIdleTimeout() throws Exception {
        try (RunningBroker broker = RunningBroker.start("idle-timeout=1000")) {
            com.rabbitmq.client.ConnectionFactory factory = new com.rabbitmq.client.ConnectionFactory();
            factory.setPort(broker.port());
            try (com.rabbitmq.client.Connection connection = factory.newConnection()) {
                com.rabbitmq.client.Channel channel = connection.createChannel();
                channel.queueDeclare("unread", false, false, false, null);
                channel.confirmSelect();
                byte[] body = new byte[4096];
                for (int i = 0; i < 4096; i++) { // 16 MiB: more than the socket buffers both ways hold
                    channel.basicPublish("", "unread", null, body);
                }
                channel.waitForConfirmsOrDie(30_000);
            }
            long idleEnds = broker.ends().count(ConnectionEnd.IDLE_TIMEOUT);
            try (RawClient client = new RawClient(broker.port(), 8192)) {
                client.sasl("guest", "guest");
                client.open();
                client.begin();
                client.attachReceiver(0, RawClient.source("/queues/unread"), true);
                client.flow(0, 0, 100_000, false, false);
                client.flush();
                // from here on the client reads and writes nothing
                Amqp091Support.await().atMost(Duration.ofSeconds(10))
                    .until(() -> broker.ends().count(ConnectionEnd.IDLE_TIMEOUT) > idleEnds);
                assertThat(SocketEnds.endsWithReset(client.socket())).as("reset, not a FIN behind the unread")
                    .isTrue();
            }
        }
    }

    @Test
    void shutdownClosesConnectionsWithConnectionForced() throws Exception {
        RunningBroker broker = RunningBroker.start();
        try (RawClient client = RawClient.openSession(broker.port())) {
            broker.close();
            Close close = client.readUntil(Close.class);
            assertThat((Object) close.getError().getCondition()).isEqualTo(AmqpError.CONNECTION_FORCED.symbol());
            assertThat(client.closedByBroker()).isTrue();
        }
    }
}
