package io.skiffmq.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.skiffmq.codec.testing.LeakDetection;
import jakarta.jms.Connection;
import jakarta.jms.DeliveryMode;
import jakarta.jms.JMSException;
import jakarta.jms.Message;
import jakarta.jms.MessageConsumer;
import jakarta.jms.MessageProducer;
import jakarta.jms.Queue;
import jakarta.jms.Session;
import jakarta.jms.TemporaryQueue;
import jakarta.jms.TextMessage;
import org.apache.qpid.jms.JmsConnectionFactory;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** Apache Qpid JMS (Jakarta JMS 3.1) against the real broker. */
@ExtendWith(LeakDetection.class)
class QpidJmsTest {
    private static RunningBroker broker;

    @BeforeAll
    static void start() throws Exception {
        broker = RunningBroker.start();
    }

    @AfterAll
    static void stop() {
        broker.close();
    }

    private static Connection connect(String options) throws JMSException {
        JmsConnectionFactory factory = new JmsConnectionFactory("guest", "guest",
            broker.amqpUri() + (options.isEmpty() ? "" : "?" + options));
        Connection connection = factory.createConnection();
        connection.start();
        return connection;
    }

    @Test
    void sendAndReceiveOnAQueue() throws Exception {
        try (Connection connection = connect("")) {
            Session session = connection.createSession(false, Session.AUTO_ACKNOWLEDGE);
            Queue queue = session.createQueue("jms-basic");
            MessageConsumer consumer = session.createConsumer(queue);
            MessageProducer producer = session.createProducer(queue);
            producer.setDeliveryMode(DeliveryMode.PERSISTENT);
            for (int i = 0; i < 100; i++) {
                TextMessage message = session.createTextMessage("hello " + i);
                message.setStringProperty("colour", "blue");
                producer.send(message);
            }
            for (int i = 0; i < 100; i++) {
                TextMessage message = (TextMessage) consumer.receive(5000);
                assertThat(message).isNotNull();
                assertThat(message.getText()).isEqualTo("hello " + i);
                assertThat(message.getStringProperty("colour")).isEqualTo("blue");
                assertThat(message.getJMSRedelivered()).isFalse();
            }
        }
    }

    @Test
    void receiveNoWaitAndZeroPrefetchUseDrain() throws Exception {
        try (Connection connection = connect("jms.prefetchPolicy.all=0")) {
            Session session = connection.createSession(false, Session.AUTO_ACKNOWLEDGE);
            Queue queue = session.createQueue("jms-drain");
            MessageConsumer consumer = session.createConsumer(queue);
            assertThat(consumer.receiveNoWait()).as("empty queue: the drain completes at once").isNull();
            assertThat(consumer.receive(200)).isNull();
            MessageProducer producer = session.createProducer(queue);
            producer.send(session.createTextMessage("one"));
            producer.send(session.createTextMessage("two"));
            assertThat(((TextMessage) consumer.receive(5000)).getText()).isEqualTo("one");
            assertThat(((TextMessage) consumer.receiveNoWait()).getText()).isEqualTo("two");
            assertThat(consumer.receiveNoWait()).isNull();
        }
    }

    @Test
    void temporaryQueueRequestReply() throws Exception {
        try (Connection connection = connect("")) {
            Session session = connection.createSession(false, Session.AUTO_ACKNOWLEDGE);
            Queue requests = session.createQueue("jms-requests");
            MessageConsumer server = session.createConsumer(requests);
            MessageProducer replier = session.createProducer(null);
            server.setMessageListener(request -> {
                try {
                    replier.send(request.getJMSReplyTo(), session.createTextMessage(
                        "re: " + ((TextMessage) request).getText()));
                } catch (JMSException e) {
                    throw new IllegalStateException(e);
                }
            });

            Session clientSession = connection.createSession(false, Session.AUTO_ACKNOWLEDGE);
            TemporaryQueue replyTo = clientSession.createTemporaryQueue();
            MessageConsumer replies = clientSession.createConsumer(replyTo);
            TextMessage request = clientSession.createTextMessage("ping");
            request.setJMSReplyTo(replyTo);
            clientSession.createProducer(requests).send(request);
            assertThat(((TextMessage) replies.receive(5000)).getText()).isEqualTo("re: ping");
            replies.close();
            replyTo.delete();
        }
    }

