package io.skiffmq.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.skiffmq.codec.testing.LeakDetection;
import jakarta.jms.Connection;
import jakarta.jms.DeliveryMode;
import jakarta.jms.JMSException;
import jakarta.jms.Message;
import jakarta.jms.MessageConsumer;
import jakarta.jms.MessageProducer;
import jakarta.jms.Queue;
import jakarta.jms.Session;
import jakarta.jms.TextMessage;
import java.nio.file.Path;
import java.time.Duration;
import org.apache.qpid.jms.JmsConnectionFactory;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * AMQP 1.0 local transactions through Qpid JMS transacted sessions: publishes routed only at the commit,
 * acknowledgements applied only at the commit, redelivery after a rollback, a consume-and-produce commit, a
 * committed durable message across a restart, a commit that cannot route, and a connection closed with a
 * transaction open (a connection dropped without close: Amqp10TransactionFramesTest).
 */
@ExtendWith(LeakDetection.class)
class Amqp10TransactionTest {
    private static RunningBroker broker;

    @BeforeAll
    static void start() throws Exception {
        broker = RunningBroker.start();
    }

    @AfterAll
    static void stop() {
        broker.close();
    }

    private static Connection connect(RunningBroker on) throws JMSException {
        return connect(on, "");
    }

    /** @param options more of Qpid JMS's URI options, each starting with {@code &} */
    private static Connection connect(RunningBroker on, String options) throws JMSException {
        // one message prefetched at a time: what the consumer holds is exactly what it received
        JmsConnectionFactory factory = new JmsConnectionFactory("guest", "guest",
            on.amqpUri() + "?jms.prefetchPolicy.all=1" + options);
        Connection connection = factory.createConnection();
        connection.start();
        return connection;
    }

    private static String text(Message message) throws JMSException {
        assertThat(message).as("a message arrived").isNotNull();
        return ((TextMessage) message).getText();
    }

    /** The next message a fresh non-transacted consumer gets from {@code queue} (acknowledged). */
    private static String next(Connection connection, String queue) throws JMSException {
        Session session = connection.createSession(false, Session.AUTO_ACKNOWLEDGE);
        try (MessageConsumer consumer = session.createConsumer(session.createQueue(queue))) {
            return text(consumer.receive(5000));
        } finally {
            session.close();
        }
    }

    private static void sendPlain(Connection connection, String queue, String body) throws JMSException {
        Session session = connection.createSession(false, Session.AUTO_ACKNOWLEDGE);
        try (MessageProducer producer = session.createProducer(session.createQueue(queue))) {
            producer.send(session.createTextMessage(body));
        } finally {
            session.close();
        }
    }

    @Test
    void sendAndCommitIsDeliveredSendAndRollbackNever() throws Exception {
        try (Connection connection = connect(broker)) {
            Session tx = connection.createSession(true, Session.SESSION_TRANSACTED);
            MessageProducer producer = tx.createProducer(tx.createQueue("tx-send"));
            producer.send(tx.createTextMessage("rolled back"));
            tx.rollback();
            producer.send(tx.createTextMessage("one"));
            producer.setDeliveryMode(DeliveryMode.NON_PERSISTENT); // a commit of durable and transient messages
            producer.send(tx.createTextMessage("two"));
            assertThat(broker.vhost("/").queue("tx-send").readyCount()).as("nothing routed before the commit")
                .isZero();
            tx.commit();
            assertThat(next(connection, "tx-send")).isEqualTo("one");
            assertThat(next(connection, "tx-send")).isEqualTo("two");
            sendPlain(connection, "tx-send", "marker");
            assertThat(next(connection, "tx-send")).as("the rolled back message never arrives").isEqualTo("marker");
        }
    }

    @Test
    void receiveAndCommitRemovesReceiveAndRollbackRedelivers() throws Exception {
        try (Connection connection = connect(broker)) {
            sendPlain(connection, "tx-receive", "first");
            sendPlain(connection, "tx-receive", "second");
            Session tx = connection.createSession(true, Session.SESSION_TRANSACTED);
            MessageConsumer consumer = tx.createConsumer(tx.createQueue("tx-receive"));
            Message first = consumer.receive(5000);
            assertThat(text(first)).isEqualTo("first");
            assertThat(first.getJMSRedelivered()).isFalse();
            tx.rollback();

            Message again = consumer.receive(5000);
            assertThat(text(again)).isEqualTo("first");
            assertThat(again.getJMSRedelivered()).as("redelivered after the rollback").isTrue();
            assertThat(again.getIntProperty("JMSXDeliveryCount")).isEqualTo(2);
            tx.commit();
            assertThat(text(consumer.receive(5000))).isEqualTo("second");
            tx.commit();
            consumer.close();
            tx.close();

            sendPlain(connection, "tx-receive", "marker");
            assertThat(next(connection, "tx-receive")).as("both committed acks removed their messages")
                .isEqualTo("marker");
        }
    }

