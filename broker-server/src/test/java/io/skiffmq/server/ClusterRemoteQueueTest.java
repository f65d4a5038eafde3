package io.skiffmq.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.Delivery;
import com.rabbitmq.client.GetResponse;
import jakarta.jms.BytesMessage;
import jakarta.jms.DeliveryMode;
import jakarta.jms.JMSException;
import jakarta.jms.MessageConsumer;
import jakarta.jms.MessageProducer;
import jakarta.jms.Session;
import jakarta.jms.TextMessage;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Date;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.qpid.jms.JmsConnectionFactory;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.amqp.rabbit.connection.CachingConnectionFactory;
import org.springframework.amqp.rabbit.core.RabbitTemplate;

/**
 * A queue homed on one node of a three-node cluster (child JVMs), used from the others through the node-to-node
 * AMQP 1.0 links (docs/cluster.md, "Messages between nodes"), with real clients: published to with confirms on one
 * node, consumed on another with acknowledgements, its properties and body exactly as sent; what a closed channel
 * did not acknowledge goes back to the home node; the home node killed gives RabbitMQ's errors and its durable
 * messages come back with it; Spring AMQP and Qpid JMS on a queue homed elsewhere. One cluster for the class.
 */
@OneAtATime
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ClusterRemoteQueueTest {
    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final int HOME = 2;

    @TempDir
    static Path dir;

    private static ChildCluster cluster;

    @BeforeAll
    static void startCluster() throws Exception {
        // the default append timeout: this class tests no lost majority, and a loaded machine may elect again
        cluster = new ChildCluster(dir, "r", 3, 3, 10_000);
        cluster.startMembers();
    }

    @AfterAll
    static void stopCluster() throws Exception {
        cluster.close();
    }

    private static Connection connect(int i) {
        return cluster.connect(i, WAIT);
    }

    /** Declares a durable queue on the home node and waits until node {@code i} can consume from it. */
    private static void declareOnHome(String queue, int... others) throws Exception {
        declare(queue, Map.of());
        for (int i : others) {
            try (Connection c = connect(i)) {
                await().atMost(WAIT).ignoreExceptions().until(() -> {
                    Channel channel = c.createChannel();
                    channel.basicCancel(channel.basicConsume(queue, false, (t, m) -> { }, t -> { }));
                    channel.close();
                    return true;
                });
            }
        }
    }

    /** Declares a durable queue on the home node, again while a metadata leader is being elected. */
    private static void declare(String queue, Map<String, Object> arguments) {
        await().atMost(WAIT).ignoreExceptions().until(() -> {
            try (Connection home = connect(HOME)) {
                home.createChannel().queueDeclare(queue, true, false, false, arguments);
                return true;
            }
        });
    }

    private static AMQP.BasicProperties richProperties(int i) {
        Map<String, Object> headers = new LinkedHashMap<>();
        headers.put("n", i);
        headers.put("s", "text");
        headers.put("l", 1L << 40);
        headers.put("b", true);
        headers.put("nested", Map.of("k", "v"));
        headers.put("list", List.of(1, "two"));
        return new AMQP.BasicProperties.Builder().contentType("application/x-test").contentEncoding("gzip")
            .headers(headers).deliveryMode(2).priority(3).correlationId("corr-" + i).replyTo("replies")
            .expiration("600000").messageId("id-" + i).timestamp(new Date(1_700_000_000_000L)).type("kind")
            .userId("guest").appId("app").build();
    }

    @Test
    @Order(1)
    void publishedWithConfirmsOnOneNodeConsumedOnAnotherExactlyAndWhatIsNotAckedGoesBack() throws Exception {
        String queue = "remote-091";
        declareOnHome(queue, 0, 1);
        int count = 200;
        try (Connection a = connect(0)) {
            Channel publisher = a.createChannel();
            publisher.confirmSelect();
            List<Integer> returned = new ArrayList<>();
            publisher.addReturnListener(r -> returned.add(r.getReplyCode()));
            for (int i = 0; i < count; i++) {
                byte[] body = ("message " + i + " \u00e9\u0000\u00ff").getBytes(StandardCharsets.UTF_8);
                publisher.basicPublish("", queue, true, richProperties(i), body);
            }
            publisher.waitForConfirmsOrDie(WAIT.toMillis());
            assertThat(returned).as("a message that reaches a queue on another node is routed").isEmpty();
        }
        try (Connection home = connect(HOME); Connection b = connect(1)) {
            assertThat(home.createChannel().queueDeclarePassive(queue).getMessageCount()).isEqualTo(count);
            // on another node, a passive declare answers the home node's counts
            assertThat(b.createChannel().queueDeclarePassive(queue).getMessageCount()).isEqualTo(count);
        }

        try (Connection b = connect(1)) {
            // a consumer that takes ten and closes its channel without acknowledging: they go back, in order
            Channel careless = b.createChannel();
            careless.basicQos(10);
            BlockingQueue<Delivery> held = new LinkedBlockingQueue<>();
            careless.basicConsume(queue, false, (tag, m) -> held.add(m), tag -> { });
            await().atMost(WAIT).until(() -> held.size() == 10);
            assertThat(held.poll(1, TimeUnit.SECONDS)).isNotNull();
            careless.close();

            Channel consumer = b.createChannel();
            consumer.basicQos(20);
            BlockingQueue<Delivery> received = new LinkedBlockingQueue<>();
            consumer.basicConsume(queue, false, (tag, m) -> {
                received.add(m);
                consumer.basicAck(m.getEnvelope().getDeliveryTag(), false);
            }, tag -> { });
            List<Delivery> all = new ArrayList<>();
            for (int i = 0; i < count; i++) {
                Delivery d = received.poll(WAIT.toSeconds(), TimeUnit.SECONDS);
                assertThat(d).as("delivery " + i).isNotNull();
                all.add(d);
            }
            for (int i = 0; i < count; i++) {
                Delivery d = all.get(i);
                assertThat(new String(d.getBody(), StandardCharsets.UTF_8)).isEqualTo("message " + i
                    + " \u00e9\u0000\u00ff");
                // as the client prints them: a header's long string as text, the body size left out
                assertThat(d.getProperties().toString()).as("properties of " + i)
                    .isEqualTo(richProperties(i).toString());
                assertThat(d.getEnvelope().isRedeliver()).as("redelivered " + i).isEqualTo(i < 10);
                assertThat(d.getEnvelope().getExchange()).isEmpty();
                assertThat(d.getEnvelope().getRoutingKey()).isEqualTo(queue);
            }
            assertThat(received.poll(200, TimeUnit.MILLISECONDS)).isNull();
        }
        try (Connection home = connect(HOME)) {
            Channel channel = home.createChannel();
            await().atMost(WAIT).until(() -> channel.queueDeclarePassive(queue).getMessageCount() == 0);
        }
    }

    /**
     * Quorum queues declared one after another through every node. A declare-ok's counts come from the queue group's
     * leader, and that node, when it is not the metadata leader, may not have applied the declare yet (it learns of
     * the commit with the leader's next heartbeat): it catches up before answering, instead of a 404 for a queue just
     * declared. Before the fix this failed whenever the group's leader was not the metadata leader.
     */
    @Test
    @Order(2)
    void quorumQueuesDeclaredOneAfterAnotherThroughEveryNodeAreEachDeclared() throws Exception {
        for (int node = 0; node < 3; node++) {
            try (Connection connection = connect(node)) {
                Channel channel = connection.createChannel();
                for (int i = 0; i < 5; i++) {
                    assertThat(channel.queueDeclare("burst-" + node + "-" + i, true, false, false,
                        Map.of("x-queue-type", "quorum")).getMessageCount()).isZero();
                }
            }
        }
    }

    /**
     * An {@code x-local-random} exchange picks among the queues on the publisher's node, as RabbitMQ's does: a message
     * published where no bound queue is local is unroutable there, though one on another node is bound.
     */
    @Test
    @Order(2)
    void anXLocalRandomExchangePicksOnlyAmongThePublishersNodesQueues() throws Exception {
        declareOnHome("local-random-home", 0);
        try (Connection home = connect(HOME)) {
            Channel channel = home.createChannel();
            channel.exchangeDeclare("local-random", "x-local-random", true);
            channel.queueBind("local-random-home", "local-random", "");
        }
        try (Connection a = connect(0)) {
            Channel channel = a.createChannel();
            AtomicInteger returned = new AtomicInteger();
            channel.addReturnListener(r -> returned.incrementAndGet());
            channel.confirmSelect();
            // once node 0 has applied the binding, every publish there comes back
            await().atMost(WAIT).ignoreExceptions().until(() -> !cluster.api(0)
                .get("/api/exchanges/%2F/local-random/bindings/source").list().isEmpty());
            for (int i = 0; i < 20; i++) {
                channel.basicPublish("local-random", "", true, null, ("r" + i).getBytes(StandardCharsets.UTF_8));
            }
            channel.waitForConfirmsOrDie(WAIT.toMillis());
            assertThat(returned.get()).isEqualTo(20);
            // a queue of node 0's own bound too: each message goes there, none to the home node's
            channel.queueDeclare("local-random-a", true, false, false, Map.of());
            channel.queueBind("local-random-a", "local-random", "");
            for (int i = 0; i < 20; i++) {
                channel.basicPublish("local-random", "", true, null, ("l" + i).getBytes(StandardCharsets.UTF_8));
            }
            channel.waitForConfirmsOrDie(WAIT.toMillis());
            assertThat(returned.get()).isEqualTo(20);
            await().atMost(WAIT).until(() -> channel.messageCount("local-random-a") == 20);
            assertThat(channel.queueDeclarePassive("local-random-home").getMessageCount()).isZero();
        }
    }

    @Test
    @Order(2)
    void aQueueOnAnotherNodeIsPurgedAndCountedFromHere() throws Exception {
        String queue = "remote-purged";
        declareOnHome(queue, 0);
        try (Connection a = connect(0)) {
            Channel channel = a.createChannel();
            channel.confirmSelect();
            for (int i = 0; i < 3; i++) {
                channel.basicPublish("", queue, null, ("p" + i).getBytes(StandardCharsets.UTF_8));
            }
            channel.waitForConfirmsOrDie(WAIT.toMillis());
            assertThat(channel.queueDeclarePassive(queue).getMessageCount()).isEqualTo(3);
            assertThat(channel.queuePurge(queue).getMessageCount()).isEqualTo(3);
            assertThat(channel.queueDeclarePassive(queue).getMessageCount()).isZero();
        }
        try (Connection home = connect(HOME)) {
            assertThat(home.createChannel().queueDeclarePassive(queue).getMessageCount()).isZero();
        }
    }

    /**
     * The HTTP API on another node lists a queue with its home node's counts, pulled from there every few seconds
     * (docs/cluster.md), not asked per listing.
     */
    @Test
    @Order(2)
    void theHttpApiOnAnotherNodeListsTheHomeNodesCounts() throws Exception {
        String queue = "remote-counted";
        declareOnHome(queue, 0);
        publishOnHome(queue, 5);
        try (Connection home = connect(HOME)) {
            Channel consumer = home.createChannel();
            consumer.basicQos(2);
            BlockingQueue<Delivery> held = new LinkedBlockingQueue<>();
            consumer.basicConsume(queue, false, (tag, m) -> held.add(m), tag -> { });
            await().atMost(WAIT).until(() -> held.size() == 2);

            HttpApiClient api = cluster.api(0);
            Map<String, Object> expected = Map.of("node", cluster.name(HOME), "messages", 5, "messages_ready", 3,
                "messages_unacknowledged", 2, "consumers", 1);
            await().atMost(WAIT).until(() -> api.get("/api/queues/%2F").list().stream()
                .map(q -> (Map<?, ?>) q).filter(q -> queue.equals(q.get("name"))).findFirst()
                .filter(q -> q.entrySet().containsAll(expected.entrySet())).isPresent());
            assertThat(api.get("/api/queues/%2F/" + queue).map()).containsAllEntriesOf(expected);
        }
    }

    private static void publishOnHome(String queue, int count) throws Exception {
        try (Connection home = connect(HOME)) {
            Channel channel = home.createChannel();
            channel.confirmSelect();
            for (int i = 0; i < count; i++) {
                channel.basicPublish("", queue, null, ("m" + i).getBytes(StandardCharsets.UTF_8));
            }
            channel.waitForConfirmsOrDie(WAIT.toMillis());
        }
    }

    /** A consumer's x-priority reaches the home node: the higher one gets every message while it has room. */
    @Test
    @Order(2)
    void aConsumerPriorityOnAnotherNodeIsTheHomeNodes() throws Exception {
        String queue = "remote-priority";
        declareOnHome(queue, 1);
        try (Connection b = connect(1)) {
            Channel low = b.createChannel();
            Channel high = b.createChannel();
            low.basicQos(100);
            high.basicQos(100);
            AtomicInteger toLow = new AtomicInteger();
            BlockingQueue<Delivery> toHigh = new LinkedBlockingQueue<>();
            low.basicConsume(queue, false, (tag, m) -> toLow.incrementAndGet(), tag -> { });
            high.basicConsume(queue, false, Map.of("x-priority", 10), (tag, m) -> toHigh.add(m), tag -> { });
            publishOnHome(queue, 20);
            await().atMost(WAIT).until(() -> toHigh.size() + toLow.get() == 20);
            assertThat(toLow.get()).as("messages to the consumer of lower priority").isZero();
        }
    }

    /**
     * An exclusive consumer on another node has the queue exclusively on its home node: consumers on any node are
     * then refused as RabbitMQ refuses them (403 in exclusive use), and it gets the messages.
     */
    @Test
    @Order(2)
    void anExclusiveConsumerOnAnotherNodeHasTheQueueOnItsHome() throws Exception {
        String queue = "remote-exclusive";
        declareOnHome(queue, 0, 1);
        String inUse = "reply-code=403, reply-text=ACCESS_REFUSED - queue '" + queue
            + "' in vhost '/' in exclusive use";
        try (Connection b = connect(1); Connection a = connect(0); Connection home = connect(HOME)) {
            BlockingQueue<Delivery> received = new LinkedBlockingQueue<>();
            b.createChannel().basicConsume(queue, true, "", false, true, Map.of(), (tag, m) -> received.add(m),
                tag -> { });
            Channel local = home.createChannel();
            assertThatThrownBy(() -> local.basicConsume(queue, true, (t, m) -> { }, t -> { }))
                .isInstanceOf(IOException.class).cause().hasMessageContaining(inUse);
            Channel remote = a.createChannel();
            assertThatThrownBy(() -> remote.basicConsume(queue, true, (t, m) -> { }, t -> { }))
                .isInstanceOf(IOException.class).cause().hasMessageContaining(inUse);
            publishOnHome(queue, 3);
            for (int i = 0; i < 3; i++) {
                assertThat(received.poll(WAIT.toSeconds(), TimeUnit.SECONDS)).as("message " + i).isNotNull();
            }
        }
    }

    /** A channel's global basic.qos bounds what its consumer of a queue on another node holds unacknowledged. */
    @Test
    @Order(2)
    void aGlobalQosBoundsAConsumerOnAnotherNode() throws Exception {
        String queue = "remote-global-qos";
        declareOnHome(queue, 1);
        publishOnHome(queue, 10);
        try (Connection b = connect(1)) {
            Channel channel = b.createChannel();
            channel.basicQos(2, true);
            BlockingQueue<Delivery> held = new LinkedBlockingQueue<>();
            channel.basicConsume(queue, false, (tag, m) -> held.add(m), tag -> { });
            Delivery first = held.poll(WAIT.toSeconds(), TimeUnit.SECONDS);
            assertThat(held.poll(WAIT.toSeconds(), TimeUnit.SECONDS)).isNotNull();
            assertThat(held.poll(500, TimeUnit.MILLISECONDS)).as("a third before an ack").isNull();
            channel.basicAck(first.getEnvelope().getDeliveryTag(), false);
            assertThat(held.poll(WAIT.toSeconds(), TimeUnit.SECONDS)).as("a third after an ack").isNotNull();
            assertThat(held.poll(500, TimeUnit.MILLISECONDS)).as("a fourth before another ack").isNull();
        }
    }

    @Test
    @Order(2)
    void aQuorumQueueOnAnotherNodeRedeliversWithItsDeliveryCount() throws Exception {
        String queue = "remote-quorum";
        declare(queue, Map.of("x-queue-type", "quorum"));
        try (Connection a = connect(0)) {
            Channel channel = a.createChannel();
            channel.confirmSelect();
            await().atMost(WAIT).ignoreExceptions().until(() -> {
                channel.basicPublish("", queue, true, null, "q".getBytes(StandardCharsets.UTF_8));
                return channel.waitForConfirms(WAIT.toMillis());
            });
        }
        try (Connection b = connect(1)) {
            Channel channel = b.createChannel();
            GetResponse first = await().atMost(WAIT).ignoreExceptions()
                .until(() -> channel.basicGet(queue, false), r -> r != null);
            assertThat(first.getEnvelope().isRedeliver()).isFalse();
            channel.basicNack(first.getEnvelope().getDeliveryTag(), false, true);
            GetResponse again = await().atMost(WAIT).until(() -> channel.basicGet(queue, false), r -> r != null);
            assertThat(new String(again.getBody(), StandardCharsets.UTF_8)).isEqualTo("q");
            assertThat(again.getEnvelope().isRedeliver()).isTrue();
            assertThat(again.getProps().getHeaders()).containsEntry("x-delivery-count", 1L);
            channel.basicAck(again.getEnvelope().getDeliveryTag(), false);
            assertThat(channel.queueDeclarePassive(queue).getMessageCount()).isZero();
        }
    }

    private static com.rabbitmq.client.amqp.Environment amqp10(int i) {
        return new com.rabbitmq.client.amqp.impl.AmqpEnvironmentBuilder().connectionSettings().host("127.0.0.1")
            .port(cluster.nodes[i].port).username("guest").password("guest").environmentBuilder().build();
    }

    @Test
    @Order(3)
    void anAmqp10ClientPublishesOnOneNodeAndConsumesOnAnotherWithSettlement() throws Exception {
        String queue = "remote-10";
        declareOnHome(queue, 0, 1);
        int count = 100;
        try (com.rabbitmq.client.amqp.Environment a = amqp10(0);
                com.rabbitmq.client.amqp.Connection connection = a.connectionBuilder().build();
                com.rabbitmq.client.amqp.Publisher publisher = connection.publisherBuilder().queue(queue).build()) {
            BlockingQueue<com.rabbitmq.client.amqp.Publisher.Status> outcomes = new LinkedBlockingQueue<>();
            for (int i = 0; i < count; i++) {
                publisher.publish(publisher.message(("amqp " + i).getBytes(StandardCharsets.UTF_8))
                    .messageId("m-" + i).correlationId("c-" + i).subject("subject").contentType("text/plain")
                    .property("n", i).property("s", "value").durable(true), c -> outcomes.add(c.status()));
            }
            for (int i = 0; i < count; i++) {
                assertThat(outcomes.poll(WAIT.toSeconds(), TimeUnit.SECONDS)).as("outcome " + i)
                    .isEqualTo(com.rabbitmq.client.amqp.Publisher.Status.ACCEPTED);
            }
        }
        try (com.rabbitmq.client.amqp.Environment b = amqp10(1);
                com.rabbitmq.client.amqp.Connection connection = b.connectionBuilder().build()) {
            // five received and never settled, then the consumer closes: they go back to the home node
            BlockingQueue<com.rabbitmq.client.amqp.Message> held = new LinkedBlockingQueue<>();
            com.rabbitmq.client.amqp.Consumer careless = connection.consumerBuilder().queue(queue).initialCredits(5)
                .messageHandler((context, message) -> held.add(message)).build();
            await().atMost(WAIT).until(() -> held.size() == 5);
            careless.close();

            BlockingQueue<com.rabbitmq.client.amqp.Message> received = new LinkedBlockingQueue<>();
            connection.consumerBuilder().queue(queue).initialCredits(10).messageHandler((context, message) -> {
                received.add(message);
                context.accept();
            }).build();
            for (int i = 0; i < count; i++) {
                com.rabbitmq.client.amqp.Message m = received.poll(WAIT.toSeconds(), TimeUnit.SECONDS);
                assertThat(m).as("message " + i).isNotNull();
                assertThat(new String(m.body(), StandardCharsets.UTF_8)).isEqualTo("amqp " + i);
                assertThat(m.messageId()).isEqualTo("m-" + i);
                assertThat(m.correlationId()).isEqualTo("c-" + i);
                assertThat(m.subject()).isEqualTo("subject");
                assertThat(m.contentType()).isEqualTo("text/plain");
                assertThat(m.property("n")).isEqualTo(i);
                assertThat(m.property("s")).isEqualTo("value");
            }
            assertThat(received.poll(200, TimeUnit.MILLISECONDS)).isNull();
        }
        try (Connection home = connect(HOME)) {
            Channel channel = home.createChannel();
            await().atMost(WAIT).until(() -> channel.queueDeclarePassive(queue).getMessageCount() == 0);
        }
    }

    @Test
    @Order(3)
    void theAmqp10ManagementNodeOnAnotherNodeShowsPurgesAndDeletesAQueueHomedElsewhere() throws Exception {
        String queue = "remote-managed";
        declareOnHome(queue, 0);
        publishOnHome(queue, 4);
        try (com.rabbitmq.client.amqp.Environment a = amqp10(0);
                com.rabbitmq.client.amqp.Connection connection = a.connectionBuilder().build()) {
            com.rabbitmq.client.amqp.Management management = connection.management();
            com.rabbitmq.client.amqp.Management.QueueInfo info = management.queueInfo(queue);
            assertThat(info.leader()).as("where it lives").isEqualTo(cluster.name(HOME));
            assertThat(info.members()).containsExactly(cluster.name(HOME));
            assertThat(info.messageCount()).as("its home node's count").isEqualTo(4);
            assertThat(management.queue().name(queue).declare().leader()).as("declared again from here")
                .isEqualTo(cluster.name(HOME));
            assertThat(management.queuePurge(queue).messageCount()).isEqualTo(4);
            assertThat(management.queueInfo(queue).messageCount()).isZero();
            management.queueDelete(queue);

            // a replicated quorum queue: its leader, then its other members, as the client places connections by
            management.queue().name(queue + "-qq").quorum().queue().declare();
            com.rabbitmq.client.amqp.Management.QueueInfo replicated = management.queueInfo(queue + "-qq");
            assertThat(replicated.members()).containsExactlyInAnyOrder(cluster.name(0), cluster.name(1),
                cluster.name(2));
            assertThat(replicated.leader()).isEqualTo(replicated.members().get(0))
                .isEqualTo(cluster.api(1).get("/api/queues/%2F/" + queue + "-qq").map().get("leader"));
            management.queueDelete(queue + "-qq");
        }
        for (int i = 0; i < 3; i++) {
            int node = i;
            await().atMost(WAIT).until(() -> cluster.api(node).get("/api/queues/%2F/" + queue).status() == 404
                && cluster.api(node).get("/api/queues/%2F/" + queue + "-qq").status() == 404);
        }
    }

    @Test
    @Order(3)
    void springAmqpAndQpidJmsUseAQueueHomedOnAnotherNode() throws Exception {
        String queue = "remote-spring-jms";
        declareOnHome(queue, 0, 1);
        int count = 50;
        CachingConnectionFactory spring = new CachingConnectionFactory("127.0.0.1", cluster.nodes[0].port);
        spring.setPublisherConfirmType(CachingConnectionFactory.ConfirmType.SIMPLE);
        JmsConnectionFactory jms = new JmsConnectionFactory("guest", "guest",
            "amqp://127.0.0.1:" + cluster.nodes[1].port);
        try {
            RabbitTemplate template = new RabbitTemplate(spring);
            template.invoke(operations -> {
                for (int i = 0; i < count; i++) {
                    operations.convertAndSend("", queue, "spring " + i, m -> {
                        m.getMessageProperties().setHeader("origin", "spring");
                        return m;
                    });
                }
                operations.waitForConfirmsOrDie(WAIT.toMillis());
                return null;
            });
            try (jakarta.jms.Connection connection = jms.createConnection()) {
                connection.start();
                Session session = connection.createSession(false, Session.CLIENT_ACKNOWLEDGE);
                MessageConsumer consumer = session.createConsumer(session.createQueue(queue));
                for (int i = 0; i < count; i++) {
                    jakarta.jms.Message m = consumer.receive(WAIT.toMillis());
                    assertThat(m).as("message " + i).isNotNull();
                    assertThat(text(m)).isEqualTo("spring " + i);
                    assertThat(m.getStringProperty("origin")).isEqualTo("spring");
                    m.acknowledge();
                }
                assertThat(consumer.receive(200)).isNull();

                // and back: a JMS producer on node 1, Spring getting on node 0, in order
                MessageProducer producer = session.createProducer(session.createQueue(queue));
                producer.setDeliveryMode(DeliveryMode.PERSISTENT);
                consumer.close();
                for (int i = 0; i < count; i++) {
                    TextMessage m = session.createTextMessage("jms " + i);
                    m.setIntProperty("n", i);
                    producer.send(m);
                }
            }
            for (int i = 0; i < count; i++) {
                org.springframework.amqp.core.Message m = template.receive(queue, WAIT.toMillis());
                assertThat(m).as("message " + i).isNotNull();
                assertThat(((Number) m.getMessageProperties().getHeader("n")).intValue()).isEqualTo(i);
            }
            assertThat(template.receive(queue)).isNull();
        } finally {
            spring.destroy();
        }
    }

    /** A JMS message's text: a text message's, or a bytes message's as UTF-8. */
    private static String text(jakarta.jms.Message m) throws JMSException {
        if (m instanceof TextMessage t) {
            return t.getText();
        }
        BytesMessage bytes = (BytesMessage) m;
        byte[] body = new byte[(int) bytes.getBodyLength()];
        bytes.readBytes(body);
        return new String(body, StandardCharsets.UTF_8);
    }

    @Test
    @Order(4)
    void theHomeNodeKilledGivesRabbitMqsErrorsAndItsDurableMessagesComeBackWithIt() throws Exception {
        String queue = "remote-killed";
        declareOnHome(queue, 0, 1);
        try (Connection a = connect(0); RawClient amqp10 = RawClient.openSession(cluster.nodes[0].port)) {
            Channel publisher = a.createChannel();
            publisher.confirmSelect();
            for (int i = 0; i < 10; i++) {
                publisher.basicPublish("", queue, true, richProperties(i), ("kept " + i).getBytes(StandardCharsets.UTF_8));
            }
            publisher.waitForConfirmsOrDie(WAIT.toMillis());
            amqp10.attachSender(0, "/queues/" + queue);

            cluster.nodes[HOME].kill();
            // confirms: a message for a queue whose node is down is nacked
            await().atMost(WAIT).until(() -> {
                publisher.basicPublish("", queue, true, richProperties(99), "lost".getBytes(StandardCharsets.UTF_8));
                return !publisher.waitForConfirms(WAIT.toMillis());
            });
            // an AMQP 1.0 publisher's message is rejected as RabbitMQ 4 rejects it for a classic queue that is down
            amqp10.transfer(0, 0, Messages.data("lost", null), false);
            org.apache.qpid.proton.amqp.transport.Disposition disposition = null;
            while (disposition == null) {
                if (amqp10.read().body() instanceof org.apache.qpid.proton.amqp.transport.Disposition d) {
                    disposition = d;
                }
            }
            assertThat(disposition.getState()).isInstanceOf(org.apache.qpid.proton.amqp.messaging.Rejected.class);
            org.apache.qpid.proton.amqp.transport.ErrorCondition error =
                ((org.apache.qpid.proton.amqp.messaging.Rejected) disposition.getState()).getError();
            assertThat(error.getCondition().toString()).isEqualTo("amqp:precondition-failed");
            assertThat(error.getDescription()).isEqualTo("queue '" + queue + "' is unavailable");
            assertThat(error.getInfo()).containsEntry(org.apache.qpid.proton.amqp.Symbol.valueOf("queue"), queue)
                .containsEntry(org.apache.qpid.proton.amqp.Symbol.valueOf("reason"),
                    org.apache.qpid.proton.amqp.Symbol.valueOf("unavailable"));
            Channel consumer = a.createChannel();
            assertThatThrownBy(() -> consumer.basicConsume(queue, false, (t, m) -> { }, t -> { }))
                .isInstanceOf(IOException.class).cause().hasMessageContaining("reply-code=404, reply-text=NOT_FOUND"
                    + " - home node '" + cluster.name(HOME) + "' of durable queue '" + queue + "' in vhost '/' is down"
                    + " or inaccessible");
        }
        // over AMQP 1.0: the attach is refused with amqp:not-found, in the same words
        try (com.rabbitmq.client.amqp.Environment a = amqp10(0);
                com.rabbitmq.client.amqp.Connection connection = a.connectionBuilder().build()) {
            assertThatThrownBy(() -> connection.consumerBuilder().queue(queue).messageHandler((c, m) -> { }).build())
                .isInstanceOf(com.rabbitmq.client.amqp.AmqpException.AmqpEntityDoesNotExistException.class)
                .hasMessageContaining("home node '" + cluster.name(HOME) + "' of durable queue '" + queue + "'");
        }

        cluster.start(HOME);
        try (Connection b = connect(1)) {
            Channel channel = b.createChannel();
            GetResponse first = await().atMost(WAIT).ignoreExceptions()
                .until(() -> b.createChannel().basicGet(queue, false), r -> r != null);
            assertThat(new String(first.getBody(), StandardCharsets.UTF_8)).isEqualTo("kept 0");
            assertThat(first.getProps().toString()).isEqualTo(richProperties(0).toString());
            BlockingQueue<Delivery> received = new LinkedBlockingQueue<>();
            channel.basicConsume(queue, true, (tag, m) -> received.add(m), tag -> { });
            for (int i = 1; i < 10; i++) {
                Delivery d = received.poll(WAIT.toSeconds(), TimeUnit.SECONDS);
                assertThat(d).as("message " + i).isNotNull();
                assertThat(new String(d.getBody(), StandardCharsets.UTF_8)).isEqualTo("kept " + i);
            }
        }
    }

    @Test
    @Order(5)
    void theNodePortTakesNoClientWithoutTheSecret() throws Exception {
        int nodePort = cluster.clusterPort(0) + 1;
        byte[] amqpHeader = {'A', 'M', 'Q', 'P', 0, 1, 0, 0};
        // plain AMQP: no TLS, no AMQP
        try (java.net.Socket socket = new java.net.Socket("127.0.0.1", nodePort)) {
            socket.setSoTimeout((int) WAIT.toMillis());
            socket.getOutputStream().write(amqpHeader);
            byte[] answer = socket.getInputStream().readNBytes(8);
            assertThat(new String(answer, StandardCharsets.US_ASCII)).doesNotStartWith("AMQP");
        }
        // TLS that trusts anything, with no certificate carrying the secret: the node ends the handshake
        javax.net.ssl.SSLContext tls = javax.net.ssl.SSLContext.getInstance("TLSv1.3");
        tls.init(null, new javax.net.ssl.TrustManager[] {new javax.net.ssl.X509TrustManager() {
            @Override
            public void checkClientTrusted(java.security.cert.X509Certificate[] chain, String authType) {
            }

            @Override
            public void checkServerTrusted(java.security.cert.X509Certificate[] chain, String authType) {
            }

            @Override
            public java.security.cert.X509Certificate[] getAcceptedIssuers() {
                return new java.security.cert.X509Certificate[0];
            }
        }}, null);
        try (javax.net.ssl.SSLSocket socket = (javax.net.ssl.SSLSocket) tls.getSocketFactory()
                .createSocket("127.0.0.1", nodePort)) {
            socket.setSoTimeout((int) WAIT.toMillis());
            int read;
            try {
                socket.startHandshake();
                socket.getOutputStream().write(amqpHeader);
                socket.getOutputStream().flush();
                read = socket.getInputStream().read();
            } catch (IOException e) {
                read = -1;
            }
            assertThat(read).as("a byte of AMQP from the node port").isEqualTo(-1);
        }
        // nor can a user of the nodes' own name be made, to log in with a password
        assertThat(cluster.api(0).put("/api/users/skiffmq-node%20(cluster%20peer)", Map.of("password", "x",
            "tags", "")).status()).isEqualTo(400);
    }
}