    @Test
    void clientAcknowledgeAndRecoverRedeliver() throws Exception {
        try (Connection connection = connect("")) {
            Session session = connection.createSession(false, Session.CLIENT_ACKNOWLEDGE);
            Queue queue = session.createQueue("jms-recover");
            MessageProducer producer = session.createProducer(queue);
            producer.send(session.createTextMessage("a"));
            producer.send(session.createTextMessage("b"));
            MessageConsumer consumer = session.createConsumer(queue);
            Message first = consumer.receive(5000);
            assertThat(((TextMessage) first).getText()).isEqualTo("a");
            session.recover();
            Message again = consumer.receive(5000);
            assertThat(((TextMessage) again).getText()).isEqualTo("a");
            assertThat(again.getJMSRedelivered()).isTrue();
            Message second = consumer.receive(5000);
            assertThat(((TextMessage) second).getText()).isEqualTo("b");
            second.acknowledge();
            consumer.close();
            // acknowledged: nothing comes back
            MessageConsumer after = session.createConsumer(queue);
            assertThat(after.receive(300)).isNull();
        }
    }

    @Test
    void aConsumerRestartedWithinTheProcessGetsWhatWasNotAcknowledged() throws Exception {
        try (Connection connection = connect("")) {
            Session producerSession = connection.createSession(false, Session.AUTO_ACKNOWLEDGE);
            Queue queue = producerSession.createQueue("jms-restart");
            MessageProducer producer = producerSession.createProducer(queue);
            for (int i = 0; i < 5; i++) {
                producer.send(producerSession.createTextMessage("m" + i));
            }
            Session session = connection.createSession(false, Session.CLIENT_ACKNOWLEDGE);
            MessageConsumer consumer = session.createConsumer(queue);
            Message m0 = consumer.receive(5000);
            m0.acknowledge();
            Message m1 = consumer.receive(5000);
            assertThat(((TextMessage) m1).getText()).isEqualTo("m1");
            session.close();

            Session restarted = connection.createSession(false, Session.AUTO_ACKNOWLEDGE);
            MessageConsumer again = restarted.createConsumer(queue);
            TextMessage redelivered = (TextMessage) again.receive(5000);
            assertThat(redelivered.getText()).isEqualTo("m1");
            assertThat(redelivered.getJMSRedelivered()).isTrue();
            for (int i = 2; i < 5; i++) {
                assertThat(((TextMessage) again.receive(5000)).getText()).isEqualTo("m" + i);
            }
        }
    }

    /**
     * Two CLIENT_ACKNOWLEDGE consumers of one session on one queue, each with a prefetch of 5 and credit before the
     * messages come, so the queue serves them in turn: the first holds m0, m2, ..., the second m1, m3, .... Then the
     * session closes. Qpid JMS settles what it handed to the application itself (modified, a disposition each), but
     * ends the session without detaching the links, so their prefetched messages come back with the session's end:
     * a consumer waiting on another connection gets all of them in their original order, redelivered, their
     * JMSXDeliveryCount raised once (Qpid JMS's default outcome, modified(delivery-failed)).
     */
    @Test
    void twoConsumersOfAClosedSessionGiveTheirMessagesBackInOrder() throws Exception {
        String name = "jms-two-consumers";
        try (Connection waiting = connect("jms.prefetchPolicy.all=20");
             Connection connection = connect("jms.prefetchPolicy.all=5")) {
            Session session = connection.createSession(false, Session.CLIENT_ACKNOWLEDGE);
            Queue queue = session.createQueue(name);
            session.createConsumer(queue);
            session.createConsumer(queue);
            MessageProducer producer = session.createProducer(queue);
            for (int i = 0; i < 10; i++) {
                producer.send(session.createTextMessage("m" + i));
            }
            MessageConsumer elsewhere = waiting.createSession(false, Session.AUTO_ACKNOWLEDGE).createConsumer(queue);
            assertThat(elsewhere.receive(100)).as("every message is held by the session").isNull();
            session.close();
            for (int i = 0; i < 10; i++) {
                TextMessage message = (TextMessage) elsewhere.receive(5000);
                assertThat(message).as("m%d", i).isNotNull();
                assertThat(message.getText()).isEqualTo("m" + i);
                assertThat(message.getJMSRedelivered()).as("m%d redelivered", i).isTrue();
                assertThat(message.getIntProperty("JMSXDeliveryCount")).as("m%d delivery count", i).isEqualTo(2);
            }
            assertThat(elsewhere.receive(200)).isNull();
        }
    }