    @Test
    void consumeFromOneQueueAndProduceToAnotherCommitsAtomically() throws Exception {
        try (Connection connection = connect(broker)) {
            sendPlain(connection, "tx-in", "order-1");
            Session tx = connection.createSession(true, Session.SESSION_TRANSACTED);
            MessageConsumer consumer = tx.createConsumer(tx.createQueue("tx-in"));
            MessageProducer producer = tx.createProducer(tx.createQueue("tx-out"));

            producer.send(tx.createTextMessage("processed " + text(consumer.receive(5000))));
            tx.rollback(); // neither happened: the input is back, nothing went out
            Message again = consumer.receive(5000);
            assertThat(again.getJMSRedelivered()).isTrue();
            producer.send(tx.createTextMessage("processed " + text(again)));
            tx.commit();
            consumer.close();

            assertThat(next(connection, "tx-out")).isEqualTo("processed order-1");
            sendPlain(connection, "tx-out", "out-marker");
            assertThat(next(connection, "tx-out")).as("only the committed output").isEqualTo("out-marker");
            sendPlain(connection, "tx-in", "in-marker");
            assertThat(next(connection, "tx-in")).as("the input is consumed").isEqualTo("in-marker");
        }
    }

    @Test
    void aConnectionClosedWithATransactionOpenDropsItsPublishesAndGivesBackItsMessages() throws Exception {
        try (Connection connection = connect(broker)) {
            sendPlain(connection, "tx-lost", "kept");
            Connection doomed = connect(broker);
            Session tx = doomed.createSession(true, Session.SESSION_TRANSACTED);
            MessageConsumer consumer = tx.createConsumer(tx.createQueue("tx-lost"));
            assertThat(text(consumer.receive(5000))).isEqualTo("kept");
            tx.createProducer(tx.createQueue("tx-lost")).send(tx.createTextMessage("never"));
            doomed.close(); // a JMS close rolls back; the broker drops what the transaction held

            Message back = receiveFrom(connection, "tx-lost");
            assertThat(text(back)).isEqualTo("kept");
            assertThat(back.getJMSRedelivered()).isTrue();
            sendPlain(connection, "tx-lost", "marker");
            assertThat(next(connection, "tx-lost")).isEqualTo("marker");
        }
    }

    private static Message receiveFrom(Connection connection, String queue) throws JMSException {
        Session session = connection.createSession(false, Session.AUTO_ACKNOWLEDGE);
        try (MessageConsumer consumer = session.createConsumer(session.createQueue(queue))) {
            return consumer.receive(5000);
        } finally {
            session.close();
        }
    }

    @Test
    void aCommitThatCannotRouteFailsAndTheSessionGoesOn() throws Exception {
        // a transacted send is asynchronous: without waiting for its disposition, the queue could go before it came
        try (Connection connection = connect(broker, "&jms.forceSyncSend=true")) {
            Session tx = connection.createSession(true, Session.SESSION_TRANSACTED);
            MessageProducer producer = tx.createProducer(tx.createQueue("tx-deleted"));
            producer.send(tx.createTextMessage("to a queue about to go"));
            broker.vhost("/").deleteQueue("tx-deleted");
            await().atMost(Duration.ofSeconds(10)).until(() -> broker.vhost("/").queue("tx-deleted") == null);
            // amqp:transaction:rollback; Qpid JMS 2.10 reports it as JmsTransactionInDoubtException, a JMSException
            assertThatThrownBy(tx::commit).isInstanceOf(JMSException.class)
                .hasMessageContaining("no queue 'tx-deleted'").hasMessageContaining("amqp:transaction:rollback");
            tx.createProducer(tx.createQueue("tx-after")).send(tx.createTextMessage("the session goes on"));
            tx.commit();
            assertThat(next(connection, "tx-after")).isEqualTo("the session goes on");
        }
    }

    @Test
    void aCommittedDurableMessageSurvivesARestart(@TempDir Path dir) throws Exception {
        String dataDir = "data-dir=" + dir.resolve("data");
        try (RunningBroker first = RunningBroker.start(dataDir); Connection connection = connect(first)) {
            Session tx = connection.createSession(true, Session.SESSION_TRANSACTED);
            MessageProducer producer = tx.createProducer(tx.createQueue("tx-durable"));
            producer.setDeliveryMode(DeliveryMode.PERSISTENT);
            producer.send(tx.createTextMessage("committed"));
            tx.commit(); // answered only once the journal synced it
            producer.send(tx.createTextMessage("open at the restart"));
        }
        try (RunningBroker second = RunningBroker.start(dataDir); Connection connection = connect(second)) {
            await().atMost(Duration.ofSeconds(10))
                .until(() -> second.vhost("/").queue("tx-durable") != null);
            assertThat(next(connection, "tx-durable")).isEqualTo("committed");
            sendPlain(connection, "tx-durable", "marker");
            assertThat(next(connection, "tx-durable")).isEqualTo("marker");
        }
    }
}
