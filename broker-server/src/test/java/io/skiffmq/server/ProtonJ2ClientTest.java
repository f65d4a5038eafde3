package io.skiffmq.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.skiffmq.codec.testing.LeakDetection;
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
import org.apache.qpid.protonj2.client.Tracker;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The Qpid protonj2 client, used the way Spring AMQP's generic AMQP 1.0 client uses it (that client is not on
 * Maven Central in a version that resolves here): an anonymous sender routing each message by its {@code to}, and
 * receivers with manual settlement, credit added one at a time, and drain.
 */
@ExtendWith(LeakDetection.class)
class ProtonJ2ClientTest {
    private static RunningBroker broker;
    private static Client client;
    private static Connection connection;

    @BeforeAll
    static void start() throws Exception {
        broker = RunningBroker.start();
        client = Client.create();
        connection = client.connect("127.0.0.1", broker.port(), new ConnectionOptions().user("guest").password("guest"));
    }

    @AfterAll
    static void stop() {
        connection.close();
        client.close();
        broker.close();
    }

    @Test
    void anonymousSenderWithToAndManualSettlement() throws Exception {
        // the queue exists before the anonymous sender's messages arrive (bare names are created on attach)
        Receiver receiver = connection.openReceiver("pj2-queue", new ReceiverOptions().creditWindow(0).autoAccept(false));
        receiver.openFuture().get(10, TimeUnit.SECONDS);
        Sender sender = connection.openAnonymousSender();
        for (String body : new String[] {"first", "second"}) {
            Tracker tracker = sender.send(Message.create(body).to("/queues/pj2-queue").durable(true));
            assertThat(tracker.awaitSettlement(10, TimeUnit.SECONDS).remoteState()).isEqualTo(DeliveryState.accepted());
        }
        Tracker nowhere = sender.send(Message.create("lost").to("/exchanges/amq.direct/no-binding"));
        assertThat(nowhere.awaitSettlement(10, TimeUnit.SECONDS).remoteState()).isEqualTo(DeliveryState.released());

        receiver.addCredit(1);
        Delivery first = receiver.receive(10, TimeUnit.SECONDS);
        assertThat(first.message().body()).isEqualTo("first");
        first.release();
        receiver.addCredit(1);
        Delivery again = receiver.receive(10, TimeUnit.SECONDS);
        assertThat(again.message().body()).as("released goes back to its place").isEqualTo("first");
        again.accept();
        receiver.addCredit(5);
        Delivery second = receiver.receive(10, TimeUnit.SECONDS);
        assertThat(second.message().body()).isEqualTo("second");
        second.accept();
        receiver.drain().get(10, TimeUnit.SECONDS);
        assertThat(receiver.receive(200, TimeUnit.MILLISECONDS)).isNull();
        receiver.close();
        sender.close();
    }
}
