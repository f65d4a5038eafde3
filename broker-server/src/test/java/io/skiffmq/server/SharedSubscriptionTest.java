package io.skiffmq.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.skiffmq.codec.testing.LeakDetection;
import jakarta.jms.Connection;
import jakarta.jms.DeliveryMode;
import jakarta.jms.JMSConsumer;
import jakarta.jms.JMSContext;
import jakarta.jms.JMSException;
import jakarta.jms.JMSProducer;
import jakarta.jms.MessageConsumer;
import jakarta.jms.MessageProducer;
import jakarta.jms.Session;
import jakarta.jms.TextMessage;
import jakarta.jms.Topic;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Queue;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import org.apache.qpid.jms.JmsConnectionFactory;
import org.apache.qpid.proton.amqp.Symbol;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * JMS 2.0 shared subscriptions through Qpid JMS: every consumer of one subscription, on one connection or several,
 * with a client-id or global, takes its share of one queue's messages.
 */
@ExtendWith(LeakDetection.class)
class SharedSubscriptionTest {
    private static final Duration WAIT = Duration.ofSeconds(10);
    private static RunningBroker broker;

    @BeforeAll
    static void start() throws Exception {
        broker = RunningBroker.start();
    }

    @AfterAll
    static void stop() {
        broker.close();
    }

    /** A started connection; with that client-id, or none (then its shared subscriptions are global). */
    static Connection connect(RunningBroker broker, String clientId) throws JMSException {
        String uri = broker.amqpUri() + "?jms.prefetchPolicy.all=10"
            + (clientId == null ? "" : "&jms.clientID=" + clientId);
        Connection connection = new JmsConnectionFactory("guest", "guest", uri).createConnection();
        connection.start();
        return connection;
    }

    private static Connection connect(String clientId) throws JMSException {
        return connect(broker, clientId);
    }

    /** Collects what a consumer is given. */
    private static Queue<String> collect(MessageConsumer consumer) throws JMSException {
        Queue<String> received = new ConcurrentLinkedQueue<>();
        consumer.setMessageListener(message -> {
            try {
                received.add(((TextMessage) message).getText());
            } catch (JMSException e) {
                throw new IllegalStateException(e);
            }
        });
        return received;
    }

    private static List<String> publish(Session session, Topic topic, String prefix, int count) throws JMSException {
        List<String> sent = new ArrayList<>();
        MessageProducer producer = session.createProducer(topic);
        producer.setDeliveryMode(DeliveryMode.NON_PERSISTENT); // a durable send waits for the disk: slow tests
        for (int i = 0; i < count; i++) {
            String text = prefix + i;
            producer.send(session.createTextMessage(text));
            sent.add(text);
        }
        producer.close();
        return sent;
    }

    /** Both consumers got some, and together exactly what was sent: none lost, none twice. */
    private static void assertSplit(Queue<String> first, Queue<String> second, List<String> sent) {
        await().atMost(WAIT).until(() -> first.size() + second.size() >= sent.size());
        assertThat(first).isNotEmpty();
        assertThat(second).isNotEmpty();
        List<String> all = new ArrayList<>(first);
        all.addAll(second);
        assertThat(all).hasSize(sent.size()).containsExactlyInAnyOrderElementsOf(sent);
    }

    private static io.skiffmq.core.queue.Queue queue(String name) {
        return broker.vhost("/").queue(name);
    }

    @Test
    void sharedDurableConsumersOnOneConnectionSplitTheMessages() throws Exception {
        try (Connection connection = connect("shared-one")) {
            Session session = connection.createSession(false, Session.AUTO_ACKNOWLEDGE);
            Topic topic = session.createTopic("orders.one");
            Queue<String> first = collect(session.createSharedDurableConsumer(topic, "billing"));
            Session other = connection.createSession(false, Session.AUTO_ACKNOWLEDGE);
            Queue<String> second = collect(other.createSharedDurableConsumer(topic, "billing"));
            Session producer = connection.createSession(false, Session.AUTO_ACKNOWLEDGE);
            assertSplit(first, second, publish(producer, topic, "m", 100));
            assertThat(queue("jms-subscription:shared-one:billing")).isNotNull();
            assertThat(queue("jms-subscription:shared-one:billing").durable()).isTrue();
            session.close();
            other.close();
            producer.unsubscribe("billing");
            await().atMost(WAIT).until(() -> queue("jms-subscription:shared-one:billing") == null);
        }
    }

