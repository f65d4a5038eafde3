package io.skiffmq.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.Delivery;
import com.rabbitmq.client.amqp.Consumer;
import com.rabbitmq.client.amqp.Environment;
import com.rabbitmq.client.amqp.Management;
import com.rabbitmq.client.amqp.Publisher;
import com.rabbitmq.client.amqp.impl.AmqpEnvironmentBuilder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.qpid.jms.JmsConnectionFactory;
import org.apache.qpid.jms.message.JmsMessageSupport;
import org.awaitility.core.ConditionTimeoutException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.amqp.core.BindingBuilder;
import org.springframework.amqp.core.DirectExchange;
import org.springframework.amqp.core.QueueBuilder;
import org.springframework.amqp.rabbit.connection.CachingConnectionFactory;
import org.springframework.amqp.rabbit.core.RabbitAdmin;
import org.springframework.amqp.rabbit.core.RabbitTemplate;

/**
 * Quorum queues replicated across a three-node cluster (child JVMs; docs/quorum-queues.md, "How it is replicated"),
 * with the RabbitMQ Java client: the members and the leader in the HTTP API; published with confirms on one node,
 * consumed in order on another, the leader on the third; the leader's node killed with kill -9 while a publisher
 * goes on, and every confirmed message consumed afterwards from the new leader; killed members started again from
 * their snapshots, one of them leading with every confirmed message. With Spring AMQP, Qpid JMS and the RabbitMQ
 * AMQP 1.0 client, publishers and consumers on the nodes that do not lead: a Spring application's queue consumed
 * with JMS, single active consumer priority takeover, at-least-once dead-lettering to a target declared later, the
 * delivery limit. One cluster for the class.
 */
