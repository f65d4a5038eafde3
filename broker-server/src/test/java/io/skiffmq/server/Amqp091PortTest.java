package io.skiffmq.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import io.skiffmq.codec.testing.LeakDetection;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** {@code amqp091-port}: a second port that speaks AMQP 0-9-1 only, beside the shared one. */
@ExtendWith(LeakDetection.class)
class Amqp091PortTest {

    @Test
    void theSecondPortSpeaks091AndAnswersOtherHeadersWithIts() throws Exception {
        try (RunningBroker broker = RunningBroker.start("amqp091-port=0")) {
            assertThat(broker.amqp091Port()).isNotEqualTo(broker.port());
            ConnectionFactory factory = new ConnectionFactory();
            factory.setHost("127.0.0.1");
            factory.setPort(broker.amqp091Port());
            try (Connection connection = factory.newConnection()) {
                Channel channel = connection.createChannel();
                String queue = channel.queueDeclare().getQueue();
                channel.basicPublish("", queue, null, new byte[] {1});
                assertThat(channel.basicGet(queue, true).getBody()).containsExactly(1);
            }
            // the shared port sees the same queues; AMQP 1.0 is not spoken on the 0-9-1 port
            try (RawClient client = new RawClient(broker.amqp091Port())) {
                client.writeRaw(new byte[] {'A', 'M', 'Q', 'P', 3, 1, 0, 0});
                client.expectBytes(new byte[] {'A', 'M', 'Q', 'P', 0, 0, 9, 1});
                assertThat(client.closedByBroker()).isTrue();
            }
        }
    }
}