    @Test
    void sharedDurableConsumersWithOneClientIdOnTwoConnectionsSplitTheMessages() throws Exception {
        try (Connection one = connect("shared-two"); Connection two = connect("shared-two")) {
            Session s1 = one.createSession(false, Session.AUTO_ACKNOWLEDGE);
            Session s2 = two.createSession(false, Session.AUTO_ACKNOWLEDGE);
            Topic topic = s1.createTopic("orders.two");
            Queue<String> first = collect(s1.createSharedDurableConsumer(topic, "audit"));
            Queue<String> second = collect(s2.createSharedDurableConsumer(topic, "audit"));
            assertSplit(first, second, publish(one.createSession(false, Session.AUTO_ACKNOWLEDGE), topic, "t", 60));
        }
        try (Connection connection = connect("shared-two")) {
            connection.createSession(false, Session.AUTO_ACKNOWLEDGE).unsubscribe("audit");
        }
    }

    @Test
    void globalSharedDurableConsumersOnTwoConnectionsWithoutClientIdSplitTheMessages() throws Exception {
        try (Connection one = connect(null); Connection two = connect(null)) {
            Session s1 = one.createSession(false, Session.AUTO_ACKNOWLEDGE);
            Session s2 = two.createSession(false, Session.AUTO_ACKNOWLEDGE);
            Topic topic = s1.createTopic("orders.global");
            Queue<String> first = collect(s1.createSharedDurableConsumer(topic, "everyone"));
            Queue<String> second = collect(s2.createSharedDurableConsumer(topic, "everyone"));
            // a second consumer on the first connection: link name everyone|global2
            Session s3 = one.createSession(false, Session.AUTO_ACKNOWLEDGE);
            Queue<String> third = collect(s3.createSharedDurableConsumer(topic, "everyone"));
            List<String> sent = publish(two.createSession(false, Session.AUTO_ACKNOWLEDGE), topic, "g", 90);
            await().atMost(WAIT).until(() -> first.size() + second.size() + third.size() >= sent.size());
            List<String> all = new ArrayList<>(first);
            all.addAll(second);
            all.addAll(third);
            assertThat(all).hasSize(sent.size()).containsExactlyInAnyOrderElementsOf(sent);
            assertThat(first).isNotEmpty();
            assertThat(second).isNotEmpty();
            assertThat(third).isNotEmpty();
            assertThat(queue("jms-subscription-global:everyone").consumerCount()).isEqualTo(3);
        }
        assertThat(queue("jms-subscription-global:everyone")).as("kept without consumers").isNotNull();
        try (Connection connection = connect(null)) {
            connection.createSession(false, Session.AUTO_ACKNOWLEDGE).unsubscribe("everyone");
        }
        await().atMost(WAIT).until(() -> queue("jms-subscription-global:everyone") == null);
    }

    @Test
    void sharedNonDurableConsumersSplitTheMessagesAndTheQueueGoesWithTheLast() throws Exception {
        try (Connection one = connect(null); Connection two = connect(null)) {
            Session s1 = one.createSession(false, Session.AUTO_ACKNOWLEDGE);
            Session s2 = two.createSession(false, Session.AUTO_ACKNOWLEDGE);
            Topic topic = s1.createTopic("ticks");
            MessageConsumer c1 = s1.createSharedConsumer(topic, "watchers");
            MessageConsumer c2 = s2.createSharedConsumer(topic, "watchers");
            Queue<String> first = collect(c1);
            Queue<String> second = collect(c2);
            assertSplit(first, second, publish(s2, topic, "v", 50));
            String name = "jms-shared-subscription-global:watchers";
            assertThat(queue(name).durable()).isFalse();
            c1.close();
            assertThat(queue(name)).as("one consumer left").isNotNull();
            c2.close();
            await().atMost(WAIT).until(() -> queue(name) == null);
        }
        try (Connection connection = connect("volatile-client")) {
            Session session = connection.createSession(false, Session.AUTO_ACKNOWLEDGE);
            session.createSharedConsumer(session.createTopic("ticks"), "mine");
            assertThat(queue("jms-shared-subscription:volatile-client:mine")).isNotNull();
        }
        await().atMost(WAIT).until(() -> queue("jms-shared-subscription:volatile-client:mine") == null);
    }