    /**
     * A CLIENT_ACKNOWLEDGE consumer closed while messages it received are not acknowledged (Qpid JMS keeps its link
     * until the session settles them), then its session or connection closed: every message is back in the queue,
     * in order, those it received redelivered.
     */
    @org.junit.jupiter.params.ParameterizedTest(name = "then the {0} closes")
    @org.junit.jupiter.params.provider.ValueSource(strings = {"session", "connection"})
    void aClosedConsumersUnacknowledgedMessagesComeBackWhenItsSessionOrConnectionCloses(String closed)
            throws Exception {
        String name = "jms-unacked-" + closed;
        Connection connection = connect("jms.prefetchPolicy.all=10");
        try {
            Session session = connection.createSession(false, Session.CLIENT_ACKNOWLEDGE);
            Queue queue = session.createQueue(name);
            MessageProducer producer = session.createProducer(queue);
            for (int i = 0; i < 20; i++) {
                producer.send(session.createTextMessage("m" + i));
            }
            MessageConsumer consumer = session.createConsumer(queue);
            for (int i = 0; i < 5; i++) {
                assertThat(((TextMessage) consumer.receive(5000)).getText()).isEqualTo("m" + i);
            }
            consumer.close();
            if (closed.equals("session")) {
                session.close();
            } else {
                connection.close();
            }
        } finally {
            if (closed.equals("session")) {
                connection.close();
            }
        }
        try (Connection again = connect("")) {
            Session session = again.createSession(false, Session.AUTO_ACKNOWLEDGE);
            MessageConsumer consumer = session.createConsumer(session.createQueue(name));
            for (int i = 0; i < 20; i++) {
                TextMessage message = (TextMessage) consumer.receive(5000);
                assertThat(message).as("m%d", i).isNotNull();
                assertThat(message.getText()).isEqualTo("m" + i);
                if (i < 5) {
                    assertThat(message.getJMSRedelivered()).as("m%d redelivered", i).isTrue();
                }
            }
            assertThat(consumer.receive(200)).isNull();
        }
    }

    @Test
    void topicsReachEverySubscriberAndNobodyIsFine() throws Exception {
        try (Connection connection = connect("")) {
            Session session = connection.createSession(false, Session.AUTO_ACKNOWLEDGE);
            jakarta.jms.Topic topic = session.createTopic("news");
            MessageProducer producer = session.createProducer(topic);
            producer.send(session.createTextMessage("before anyone listened"));
            MessageConsumer first = session.createConsumer(topic);
            MessageConsumer second = session.createConsumer(topic);
            producer.send(session.createTextMessage("extra"));
            assertThat(((TextMessage) first.receive(5000)).getText()).isEqualTo("extra");
            assertThat(((TextMessage) second.receive(5000)).getText()).isEqualTo("extra");
            assertThat(first.receive(200)).isNull();
            // an anonymous producer marks the topic with x-opt-jms-dest
            session.createProducer(null).send(topic, session.createTextMessage("relayed"));
            assertThat(((TextMessage) first.receive(5000)).getText()).isEqualTo("relayed");
        }
    }

    @Test
    void aDurableConsumerRestartedWithinTheProcessKeepsItsMessagesUntilUnsubscribed() throws Exception {
        try (Connection connection = connect("jms.clientID=durable-client")) {
            Session session = connection.createSession(false, Session.CLIENT_ACKNOWLEDGE);
            jakarta.jms.Topic topic = session.createTopic("prices");
            MessageProducer producer = session.createProducer(topic);
            MessageConsumer durable = session.createDurableConsumer(topic, "price-watch");
            producer.send(session.createTextMessage("p1"));
            producer.send(session.createTextMessage("p2"));
            Message p1 = durable.receive(5000);
            assertThat(((TextMessage) p1).getText()).isEqualTo("p1");
            p1.acknowledge();
            durable.close();
            producer.send(session.createTextMessage("p3 while away"));

            MessageConsumer again = session.createDurableConsumer(topic, "price-watch");
            TextMessage p2 = (TextMessage) again.receive(5000);
            assertThat(p2.getText()).isEqualTo("p2");
            assertThat(((TextMessage) again.receive(5000)).getText()).isEqualTo("p3 while away");
            p2.acknowledge();
            again.close();
            session.unsubscribe("price-watch");
            producer.send(session.createTextMessage("after unsubscribe: no one keeps it"));
            MessageConsumer fresh = session.createDurableConsumer(topic, "price-watch");
            assertThat(fresh.receive(300)).as("a new subscription starts empty").isNull();
            fresh.close();
            session.unsubscribe("price-watch");
        }
    }
}
