package io.skiffmq.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.skiffmq.codec.testing.LeakDetection;
import jakarta.jms.Connection;
import jakarta.jms.DeliveryMode;
import jakarta.jms.InvalidSelectorException;
import jakarta.jms.JMSException;
import jakarta.jms.Message;
import jakarta.jms.MessageConsumer;
import jakarta.jms.MessageProducer;
import jakarta.jms.Queue;
import jakarta.jms.Session;
import jakarta.jms.TextMessage;
import jakarta.jms.Topic;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;
import org.apache.qpid.jms.JmsConnectionFactory;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * JMS selectors and no-local with Qpid JMS: on queue consumers (what they skip stays for others, in order), on topic
 * subscriptions (filtered at the subscription's queue), refused when malformed, and matched against a message
 * published over AMQP 0-9-1.
 */
@ExtendWith(LeakDetection.class)
class JmsSelectorTest {
    private static final String[] COLORS = {"red", "blue", "green", "red", null, "blue", "red", "green"};
    private static RunningBroker broker;

    @BeforeAll
    static void start() throws Exception {
        broker = RunningBroker.start();
    }

    @AfterAll
    static void stop() {
        broker.close();
    }

    static Connection connect(RunningBroker on, String options) throws JMSException {
        JmsConnectionFactory factory = new JmsConnectionFactory("guest", "guest",
            on.amqpUri() + (options.isEmpty() ? "" : "?" + options));
        Connection connection = factory.createConnection();
        connection.start();
        return connection;
    }

    /** Message {@code i} of eight, each with other properties and header fields. */
    private static void send(Session session, MessageProducer producer, int i) throws JMSException {
        TextMessage m = session.createTextMessage("m" + i);
        if (COLORS[i] != null) {
            m.setStringProperty("color", COLORS[i]);
        }
        m.setIntProperty("size", i * 10);
        m.setDoubleProperty("weight", i + 0.5);
        m.setStringProperty("code", i == 3 ? "A%3" : "A_" + i);
        m.setJMSType(i % 2 == 0 ? "even" : "odd");
        m.setJMSCorrelationID("corr-" + i);
        producer.send(m, DeliveryMode.PERSISTENT, i, 0);
    }

    private static List<String> receiveAll(MessageConsumer consumer, int expected) throws JMSException {
        List<String> texts = new ArrayList<>();
        for (int i = 0; i < expected; i++) {
            Message m = consumer.receive(5000);
            assertThat(m).as("message %d of %d", i + 1, expected).isNotNull();
            texts.add(((TextMessage) m).getText());
        }
        return texts;
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', quoteCharacter = '"', value = {
        "color = 'red'|0 3 6",
        "size > 30 AND size <= 60|4 5 6",
        "color IN ('green', 'blue')|1 2 5 7",
        "code LIKE 'A!%%' ESCAPE '!'|3",
        "code LIKE 'A\\_%' ESCAPE '\\'|0 1 2 4 5 6 7",
        "weight BETWEEN 2 AND 4|2 3",
        "color IS NULL|4",
        "NOT (color = 'red') OR size = 0|0 1 2 5 7",
        "JMSPriority >= 6|6 7",
        "JMSType = 'odd'|1 3 5 7",
        "JMSCorrelationID = 'corr-5'|5",
        "JMSDeliveryMode = 'PERSISTENT' AND size < 20|0 1"})
    void aQueueConsumerGetsWhatItsSelectorMatchesAndLeavesTheRestInOrder(String selector, String expected)
            throws Exception {
        List<Integer> matching = java.util.Arrays.stream(expected.split(" ")).map(Integer::valueOf).toList();
        String queueName = "selector-" + Integer.toHexString(selector.hashCode());
        try (Connection connection = connect(broker, "")) {
            Session session = connection.createSession(false, Session.AUTO_ACKNOWLEDGE);
            Queue queue = session.createQueue(queueName);
            MessageProducer producer = session.createProducer(queue);
            for (int i = 0; i < COLORS.length; i++) {
                send(session, producer, i);
            }
            MessageConsumer filtered = session.createConsumer(queue, selector);
            assertThat(receiveAll(filtered, matching.size()))
                .containsExactlyElementsOf(matching.stream().map(i -> "m" + i).toList());
            assertThat(filtered.receive(200)).as("nothing else matches").isNull();
            filtered.close();

            MessageConsumer everything = session.createConsumer(queue);
            List<String> rest = IntStream.range(0, COLORS.length).filter(i -> !matching.contains(i))
                .mapToObj(i -> "m" + i).toList();
            assertThat(receiveAll(everything, rest.size())).as("skipped ones stayed, in order")
                .containsExactlyElementsOf(rest);
            assertThat(everything.receive(200)).isNull();
        }
    }

    @Test
    void selectorConsumersAndAPlainOneShareAStreamEachMessageOnceAndInOrder() throws Exception {
        int count = 1500;
        String[] colors = {"red", "blue", "green"};
        String[] selectors = {"color = 'red'", "color = 'blue'", null};
        List<List<Integer>> received = new ArrayList<>();
        // the consumers on one connection, the producer on another: the queue's loop is not the publisher's
        try (Connection connection = connect(broker, ""); Connection publishing = connect(broker, "")) {
            List<Thread> threads = new ArrayList<>();
            java.util.concurrent.atomic.AtomicInteger total = new java.util.concurrent.atomic.AtomicInteger();
            java.util.concurrent.CountDownLatch ready = new java.util.concurrent.CountDownLatch(selectors.length);
            List<Throwable> failures = java.util.Collections.synchronizedList(new ArrayList<>());
            for (String selector : selectors) {
                List<Integer> mine = java.util.Collections.synchronizedList(new ArrayList<>());
                received.add(mine);
                Session session = connection.createSession(false, Session.CLIENT_ACKNOWLEDGE);
                MessageConsumer consumer = session.createConsumer(session.createQueue("selector-stream"), selector);
                Thread t = new Thread(() -> {
                    ready.countDown();
                    try {
                        while (total.get() < count) {
                            Message m = consumer.receive(100);
                            if (m != null) {
                                mine.add(m.getIntProperty("n"));
                                m.acknowledge();
                                total.incrementAndGet();
                            }
                        }
                    } catch (Throwable e) {
                        failures.add(e);
                    }
                });
                t.start();
                threads.add(t);
            }
            ready.await();
            Session session = publishing.createSession(false, Session.AUTO_ACKNOWLEDGE);
            MessageProducer producer = session.createProducer(session.createQueue("selector-stream"));
            producer.setDeliveryMode(DeliveryMode.NON_PERSISTENT);
            for (int i = 0; i < count; i++) {
                TextMessage m = session.createTextMessage("m" + i);
                m.setIntProperty("n", i);
                m.setStringProperty("color", colors[i % 3]);
                producer.send(m);
            }
            for (Thread t : threads) {
                t.join(30_000);
            }
            assertThat(failures).isEmpty();
        }
        List<Integer> all = new ArrayList<>();
        for (int c = 0; c < selectors.length; c++) {
            List<Integer> mine = received.get(c);
            assertThat(mine).as("consumer %d gets its messages in order", c).isSorted();
            if (c < 2) {
                int color = c;
                assertThat(mine).as("consumer %d gets only its colour", c).allMatch(n -> n % 3 == color);
            }
            all.addAll(mine);
        }
        assertThat(all).as("every message once").hasSize(count).containsExactlyInAnyOrderElementsOf(
            IntStream.range(0, count).boxed().toList());
        assertThat(received.get(0)).as("the red consumer is not starved").isNotEmpty();
        assertThat(received.get(1)).isNotEmpty();
    }

    @Test
    void aSelectorConsumerWithoutPrefetchPullsItsMatches() throws Exception {
        try (Connection connection = connect(broker, "jms.prefetchPolicy.all=0")) {
            Session session = connection.createSession(false, Session.AUTO_ACKNOWLEDGE);
            Queue queue = session.createQueue("selector-pull");
            MessageProducer producer = session.createProducer(queue);
            for (int i = 0; i < COLORS.length; i++) {
                send(session, producer, i);
            }
            MessageConsumer red = session.createConsumer(queue, "color = 'red'");
            assertThat(receiveAll(red, 3)).containsExactly("m0", "m3", "m6");
            assertThat(red.receiveNoWait()).as("the drain ends with nothing more that matches").isNull();
            assertThat(session.createConsumer(queue, "color = 'green'").receiveNoWait()).isNotNull();
        }
    }

    @Test
    void aMalformedSelectorIsRefused() throws Exception {
        try (Connection connection = connect(broker, "")) {
            Session session = connection.createSession(false, Session.AUTO_ACKNOWLEDGE);
            Queue queue = session.createQueue("selector-bad");
            assertThatThrownBy(() -> session.createConsumer(queue, "color = = 'red'"))
                .as("Qpid JMS checks selectors itself first").isInstanceOf(InvalidSelectorException.class);
        }
        try (Connection connection = connect(broker, "jms.validateSelector=false")) {
            Session session = connection.createSession(false, Session.AUTO_ACKNOWLEDGE);
            Queue queue = session.createQueue("selector-bad");
            assertThatThrownBy(() -> session.createConsumer(queue, "color = = 'red'"))
                .as("the broker detaches with amqp:invalid-field, naming where").isInstanceOf(JMSException.class)
                .hasMessageContaining("invalid selector").hasMessageContaining("position 9: expected a value");
            Session again = connection.createSession(false, Session.AUTO_ACKNOWLEDGE);
            again.createConsumer(queue, "color = 'red'").close(); // the connection is fine
        }
    }

    @Test
    void noLocalLeavesOutTheSubscribersOwnConnection() throws Exception {
        try (Connection mine = connect(broker, ""); Connection other = connect(broker, "")) {
            Session mySession = mine.createSession(false, Session.AUTO_ACKNOWLEDGE);
            Session otherSession = other.createSession(false, Session.AUTO_ACKNOWLEDGE);
            Topic topic = mySession.createTopic("no-local.news");
            MessageConsumer noLocal = mySession.createConsumer(topic, null, true);
            MessageConsumer everything = otherSession.createConsumer(topic);
            MessageProducer myProducer = mySession.createProducer(topic);
            MessageProducer otherProducer = otherSession.createProducer(topic);
            myProducer.send(mySession.createTextMessage("mine"));
            otherProducer.send(otherSession.createTextMessage("theirs"));
            assertThat(receiveAll(noLocal, 1)).containsExactly("theirs");
            assertThat(noLocal.receive(200)).isNull();
            assertThat(receiveAll(everything, 2)).containsExactlyInAnyOrder("mine", "theirs");
        }
    }

    @Test
    void aTopicSubscriptionsSelectorFiltersAtItsQueue() throws Exception {
        try (Connection connection = connect(broker, "")) {
            Session session = connection.createSession(false, Session.AUTO_ACKNOWLEDGE);
            Topic topic = session.createTopic("selector.prices");
            MessageConsumer red = session.createConsumer(topic, "color = 'red'");
            MessageProducer producer = session.createProducer(topic);
            for (int i = 0; i < COLORS.length; i++) {
                send(session, producer, i);
            }
            assertThat(receiveAll(red, 3)).containsExactly("m0", "m3", "m6");
            assertThat(red.receive(200)).isNull();
        }
    }

    @Test
    void aDurableSubscriptionsSelectorSurvivesARestart(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir)
            throws Exception {
        String dataDir = "data-dir=" + dir.resolve("data");
        try (RunningBroker first = RunningBroker.start(dataDir);
                Connection connection = connect(first, "jms.clientID=selector-durable")) {
            Session session = connection.createSession(false, Session.AUTO_ACKNOWLEDGE);
            Topic topic = session.createTopic("selector.durable");
            session.createDurableConsumer(topic, "reds", "color = 'red'", false).close();
            MessageProducer producer = session.createProducer(topic);
            for (int i = 0; i < 3; i++) {
                send(session, producer, i); // red, blue, green
            }
        }
        try (RunningBroker second = RunningBroker.start(dataDir);
                Connection connection = connect(second, "jms.clientID=selector-durable")) {
            Session session = connection.createSession(false, Session.AUTO_ACKNOWLEDGE);
            Topic topic = session.createTopic("selector.durable");
            MessageProducer producer = session.createProducer(topic);
            for (int i = 3; i < 6; i++) {
                send(session, producer, i); // red, none, blue: published before the subscriber is back
            }
            MessageConsumer reds = session.createDurableConsumer(topic, "reds", "color = 'red'", false);
            assertThat(receiveAll(reds, 2)).containsExactly("m0", "m3");
            assertThat(reds.receive(200)).isNull();
            reds.close();
            session.unsubscribe("reds");
        }
    }

    @Test
    void changingADurableSubscriptionsSelectorReplacesIt() throws Exception {
        try (Connection connection = connect(broker, "jms.clientID=selector-change")) {
            Session session = connection.createSession(false, Session.AUTO_ACKNOWLEDGE);
            Topic topic = session.createTopic("selector.change");
            MessageConsumer reds = session.createDurableConsumer(topic, "watch", "color = 'red'", false);
            MessageProducer producer = session.createProducer(topic);
            send(session, producer, 0); // red
            send(session, producer, 1); // blue
            reds.close();
            send(session, producer, 3); // red, kept for the subscription while it is away
            MessageConsumer blues = session.createDurableConsumer(topic, "watch", "color = 'blue'", false);
            assertThat(blues.receive(200)).as("a new subscription: the old one's red message went with it").isNull();
            send(session, producer, 5); // blue
            assertThat(receiveAll(blues, 1)).containsExactly("m5");
            blues.close();
            session.unsubscribe("watch");
        }
    }

    @Test
    void aSelectorConsumerSeesMessagesRecoveredAfterARestart(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir)
            throws Exception {
        String dataDir = "data-dir=" + dir.resolve("data");
        try (RunningBroker first = RunningBroker.start(dataDir); Connection connection = connect(first, "")) {
            Session session = connection.createSession(false, Session.AUTO_ACKNOWLEDGE);
            MessageProducer producer = session.createProducer(session.createQueue("selector-recovered"));
            for (int i = 0; i < COLORS.length; i++) {
                send(session, producer, i);
            }
        }
        try (RunningBroker second = RunningBroker.start(dataDir); Connection connection = connect(second, "")) {
            Session session = connection.createSession(false, Session.AUTO_ACKNOWLEDGE);
            Queue queue = session.createQueue("selector-recovered");
            MessageConsumer red = session.createConsumer(queue, "color = 'red'");
            assertThat(receiveAll(red, 3)).as("recovered messages are read back from the log to be looked at")
                .containsExactly("m0", "m3", "m6");
            assertThat(red.receive(200)).isNull();
            red.close();
            assertThat(receiveAll(session.createConsumer(queue), 5)).containsExactly("m1", "m2", "m4", "m5", "m7");
        }
    }

    @Test
    void aMessagePublishedOverAmqp091IsMatchedByItsHeaders() throws Exception {
        com.rabbitmq.client.ConnectionFactory factory = new com.rabbitmq.client.ConnectionFactory();
        factory.setPort(broker.port());
        try (Connection connection = connect(broker, "");
                com.rabbitmq.client.Connection amqp091 = factory.newConnection()) {
            Session session = connection.createSession(false, Session.AUTO_ACKNOWLEDGE);
            Queue queue = session.createQueue("selector-091");
            session.createConsumer(queue).close(); // declared
            com.rabbitmq.client.Channel channel = amqp091.createChannel();
            for (String region : new String[] {"us", "eu"}) {
                com.rabbitmq.client.AMQP.BasicProperties properties = new com.rabbitmq.client.AMQP.BasicProperties
                    .Builder().headers(Map.of("region", region, "count", 3)).type("order").priority(7).build();
                channel.basicPublish("", "selector-091", properties, region.getBytes(StandardCharsets.UTF_8));
            }
            MessageConsumer eu = session.createConsumer(queue,
                "region = 'eu' AND count BETWEEN 1 AND 5 AND JMSType = 'order' AND JMSPriority = 7");
            Message m = eu.receive(5000);
            assertThat(m).isNotNull();
            assertThat(m.getStringProperty("region")).isEqualTo("eu");
            assertThat(eu.receive(200)).isNull();
        }
    }
}