    @Test
    void theJmsContextApiSharesToo() throws Exception {
        String uri = broker.amqpUri() + "?jms.prefetchPolicy.all=1";
        JmsConnectionFactory factory = new JmsConnectionFactory("guest", "guest", uri);
        try (JMSContext first = factory.createContext(); JMSContext second = factory.createContext()) {
            Topic topic = first.createTopic("context.topic");
            JMSConsumer a = first.createSharedDurableConsumer(topic, "ctx");
            JMSConsumer b = second.createSharedDurableConsumer(topic, "ctx");
            JMSProducer producer = first.createProducer().setDeliveryMode(DeliveryMode.NON_PERSISTENT);
            for (int i = 0; i < 4; i++) {
                producer.send(topic, "c" + i);
            }
            List<String> received = new ArrayList<>();
            long deadline = System.nanoTime() + WAIT.toNanos();
            while (received.size() < 4 && System.nanoTime() < deadline) {
                for (JMSConsumer consumer : List.of(a, b)) {
                    String body = consumer.receiveBody(String.class, 100);
                    if (body != null) {
                        received.add(body);
                    }
                }
            }
            assertThat(received).containsExactlyInAnyOrder("c0", "c1", "c2", "c3");
            a.close();
            b.close();
            first.unsubscribe("ctx");
        }
    }

    @Test
    void aSharedNonDurableSubscriptionReopenedAsItsLastConsumerLeavesWorks() throws Exception {
        try (Connection one = connect(null); Connection two = connect(null)) {
            Session s1 = one.createSession(false, Session.AUTO_ACKNOWLEDGE);
            Session s2 = two.createSession(false, Session.AUTO_ACKNOWLEDGE);
            Topic topic = s1.createTopic("churn");
            for (int i = 0; i < 10; i++) {
                // the queue belongs to the first connection's event loop; the last consumer leaves from the
                // second, which subscribes again at once: it must not get the queue being deleted
                MessageConsumer creator = s1.createSharedConsumer(topic, "churning");
                MessageConsumer last = s2.createSharedConsumer(topic, "churning");
                creator.close();
                last.close();
                MessageConsumer next = s2.createSharedConsumer(topic, "churning");
                publish(s1, topic, "round" + i + "-", 1);
                assertThat(((TextMessage) next.receive(WAIT.toMillis())).getText()).isEqualTo("round" + i + "-0");
                next.close();
            }
        }
        await().atMost(WAIT).until(() -> queue("jms-shared-subscription-global:churning") == null);
    }

    @Test
    void unsubscribeFailsWhileAConsumerIsActiveAndSucceedsAfter() throws Exception {
        try (Connection busy = connect(null); Connection other = connect(null)) {
            Session session = busy.createSession(false, Session.AUTO_ACKNOWLEDGE);
            Topic topic = session.createTopic("busy.topic");
            MessageConsumer consumer = session.createSharedDurableConsumer(topic, "busy");
            Session otherSession = other.createSession(false, Session.AUTO_ACKNOWLEDGE);
            assertThatThrownBy(() -> otherSession.unsubscribe("busy")).isInstanceOf(JMSException.class)
                .hasMessageContaining("active consumer");
            assertThat(queue("jms-subscription-global:busy")).isNotNull();
            consumer.close();
            otherSession.unsubscribe("busy");
            await().atMost(WAIT).until(() -> queue("jms-subscription-global:busy") == null);
            assertThatThrownBy(() -> otherSession.unsubscribe("busy")).as("gone")
                .isInstanceOf(jakarta.jms.InvalidDestinationException.class);
        }
    }

    @Test
    void aSubscriptionOnAnotherTopicReplacesItOnlyWhenUnused() throws Exception {
        try (Connection one = connect("changer"); Connection two = connect("changer")) {
            Session s1 = one.createSession(false, Session.AUTO_ACKNOWLEDGE);
            Session s2 = two.createSession(false, Session.AUTO_ACKNOWLEDGE);
            Topic before = s1.createTopic("before");
            Topic after = s1.createTopic("after");
            MessageConsumer consumer = s1.createSharedDurableConsumer(before, "moving");
            assertThatThrownBy(() -> s2.createSharedDurableConsumer(after, "moving"))
                .isInstanceOf(JMSException.class).hasMessageContaining("cannot be changed while in use");
            consumer.close();
            publish(s1, before, "old", 1);
            MessageConsumer moved = s2.createSharedDurableConsumer(after, "moving");
            publish(s1, before, "ignored", 1);
            publish(s1, after, "new", 1);
            assertThat(((TextMessage) moved.receive(WAIT.toMillis())).getText()).isEqualTo("new0");
            assertThat(moved.receiveNoWait()).as("the old subscription's message went with it").isNull();
            moved.close();
            s2.unsubscribe("moving");
        }
    }