@OneAtATime
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ClusterQuorumQueueTest {
    private static final Duration WAIT = Duration.ofSeconds(60);
    /** How long a consumer that must get nothing is watched. */
    private static final Duration QUIET = Duration.ofMillis(500);
    private static final Map<String, Object> QUORUM = Map.of("x-queue-type", "quorum");

    @TempDir
    static Path dir;

    private static ChildCluster cluster;
    /** The nodes killed by a test before: the later tests use the others. */
    private static final boolean[] killed = new boolean[3];

    @BeforeAll
    static void startCluster() throws Exception {
        // at-least-once dead-lettering tries again every 200 ms, not every 3 minutes
        cluster = new ChildCluster(dir, "q", 3, 3, 5_000, List.of("--dead-letter-retry-interval=200"));
        cluster.startMembers();
    }

    @AfterAll
    static void stopCluster() throws Exception {
        cluster.close();
    }

    private static Connection connect(int i) {
        return cluster.connect(i, WAIT);
    }

    private static void declare(int on, String queue) {
        await().atMost(WAIT).ignoreExceptions().until(() -> {
            try (Connection c = connect(on)) {
                c.createChannel().queueDeclare(queue, true, false, false, QUORUM);
                return true;
            }
        });
    }

    /** Waits until node {@code i} reaches the queue's leader: a consumer there can be started. */
    private static void reachable(int i, String queue) {
        try (Connection c = connect(i)) {
            await().atMost(WAIT).ignoreExceptions().until(() -> {
                Channel channel = c.createChannel();
                channel.basicCancel(channel.basicConsume(queue, false, (t, m) -> { }, t -> { }));
                channel.close();
                return true;
            });
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    /** Retries {@code attempt} until it returns; when it never does, fails with its last failure. */
    private static <T> T retried(java.util.concurrent.Callable<T> attempt) {
        var last = new java.util.concurrent.atomic.AtomicReference<Exception>();
        try {
            return await().atMost(WAIT).until(() -> {
                try {
                    return attempt.call();
                } catch (Exception e) {
                    last.set(e);
                    return null;
                }
            }, java.util.Objects::nonNull);
        } catch (ConditionTimeoutException e) {
            throw new AssertionError("never succeeded within " + WAIT + "; the last failure: " + last.get(), last.get());
        }
    }

    private static Map<String, Object> shape(int i, String queue) {
        return QuorumQueueShapes.withLeader(cluster, i, queue, WAIT);
    }

    private static String scrape(int node, String path) throws Exception {
        var client = java.net.http.HttpClient.newHttpClient();
        var request = java.net.http.HttpRequest.newBuilder(
            java.net.URI.create("http://127.0.0.1:" + cluster.nodes[node].metricsPort() + path)).build();
        return client.send(request, java.net.http.HttpResponse.BodyHandlers.ofString()).body();
    }

    /** The value of {@code metric} on the line whose labels include {@code label}. */
    private static double raftValue(String scrape, String metric, String label) {
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("(?m)^" + metric + "\\{[^}]*"
            + java.util.regex.Pattern.quote(label) + "[^}]*\\} (\\S+)$").matcher(scrape);
        assertThat(m.find()).as(metric + " {" + label + "} in\n" + scrape).isTrue();
        return Double.parseDouble(m.group(1));
    }

    private static int index(String node) {
        return QuorumQueueShapes.index(cluster, node);
    }

    @Test
    @Order(1)
    void publishedOnOneNodeConsumedInOrderOnAnotherWithTheLeaderOnTheThird() throws Exception {
        String queue = "qq-order";
        declare(0, queue);
        Map<String, Object> shape = shape(0, queue);
        assertThat(shape).containsEntry("type", "quorum");
        assertThat(shape.get("members")).isEqualTo(List.of(cluster.name(0), cluster.name(1), cluster.name(2)));
        int leader = index((String) shape.get("leader"));
        for (int i = 0; i < 3; i++) {
            assertThat(shape(i, queue).get("leader")).as("leader seen from node " + i).isEqualTo(cluster.name(leader));
        }
        int publisherNode = (leader + 1) % 3;
        int consumerNode = (leader + 2) % 3;
        SkiffmqCtlTest.Result status = SkiffmqCtlTest.ctl(cluster.nodes[publisherNode].managementPort(),
            "quorum_status", queue);
        assertThat(status.code()).as(status.err()).isZero();
        assertThat(status.out()).containsPattern("\\Q" + cluster.name(leader) + "\\E\\s*│\\s*leader\\s*│\\s*voter")
            .containsPattern("\\Q" + cluster.name(publisherNode) + "\\E\\s*│\\s*follower");
        int count = 500;
        reachable(publisherNode, queue);
        reachable(consumerNode, queue);
        try (Connection a = connect(publisherNode)) {
            Channel publisher = a.createChannel();
            publisher.confirmSelect();
            long start = System.nanoTime();
            for (int i = 0; i < count; i++) {
                publisher.basicPublish("", queue, null, ("m-" + i).getBytes(StandardCharsets.UTF_8));
            }
            publisher.waitForConfirmsOrDie(WAIT.toMillis());
            System.out.printf("%d confirmed through another node in %d ms%n", count,
                TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start));
        }
        try (Connection c = connect(consumerNode)) {
            assertThat(c.createChannel().queueDeclarePassive(queue).getMessageCount()).isEqualTo(count);
            Channel consumer = c.createChannel();
            consumer.basicQos(50);
            BlockingQueue<Delivery> got = new LinkedBlockingQueue<>();
            consumer.basicConsume(queue, false, (tag, m) -> {
                consumer.basicAck(m.getEnvelope().getDeliveryTag(), false);
                got.add(m);
            }, tag -> { });
            for (int i = 0; i < count; i++) {
                Delivery m = got.poll(WAIT.toSeconds(), TimeUnit.SECONDS);
                assertThat(m).as("message " + i).isNotNull();
                assertThat(new String(m.getBody(), StandardCharsets.UTF_8)).isEqualTo("m-" + i);
            }
        }
        // RabbitMQ 4.0's ra_metrics on a follower's node: the queue's row with its group's figures, the metadata's
        String perObject = scrape(publisherNode, "/metrics/per-object");
        assertThat(raftValue(perObject, "rabbitmq_raft_log_commit_index", "queue=\"" + queue + "\""))
            .as("the queue group's commit index").isGreaterThanOrEqualTo(2);
        assertThat(raftValue(perObject, "rabbitmq_raft_term_total", "queue=\"" + queue + "\"")).isPositive();
        assertThat(raftValue(perObject, "rabbitmq_raft_log_last_applied_index", "raft_cluster=\"rabbitmq_metadata\""))
            .isPositive();
        try (Connection l = connect(leader)) {
            await().atMost(WAIT).until(() -> l.createChannel().queueDeclarePassive(queue).getMessageCount() == 0);
            // deleted on its leader's node: gone from every node
            l.createChannel().queueDelete(queue);
        }
        for (int i = 0; i < 3; i++) {
            int node = i;
            await().atMost(WAIT).until(() -> cluster.api(node).get("/api/queues/%2F/" + queue).status() == 404);
        }
    }

    /** The queue's leader, then the two other nodes: where its publishers and consumers go. */
    private static int[] leaderAndOthers(String queue) {
        int leader = index((String) shape(0, queue).get("leader"));
        return new int[] {leader, (leader + 1) % 3, (leader + 2) % 3};
    }

    private static CachingConnectionFactory spring(int on) {
        CachingConnectionFactory factory = new CachingConnectionFactory("127.0.0.1", cluster.nodes[on].port);
        factory.setPublisherConfirmType(CachingConnectionFactory.ConfirmType.SIMPLE);
        return factory;
    }

    private static JmsConnectionFactory jms(int on) {
        return new JmsConnectionFactory("guest", "guest", "amqp://127.0.0.1:" + cluster.nodes[on].port);
    }

    private static Environment amqp10(int on) {
        return new AmqpEnvironmentBuilder().connectionSettings().host("127.0.0.1").port(cluster.nodes[on].port)
            .username("guest").password("guest").environmentBuilder().build();
    }

    /** Publishes {@code body} with Spring's template and waits for its confirm: true when acked, false when nacked. */
    private static boolean confirmed(RabbitTemplate template, String queue, String body) {
        return template.invoke(operations -> {
            operations.convertAndSend("", queue, body);
            return operations.waitForConfirms(WAIT.toMillis());
        });
    }

    /** The queue as node {@code i}'s {@code /api/queues} shows it. */
    private static Map<?, ?> api(int i, String queue) throws Exception {
        return (Map<?, ?>) cluster.api(i).get("/api/queues/%2F/" + queue).body();
    }

    private static String text(jakarta.jms.Message m) throws jakarta.jms.JMSException {
        if (m instanceof jakarta.jms.TextMessage t) {
            return t.getText();
        }
        jakarta.jms.BytesMessage bytes = (jakarta.jms.BytesMessage) m;
        byte[] body = new byte[(int) bytes.getBodyLength()];
        bytes.readBytes(body);
        return new String(body, StandardCharsets.UTF_8);
    }

    private static String text(com.rabbitmq.client.amqp.Message m) {
        return new String(m.body(), StandardCharsets.UTF_8);
    }

    /**
     * A Spring application's quorum queue on three nodes: declared with Spring's {@code RabbitAdmin}, published with
     * confirms by a {@code RabbitTemplate} on one node, consumed in order with Qpid JMS on another, the leader on the
     * third; and back, JMS sending persistent messages there, the template getting them in order.
     */
    @Test
    @Order(2)
    void springAmqpAndQpidJmsUseAQuorumQueueWithTheLeaderOnTheThirdNode() throws Exception {
        String queue = "qq-spring-jms";
        CachingConnectionFactory declaring = spring(0);
        try {
            new RabbitAdmin(declaring).declareQueue(QueueBuilder.durable(queue).quorum().build());
        } finally {
            declaring.destroy();
        }
        int[] nodes = leaderAndOthers(queue);
        int publisherNode = nodes[1];
        int consumerNode = nodes[2];
        reachable(publisherNode, queue);
        reachable(consumerNode, queue);
        int count = 50;
        CachingConnectionFactory factory = spring(publisherNode);
        try {
            RabbitTemplate template = new RabbitTemplate(factory);
            template.invoke(operations -> {
                for (int i = 0; i < count; i++) {
                    int n = i;
                    operations.convertAndSend("", queue, "spring " + i, m -> {
                        m.getMessageProperties().setHeader("n", n);
                        return m;
                    });
                }
                operations.waitForConfirmsOrDie(WAIT.toMillis());
                return null;
            });
            try (jakarta.jms.Connection connection = jms(consumerNode).createConnection()) {
                connection.start();
                jakarta.jms.Session session = connection.createSession(false, jakarta.jms.Session.CLIENT_ACKNOWLEDGE);
                jakarta.jms.MessageConsumer consumer = session.createConsumer(session.createQueue(queue));
                for (int i = 0; i < count; i++) {
                    jakarta.jms.Message m = consumer.receive(WAIT.toMillis());
                    assertThat(m).as("message " + i).isNotNull();
                    assertThat(text(m)).isEqualTo("spring " + i);
                    assertThat(m.getIntProperty("n")).isEqualTo(i);
                    if (i == count - 1) {
                        m.acknowledge(); // every message the session received
                    }
                }
                consumer.close();
                // a persistent send returns once the broker accepted it: once the queue's group committed it. Bytes
                // messages (a data section): a 0-9-1 consumer gets a text message's amqp-value section encoded
                jakarta.jms.MessageProducer producer = session.createProducer(session.createQueue(queue));
                producer.setDeliveryMode(jakarta.jms.DeliveryMode.PERSISTENT);
                for (int i = 0; i < 10; i++) {
                    jakarta.jms.BytesMessage m = session.createBytesMessage();
                    m.writeBytes(("jms " + i).getBytes(StandardCharsets.UTF_8));
                    producer.send(m);
                }
            }
            for (int i = 0; i < 10; i++) {
                org.springframework.amqp.core.Message m = template.receive(queue, WAIT.toMillis());
                assertThat(m).as("JMS message " + i).isNotNull();
                assertThat(new String(m.getBody(), StandardCharsets.UTF_8)).isEqualTo("jms " + i);
            }
            assertThat(template.receive(queue)).as("nothing else").isNull();
            new RabbitAdmin(factory).deleteQueue(queue);
        } finally {
            factory.destroy();
        }
    }

    /**
     * RabbitMQ 4.0's single active consumer with priorities, over the RabbitMQ AMQP 1.0 client, each consumer on a
     * node that does not lead: the active one (priority 0) holds its delivery unsettled; one of priority 10 arrives
     * and gets nothing until that delivery is accepted, then everything after it; the first stays registered,
     * waiting, and is active again once the second has gone.
     */
    @Test
    @Order(3)
    void aSingleActiveConsumerOnOneNodeGivesWayToAHigherPriorityOnAnotherOnceItHasSettled() throws Exception {
        String queue = "qq-sac";
        try (Environment environment = amqp10(0); var connection = environment.connectionBuilder().build()) {
            connection.management().queue().name(queue).type(Management.QueueType.QUORUM).singleActiveConsumer(true)
                .declare();
        }
        int[] nodes = leaderAndOthers(queue);
        int lowNode = nodes[1];
        int highNode = nodes[2];
        reachable(lowNode, queue);
        reachable(highNode, queue);
        try (Environment lowEnvironment = amqp10(lowNode); Environment highEnvironment = amqp10(highNode);
                var lowConnection = lowEnvironment.connectionBuilder().build();
                var highConnection = highEnvironment.connectionBuilder().build();
                Publisher publisher = highConnection.publisherBuilder().queue(queue).build()) {
            for (String body : List.of("m1", "m2", "m3")) {
                BlockingQueue<Publisher.Status> outcome = new LinkedBlockingQueue<>();
                publisher.publish(publisher.message(body.getBytes(StandardCharsets.UTF_8)),
                    context -> outcome.add(context.status()));
                assertThat(outcome.poll(WAIT.toSeconds(), TimeUnit.SECONDS)).isEqualTo(Publisher.Status.ACCEPTED);
            }
            BlockingQueue<com.rabbitmq.client.amqp.Message> low = new LinkedBlockingQueue<>();
            BlockingQueue<Consumer.Context> lowUnsettled = new LinkedBlockingQueue<>();
            lowConnection.consumerBuilder().queue(queue).priority(0).initialCredits(1)
                .messageHandler((context, message) -> {
                    low.add(message);
                    lowUnsettled.add(context); // settled by the test
                }).build();
            com.rabbitmq.client.amqp.Message m1 = low.poll(WAIT.toSeconds(), TimeUnit.SECONDS);
            assertThat(m1).isNotNull();
            assertThat(text(m1)).isEqualTo("m1");

            BlockingQueue<com.rabbitmq.client.amqp.Message> high = new LinkedBlockingQueue<>();
            Consumer highConsumer = highConnection.consumerBuilder().queue(queue).priority(10).initialCredits(10)
                .messageHandler((context, message) -> {
                    high.add(message);
                    context.accept();
                }).build();
            await().atMost(WAIT).until(() -> ((Number) api(nodes[0], queue).get("consumers")).intValue() == 2);
            await().during(QUIET).atMost(QUIET.plus(WAIT)).until(() -> high.isEmpty() && low.size() == 0);
            lowUnsettled.take().accept();
            com.rabbitmq.client.amqp.Message m2 = high.poll(WAIT.toSeconds(), TimeUnit.SECONDS);
            com.rabbitmq.client.amqp.Message m3 = high.poll(WAIT.toSeconds(), TimeUnit.SECONDS);
            assertThat(m2).isNotNull();
            assertThat(m3).isNotNull();
            assertThat(List.of(text(m2), text(m3))).containsExactly("m2", "m3");
            assertThat(low).as("nothing more to the first").isEmpty();
            assertThat(((Number) api(nodes[0], queue).get("consumers")).intValue()).as("the first waits, registered")
                .isEqualTo(2);

            highConsumer.close();
            BlockingQueue<Publisher.Status> outcome = new LinkedBlockingQueue<>();
            publisher.publish(publisher.message("m4".getBytes(StandardCharsets.UTF_8)),
                context -> outcome.add(context.status()));
            assertThat(outcome.poll(WAIT.toSeconds(), TimeUnit.SECONDS)).isEqualTo(Publisher.Status.ACCEPTED);
            com.rabbitmq.client.amqp.Message m4 = low.poll(WAIT.toSeconds(), TimeUnit.SECONDS);
            assertThat(m4).as("the first is active again").isNotNull();
            assertThat(text(m4)).isEqualTo("m4");
            lowUnsettled.take().accept();
            assertThat(high).isEmpty();
            lowConnection.management().queueDelete(queue);
        }
    }

    /**
     * At-least-once dead-lettering across nodes: a message published with confirms by Spring on one node, rejected
     * by a Qpid JMS consumer on another, waits in its quorum queue (counted against {@code x-max-length}: the next
     * publish is nacked) while its dead-letter exchange is missing; once the exchange and a classic queue are
     * declared, on a node that does not lead, the leader's retry (every 200 ms here) routes it there, and the source
     * takes publishes again.
     */
    @Test
    @Order(4)
    void atLeastOnceDeadLetteringWaitsForATargetDeclaredLaterOnAnotherNode() throws Exception {
        String queue = "qq-alo";
        String exchange = "qq-alo-dlx";
        String target = "qq-alo-dead";
        CachingConnectionFactory declaring = spring(0);
        try {
            new RabbitAdmin(declaring).declareQueue(QueueBuilder.durable(queue).quorum().deadLetterExchange(exchange)
                .deadLetterRoutingKey(target).withArgument("x-dead-letter-strategy", "at-least-once")
                .overflow(QueueBuilder.Overflow.rejectPublish).maxLength(1).build());
        } finally {
            declaring.destroy();
        }
        int[] nodes = leaderAndOthers(queue);
        int leader = nodes[0];
        int publisherNode = nodes[1];
        int consumerNode = nodes[2];
        reachable(publisherNode, queue);
        reachable(consumerNode, queue);
        CachingConnectionFactory publishing = spring(publisherNode);
        CachingConnectionFactory targetNode = spring(consumerNode);
        try {
            RabbitTemplate template = new RabbitTemplate(publishing);
            assertThat(confirmed(template, queue, "dead")).isTrue();
            try (jakarta.jms.Connection connection = jms(consumerNode).createConnection()) {
                connection.start();
                jakarta.jms.Session session = connection.createSession(false, jakarta.jms.Session.CLIENT_ACKNOWLEDGE);
                jakarta.jms.MessageConsumer consumer = session.createConsumer(session.createQueue(queue));
                jakarta.jms.Message m = consumer.receive(WAIT.toMillis());
                assertThat(m).isNotNull();
                assertThat(text(m)).isEqualTo("dead");
                m.setIntProperty(JmsMessageSupport.JMS_AMQP_ACK_TYPE, JmsMessageSupport.REJECTED);
                m.acknowledge();
            }
            // no exchange yet: it stays, not ready, held against the queue's one place
            await().atMost(WAIT).until(() -> Integer.valueOf(1).equals(api(leader, queue).get("messages_dlx")));
            Map<?, ?> info = api(leader, queue);
            assertThat(info.get("messages")).as("counted in the total").isEqualTo(1);
            assertThat(info.get("messages_ready")).isEqualTo(0);
            assertThat(confirmed(template, queue, "refused")).as("x-max-length 1, held by the dying message")
                .isFalse();

            RabbitAdmin admin = new RabbitAdmin(targetNode);
            DirectExchange dlx = new DirectExchange(exchange, true, false);
            org.springframework.amqp.core.Queue dlq = QueueBuilder.durable(target).build();
            admin.declareExchange(dlx);
            admin.declareQueue(dlq);
            admin.declareBinding(BindingBuilder.bind(dlq).to(dlx).with(target));
            org.springframework.amqp.core.Message dead = template.receive(target, WAIT.toMillis());
            assertThat(dead).as("dead-lettered once the target is there").isNotNull();
            assertThat(new String(dead.getBody(), StandardCharsets.UTF_8)).isEqualTo("dead");
            @SuppressWarnings("unchecked")
            Map<String, Object> death = ((List<Map<String, Object>>) dead.getMessageProperties().getHeaders()
                .get("x-death")).get(0);
            assertThat(death.get("reason").toString()).isEqualTo("rejected");
            assertThat(death.get("queue").toString()).isEqualTo(queue);
            await().atMost(WAIT).until(() -> confirmed(template, queue, "taken"));
            assertThat(api(leader, queue).get("messages_dlx")).isEqualTo(0);
            assertThat(template.receive(target)).as("dead-lettered once").isNull();
            admin.deleteQueue(queue);
            admin.deleteQueue(target);
            admin.deleteExchange(exchange);
        } finally {
            publishing.destroy();
            targetNode.destroy();
        }
    }

    /**
     * The delivery limit across nodes: published by the RabbitMQ AMQP 1.0 client on one node, released (requeued)
     * each time by a consumer on another, the leader on the third, redelivered with {@code x-delivery-count} 1 and
     * 2, and past {@code x-delivery-limit} 2 dead-lettered as {@code delivery_limit} into a classic queue homed on
     * the publisher's node, where Spring gets it.
     */
    @Test
    @Order(5)
    void pastTheDeliveryLimitAMessageRequeuedOnAnotherNodeIsDeadLettered() throws Exception {
        String queue = "qq-limit";
        String dlq = "qq-limit-dead";
        try (Environment environment = amqp10(0); var connection = environment.connectionBuilder().build()) {
            connection.management().queue().name(queue).quorum().deliveryLimit(2).queue()
                .deadLetterExchange("").deadLetterRoutingKey(dlq).declare();
        }
        int[] nodes = leaderAndOthers(queue);
        int publisherNode = nodes[1];
        int consumerNode = nodes[2];
        CachingConnectionFactory factory = spring(publisherNode);
        try {
            new RabbitAdmin(factory).declareQueue(QueueBuilder.durable(dlq).build());
            reachable(publisherNode, queue);
            reachable(consumerNode, queue);
            try (Environment publishing = amqp10(publisherNode); Environment consuming = amqp10(consumerNode);
                    var publisherConnection = publishing.connectionBuilder().build();
                    var consumerConnection = consuming.connectionBuilder().build();
                    Publisher publisher = publisherConnection.publisherBuilder().queue(queue).build()) {
                BlockingQueue<Publisher.Status> outcome = new LinkedBlockingQueue<>();
                publisher.publish(publisher.message("poison".getBytes(StandardCharsets.UTF_8)),
                    context -> outcome.add(context.status()));
                assertThat(outcome.poll(WAIT.toSeconds(), TimeUnit.SECONDS)).isEqualTo(Publisher.Status.ACCEPTED);
                BlockingQueue<com.rabbitmq.client.amqp.Message> seen = new LinkedBlockingQueue<>();
                consumerConnection.consumerBuilder().queue(queue).messageHandler((context, message) -> {
                    seen.add(message);
                    context.requeue();
                }).build();
                List<Object> counts = new ArrayList<>();
                for (int i = 0; i < 3; i++) {
                    com.rabbitmq.client.amqp.Message m = seen.poll(WAIT.toSeconds(), TimeUnit.SECONDS);
                    assertThat(m).as("delivery " + i).isNotNull();
                    assertThat(text(m)).isEqualTo("poison");
                    counts.add(m.annotation("x-delivery-count"));
                }
                assertThat(counts).containsExactly(null, 1L, 2L);
                RabbitTemplate template = new RabbitTemplate(factory);
                org.springframework.amqp.core.Message dead = template.receive(dlq, WAIT.toMillis());
                assertThat(dead).as("dead-lettered past the limit").isNotNull();
                assertThat(new String(dead.getBody(), StandardCharsets.UTF_8)).isEqualTo("poison");
                @SuppressWarnings("unchecked")
                Map<String, Object> death = ((List<Map<String, Object>>) dead.getMessageProperties().getHeaders()
                    .get("x-death")).get(0);
                assertThat(death.get("reason").toString()).isEqualTo("delivery_limit");
                assertThat(death.get("queue").toString()).isEqualTo(queue);
                assertThat(seen).as("not delivered a fourth time").isEmpty();
                assertThat(((Number) api(nodes[0], queue).get("messages")).intValue()).isZero();
                publisherConnection.management().queueDelete(queue);
                publisherConnection.management().queueDelete(dlq);
            }
        } finally {
            factory.destroy();
        }
    }

    private static ConfirmingPublisher publisher(int on, String queue) {
        return new ConfirmingPublisher(() -> connect(on), queue, 0, 200,
            id -> ("m-" + id).getBytes(StandardCharsets.UTF_8));
    }

    @Test
    @Order(6)
    void theLeadersNodeKilledAnotherLeadsAndEveryConfirmedMessageIsThere() throws Exception {
        String queue = "qq-failover";
        declare(0, queue);
        int leader = index((String) shape(0, queue).get("leader"));
        int publisherNode = (leader + 1) % 3;
        int consumerNode = (leader + 2) % 3;
        reachable(publisherNode, queue);
        ConfirmingPublisher publisher = publisher(publisherNode, queue);
        Thread publishing = new Thread(publisher, "publisher");
        publishing.start();
        await().atMost(WAIT).until(() -> publisher.confirmed.size() >= 300);
        long killedAt = System.nanoTime();
        cluster.nodes[leader].kill();
        killed[leader] = true;
        String newLeader = await().atMost(WAIT).ignoreExceptions()
            .until(() -> (String) shape(consumerNode, queue).get("leader"), l -> !l.equals(cluster.name(leader)));
        long failoverMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - killedAt);
        int confirmedAtKill = publisher.confirmed.size();
        await().atMost(WAIT).until(() -> publisher.confirmed.size() >= confirmedAtKill + 300);
        publisher.stop.set(true);
        publishing.join(WAIT.toMillis());
        Set<Integer> confirmed = Set.copyOf(publisher.confirmed);

        Set<Integer> consumed = ConcurrentHashMap.newKeySet();
        try (Connection c = connect(consumerNode)) {
            Channel consumer = retried(() -> {
                Channel channel = c.createChannel();
                channel.basicQos(100);
                channel.basicConsume(queue, false, (tag, m) -> {
                    consumed.add(Integer.parseInt(new String(m.getBody(), StandardCharsets.UTF_8).substring(2)));
                    channel.basicAck(m.getEnvelope().getDeliveryTag(), false);
                }, tag -> { });
                return channel;
            });
            try {
                await().atMost(WAIT).until(() -> consumed.containsAll(confirmed));
            } catch (ConditionTimeoutException e) {
                // reported below, with what was lost
            }
            consumer.close();
        }
        List<Integer> lost = new ArrayList<>(confirmed);
        lost.removeAll(consumed);
        lost.sort(null);
        assertThat(lost).as("confirmed and not consumed (of %d confirmed, %d consumed); new leader %s after %d ms",
                confirmed.size(), consumed.size(), newLeader, failoverMillis)
            .isEmpty();
        System.out.printf("failover: %s leads %d ms after the kill; %d confirmed, %d consumed%n", newLeader,
            failoverMillis, confirmed.size(), consumed.size());
    }

    @Test
    @Order(7)
    void aLeaderCutOffFromItsMajorityConfirmsNothing() throws Exception {
        String queue = "qq-minority";
        int alive = killed[0] ? 1 : 0;
        declare(alive, queue);
        int leader = index((String) shape(alive, queue).get("leader"));
        try (Connection l = connect(leader)) {
            Channel channel = l.createChannel();
            channel.confirmSelect();
            channel.basicPublish("", queue, null, "before".getBytes(StandardCharsets.UTF_8));
            channel.waitForConfirmsOrDie(WAIT.toMillis());
            for (int i = 0; i < 3; i++) {
                if (i != leader && !killed[i]) {
                    cluster.nodes[i].kill();
                    killed[i] = true;
                }
            }
            // published at once, before the leader steps down (after four election timeouts): its queue takes it
            channel.basicPublish("", queue, null, "alone".getBytes(StandardCharsets.UTF_8));
            boolean acked;
            try {
                acked = channel.waitForConfirms(5_000 + 3_000); // the cluster-append-timeout, and some
            } catch (java.util.concurrent.TimeoutException e) {
                acked = false; // left unconfirmed
            }
            assertThat(acked).as("a publish no majority committed is not confirmed").isFalse();
        }
    }

    @Test
    @Order(8)
    void aConsumeWithoutAMajorityFailsWith541WithinTheAppendTimeout() throws Exception {
        int alive = 0;
        while (killed[alive]) {
            alive++;
        }
        Connection c = connect(alive);
        try {
            Channel channel = c.createChannel();
            long start = System.nanoTime();
            java.io.IOException failed = org.junit.jupiter.api.Assertions.assertThrows(java.io.IOException.class,
                () -> channel.basicConsume("qq-minority", false, (t, m) -> { }, t -> { }));
            long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            var signal = (com.rabbitmq.client.ShutdownSignalException) failed.getCause();
            assertThat(signal.isHardError()).as("a connection error").isTrue();
            var close = (com.rabbitmq.client.AMQP.Connection.Close) signal.getReason();
            assertThat(close.getReplyCode()).isEqualTo(541);
            assertThat(close.getReplyText())
                .isEqualTo("INTERNAL_ERROR - timed out consuming from quorum queue 'qq-minority' in vhost '/'");
            assertThat(millis).as("within the append timeout and some").isLessThan(5_000 + 5_000);
        } finally {
            c.abort();
        }
    }

    @Test
    @Order(9)
    void aConsumerOnAFollowersNodeKeepsConsumingAcrossAKilledLeader() throws Exception {
        List<Integer> restarted = restartKilled();
        String queue = "qq-moving";
        declare(restarted.get(0), queue);
        int leader = index((String) shape(restarted.get(0), queue).get("leader"));
        int publisherNode = (leader + 1) % 3;
        int consumerNode = (leader + 2) % 3;
        reachable(publisherNode, queue);
        reachable(consumerNode, queue);

        Set<Integer> consumed = ConcurrentHashMap.newKeySet();
        Set<String> tags = ConcurrentHashMap.newKeySet();
        AtomicInteger redelivered = new AtomicInteger();
        AtomicBoolean cancelled = new AtomicBoolean();
        try (Connection c = connect(consumerNode)) {
            Channel consumer = c.createChannel();
            consumer.basicQos(20);
            String tag = consumer.basicConsume(queue, false, Map.of("x-priority", 3), (t, m) -> {
                tags.add(t);
                if (m.getEnvelope().isRedeliver()) {
                    redelivered.incrementAndGet();
                }
                consumed.add(Integer.parseInt(new String(m.getBody(), StandardCharsets.UTF_8).substring(2)));
                consumer.basicAck(m.getEnvelope().getDeliveryTag(), false);
            }, t -> cancelled.set(true));
            ConfirmingPublisher publisher = publisher(publisherNode, queue);
            Thread publishing = new Thread(publisher, "publisher");
            publishing.start();
            try {
                await().atMost(WAIT).until(() -> consumed.size() >= 300);
                cluster.nodes[leader].kill();
                killed[leader] = true;
                await().atMost(WAIT).ignoreExceptions().until(() -> (String) shape(consumerNode, queue).get("leader"),
                    l -> !l.equals(cluster.name(leader)));
                int consumedAtKill = consumed.size();
                int confirmedAtKill = publisher.confirmed.size();
                // the same consumer, not consuming again, gets what is published after the new leader took over
                await().atMost(WAIT).until(() -> publisher.confirmed.size() >= confirmedAtKill + 300
                    && consumed.size() >= consumedAtKill + 300);
            } finally {
                publisher.stop.set(true);
                publishing.join(WAIT.toMillis());
            }
            Set<Integer> confirmed = Set.copyOf(publisher.confirmed);
            publisher.awaitEveryConfirmedIn(consumed, WAIT, () -> redelivered + " redelivered, cancelled " + cancelled);
            assertThat(cancelled).as("the consumer was not cancelled").isFalse();
            assertThat(consumer.isOpen()).isTrue();
            assertThat(tags).containsExactly(tag);
            System.out.printf("moving consumer: %d confirmed, %d consumed, %d redelivered%n", confirmed.size(),
                consumed.size(), redelivered.get());
        }
    }

    /**
     * The killed nodes started again, one of them killed and started once more after messages were confirmed: each
     * rebuilds its replicas from its snapshot (taken every 16 KiB of log here, {@link ChildCluster}) and the log
     * after it; with a node this case did not restart killed, a restarted one leads and has every confirmed
     * message.
     */
    @Test
    @Order(10)
    void restartedMembersRebuildFromTheirSnapshotsAndLeadWithEveryConfirmedMessage() throws Exception {
        int never = !killed[0] ? 0 : !killed[1] ? 1 : 2; // a node the earlier cases left running
        for (int i = 0; i < 3; i++) {
            if (killed[i]) {
                cluster.start(i);
                killed[i] = false;
            }
        }
        String queue = "qq-restart";
        declare(never, queue);
        int count = 300;
        try (Connection c = connect(never)) {
            // in batches, each published again until confirmed: a node the earlier cases left running may still
            // take publishes as a deposed leader until the restarted ones elect theirs, and leaves them unconfirmed
            for (int from = 0; from < count; from += 50) {
                int first = from;
                await().atMost(WAIT).ignoreExceptions().until(() -> {
                    Channel publisher = c.createChannel();
                    try {
                        publisher.confirmSelect();
                        for (int i = first; i < first + 50; i++) {
                            publisher.basicPublish("", queue, null, ("r-" + i).getBytes(StandardCharsets.UTF_8));
                        }
                        return publisher.waitForConfirms(10_000);
                    } finally {
                        publisher.abort();
                    }
                });
            }
        }
        int again = (never + 1) % 3;
        cluster.nodes[again].kill();
        ChildBroker restarted = cluster.start(again);
        await().atMost(WAIT).until(() -> java.nio.file.Files.readString(restarted.log)
            .contains("loaded from its snapshot"));
        cluster.nodes[never].kill();
        killed[never] = true;
        int other = 3 - never - again;
        int leader = index(await().atMost(WAIT).ignoreExceptions()
            .until(() -> (String) shape(other, queue).get("leader"), l -> !l.equals(cluster.name(never))));
        Set<String> consumed = ConcurrentHashMap.newKeySet();
        try (Connection c = connect(leader)) {
            Channel consumer = c.createChannel();
            consumer.basicQos(100);
            await().atMost(WAIT).ignoreExceptions().until(() -> {
                consumer.basicConsume(queue, false, (tag, m) -> {
                    consumed.add(new String(m.getBody(), StandardCharsets.UTF_8));
                    consumer.basicAck(m.getEnvelope().getDeliveryTag(), false);
                }, tag -> { });
                return true;
            });
            await().atMost(WAIT).until(() -> consumed.size() >= count);
            // confirmed before its leader was cut off, in aLeaderCutOffFromItsMajorityConfirmsNothing
            var before = c.createChannel().basicGet("qq-minority", true);
            assertThat(before).isNotNull();
            assertThat(new String(before.getBody(), StandardCharsets.UTF_8)).isEqualTo("before");
        }
        assertThat(consumed).as("every confirmed message, published again at most").hasSize(count)
            .contains("r-0", "r-" + (count - 1));
    }

    /**
     * A publisher with confirms on a node that survives, publishing on through a kill -9 of the leader's node: what
     * it publishes while the queue has no leader is held and confirmed by the next one, and what was in flight to the
     * killed leader, its outcome unknown, is sent again and confirmed by the next one too, which drops what it has:
     * nothing is nacked, and every message is consumed once afterwards, in publishing order, as with RabbitMQ.
     */
    @Test
    @Order(12)
    void aPublisherOnASurvivingNodeHasWhatItPublishesBetweenTwoLeadersConfirmed() throws Exception {
        restartKilled();
        String queue = "qq-held";
        declare(0, queue);
        int leader = index((String) shape(0, queue).get("leader"));
        int publisherNode = (leader + 1) % 3;
        int consumerNode = (leader + 2) % 3;
        publishAcross(queue, publisherNode, consumerNode, () -> {
            cluster.nodes[leader].kill();
            killed[leader] = true;
            return leader;
        }, () -> { });
    }

    /**
     * A publisher with confirms on the leader's own node, which is paused (SIGSTOP) until another node leads and then
     * resumed: what it had appended and not committed, and what its publisher sent meanwhile, fails there as its
     * leadership ends, and goes to the next leader with its number, as RabbitMQ's channel resends its pending
     * commands: nothing is nacked, and every message is consumed once, in publishing order. Before the kill case,
     * which then finds every node running.
     */
    @Test
    @Order(11)
    void aPublisherOnALeaderThatIsPausedAndDeposedHasWhatItPublishesConfirmed() throws Exception {
        restartKilled();
        String queue = "qq-deposed";
        declare(0, queue);
        int leader = index((String) shape(0, queue).get("leader"));
        int consumerNode = (leader + 1) % 3;
        publishAcross(queue, leader, consumerNode, () -> {
            cluster.nodes[leader].pause();
            try {
                await().atMost(WAIT).ignoreExceptions().until(() -> (String) shape(consumerNode, queue).get("leader"),
                    l -> !l.equals(cluster.name(leader)));
            } finally {
                cluster.nodes[leader].resume();
            }
            return leader;
        }, () -> {
            // the paused node, its group's preferred member, takes its leadership back once it has caught up, which
            // it does once the publisher stops: a consumer's deliveries of a leader are delivered again by the next
            // one (docs/quorum-queues.md, "Where we differ"), so the messages are consumed once that leader leads
            @SuppressWarnings("unchecked")
            String preferred = ((List<String>) shape(consumerNode, queue).get("members")).get(0);
            await().atMost(WAIT).until(() -> (String) shape(consumerNode, queue).get("leader"), preferred::equals);
        });
    }

    /** A fault of the queue's leader, which returns once it has happened: the leader's index. */
    private interface Fault {
        int inflict() throws Exception;
    }

    /**
     * Publishes with confirms on {@code publisherNode}, at most 20 in flight, through {@code fault}, until 200 more
     * are confirmed after another node leads; then checks that nothing was nacked, and once {@code settled} returns,
     * consumes on {@code consumerNode}: each confirmed message once, in publishing order, and no message twice.
     */
    private void publishAcross(String queue, int publisherNode, int consumerNode, Fault fault, Runnable settled)
            throws Exception {
        reachable(publisherNode, queue);
        Set<Integer> confirmed = ConcurrentHashMap.newKeySet();
        Set<Integer> nacked = ConcurrentHashMap.newKeySet();
        java.util.concurrent.ConcurrentSkipListMap<Long, Integer> outstanding =
            new java.util.concurrent.ConcurrentSkipListMap<>();
        AtomicBoolean stop = new AtomicBoolean();
        StringBuilder which = new StringBuilder(); // for a failure's message
        try (Connection c = connect(publisherNode)) {
            Channel channel = c.createChannel();
            channel.confirmSelect();
            channel.addConfirmListener(new com.rabbitmq.client.ConfirmListener() {
                @Override
                public void handleAck(long tag, boolean multiple) {
                    answered(tag, multiple, confirmed);
                }

                @Override
                public void handleNack(long tag, boolean multiple) {
                    answered(tag, multiple, nacked);
                }

                private void answered(long tag, boolean multiple, Set<Integer> into) {
                    var done = multiple ? outstanding.headMap(tag, true) : outstanding.subMap(tag, true, tag, true);
                    into.addAll(done.values());
                    done.clear();
                }
            });
            Thread publishing = new Thread(() -> {
                try {
                    for (int id = 0; !stop.get(); id++) {
                        outstanding.put(channel.getNextPublishSeqNo(), id);
                        channel.basicPublish("", queue, null, ("h-" + id).getBytes(StandardCharsets.UTF_8));
                        if (outstanding.size() >= 20) {
                            channel.waitForConfirms(WAIT.toMillis());
                        }
                    }
                    channel.waitForConfirms(WAIT.toMillis());
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            }, "publisher");
            publishing.start();
            await().atMost(WAIT).until(() -> confirmed.size() >= 200);
            int leader = fault.inflict();
            String next = await().atMost(WAIT).ignoreExceptions().until(
                () -> (String) shape(consumerNode, queue).get("leader"), l -> !l.equals(cluster.name(leader)));
            which.append("leader ").append(cluster.name(leader)).append(", then ").append(next)
                .append(", publisher on ").append(cluster.name(publisherNode));
            int confirmedAfterFault = confirmed.size();
            await().atMost(WAIT).until(() -> confirmed.size() >= confirmedAfterFault + 200);
            stop.set(true);
            publishing.join(WAIT.toMillis());
            assertThat(publishing.isAlive()).isFalse();
        }
        settled.run();
        assertThat(outstanding).as("every publish answered").isEmpty();
        assertThat(nacked).as("nacked %s (%d confirmed; %s, then %s)", new java.util.TreeSet<>(nacked),
            confirmed.size(), which, shape(consumerNode, queue).get("leader")).isEmpty();

        List<Integer> consumed = java.util.Collections.synchronizedList(new ArrayList<>());
        try (Connection c = connect(consumerNode)) {
            Channel consumer = retried(() -> {
                Channel ch = c.createChannel();
                ch.basicQos(200);
                ch.basicConsume(queue, false, (tag, m) -> {
                    consumed.add(Integer.parseInt(new String(m.getBody(), StandardCharsets.UTF_8).substring(2)));
                    ch.basicAck(m.getEnvelope().getDeliveryTag(), false);
                }, tag -> { });
                return ch;
            });
            await().atMost(WAIT).until(() -> {
                synchronized (consumed) {
                    return consumed.containsAll(confirmed);
                }
            });
            consumer.close();
        }
        List<Integer> confirmedConsumed;
        synchronized (consumed) {
            confirmedConsumed = consumed.stream().filter(confirmed::contains).toList();
        }
        assertThat(confirmedConsumed).as("each confirmed message once, in publishing order").hasSize(confirmed.size())
            .isSorted();
        assertThat(consumed).as("no message twice").doesNotHaveDuplicates();
        System.out.printf("%s across a fault (%s): %d confirmed, %d nacked, %d consumed%n", queue, which,
            confirmed.size(), nacked.size(), consumed.size());
    }

    /** Starts again, side by side, the nodes an earlier case killed; returns them. */
    private List<Integer> restartKilled() throws Exception {
        List<Integer> restarted = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            if (killed[i]) {
                restarted.add(i);
            }
        }
        ChildCluster.startSideBySide(restarted.size(), n -> cluster.start(restarted.get(n)),
            n -> cluster.name(restarted.get(n)));
        java.util.Arrays.fill(killed, false);
        return restarted;
    }
}