    @Test
    void anUnsharedDurableSubscriptionIsOneWithASharedOneOfItsNameAndIsReplacedOnAnotherTopic() throws Exception {
        try (Connection one = connect("plain"); Connection two = connect("plain")) {
            Session s1 = one.createSession(false, Session.AUTO_ACKNOWLEDGE);
            Session s2 = two.createSession(false, Session.AUTO_ACKNOWLEDGE);
            Topic first = s1.createTopic("plain.first");
            MessageConsumer unshared = s1.createDurableConsumer(first, "plain-sub");
            assertThatThrownBy(() -> s2.unsubscribe("plain-sub")).as("in use on the other connection")
                .isInstanceOf(JMSException.class).hasMessageContaining("active consumer");
            MessageConsumer shared = s2.createSharedDurableConsumer(first, "plain-sub");
            // the attach is answered before the queue's thread has added the consumer
            await().atMost(WAIT).until(() -> queue("jms-subscription:plain:plain-sub").consumerCount() == 2);
            unshared.close();
            shared.close();
            publish(s1, first, "first", 1);
            Topic second = s1.createTopic("plain.second");
            MessageConsumer moved = s1.createDurableConsumer(second, "plain-sub");
            publish(s1, first, "first-again", 1);
            publish(s1, second, "second", 1);
            assertThat(((TextMessage) moved.receive(WAIT.toMillis())).getText()).isEqualTo("second0");
            assertThat(moved.receiveNoWait()).as("one binding, to the new topic; the old messages dropped").isNull();
            assertThat(broker.vhost("/").bindings().bindingsFrom("amq.topic").stream()
                .filter(b -> b.destination().name().equals("jms-subscription:plain:plain-sub")).count()).isEqualTo(1);
            moved.close();
            s1.unsubscribe("plain-sub");
        }
    }

    /**
     * A refusal ends the JMS session (RabbitMQ 4's session error). Qpid JMS does not fail an attach still pending
     * when its session ends, against RabbitMQ as here: the consumer's creation runs into {@code jms.requestTimeout},
     * and the session is then closed, with the broker's refusal as its cause.
     */
    @Test
    void aSharedSubscriberNeedsTheSamePermissionsAsAnyTopicSubscriber() throws Exception {
        broker.admin().putUser("dora", "pw", List.of());
        broker.admin().setPermissions("dora", "/", "^jms-subscription-global:", "^jms-subscription-global:",
            "^jms-subscription-global:|^amq\\.topic$");
        broker.admin().setTopicPermissions("dora", "/", "amq.topic", ".*", "^dora\\.");
        String uri = broker.amqpUri() + "?jms.prefetchPolicy.all=10&jms.requestTimeout=2000";
        try (Connection dora = new JmsConnectionFactory("dora", "pw", uri).createConnection()) {
            dora.start();
            Session allowed = dora.createSession(false, Session.AUTO_ACKNOWLEDGE);
            allowed.createSharedDurableConsumer(allowed.createTopic("dora.news"), "allowed").close();
            Session theirs = dora.createSession(false, Session.AUTO_ACKNOWLEDGE);
            assertSessionRefused(theirs, () -> theirs.createSharedDurableConsumer(theirs.createTopic("eve.news"),
                "theirs"), "read access to topic 'eve.news'");
            Session shared = dora.createSession(false, Session.AUTO_ACKNOWLEDGE);
            assertSessionRefused(shared, () -> shared.createSharedConsumer(shared.createTopic("dora.news"),
                "volatile"), "configure access to queue 'jms-shared-subscription-global:volatile'");
            allowed.unsubscribe("allowed");
        }
    }

    private static void assertSessionRefused(Session session, org.assertj.core.api.ThrowableAssert.ThrowingCallable
            attempt, String refusal) {
        assertThatThrownBy(attempt).isInstanceOf(org.apache.qpid.jms.JmsOperationTimedOutException.class);
        assertThatThrownBy(() -> session.createTopic("any")).isInstanceOf(jakarta.jms.IllegalStateException.class)
            .cause().isInstanceOf(org.apache.qpid.jms.provider.exceptions.ProviderSecurityException.class)
            .hasMessageContaining(refusal).hasMessageContaining("amqp:unauthorized-access");
    }

    @Test
    void openOffersSharedSubs() throws Exception {
        try (RawClient client = new RawClient(broker.port())) {
            assertThat(client.sasl("guest", "guest")).isZero();
            Set<Symbol> offered = new HashSet<>(List.of(client.open().getOfferedCapabilities()));
            assertThat(offered).contains(Symbol.valueOf("SHARED-SUBS"));
        }
    }
}
