package io.skiffmq.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.Delivery;
import com.rabbitmq.client.GetResponse;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A quorum queue of three members on a four-node cluster, used from the fourth node, outside its group, as RabbitMQ
 * serves any queue from any node (docs/quorum-queues.md, "How it is replicated"): seen with its leader and members
 * in that node's {@code /api/queues}, declared passively, published to with confirms, got, consumed (0-9-1 and AMQP
 * 1.0) and purged there; its leader's node killed with kill -9, and that node's consumer carries on with every
 * confirmed message from the new leader, which the metadata log tells it of.
 */
@OneAtATime
class ClusterNonMemberQueueTest {
    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final int OUTSIDE = 3;

    @TempDir
    static Path dir;

    private static ChildCluster cluster;

    @BeforeAll
    static void startCluster() throws Exception {
        cluster = new ChildCluster(dir, "o", 4, 4, 5_000);
        cluster.startMembers();
    }

    @AfterAll
    static void stopCluster() throws Exception {
        cluster.close();
    }

    private static Connection connect(int i) {
        return cluster.connect(i, WAIT);
    }

    /** Message {@code id}'s body: its number, then bytes of every value, of a length that varies. */
    private static byte[] body(int id) {
        ByteBuffer body = ByteBuffer.allocate(4 + id % 300).putInt(id);
        for (int k = 0; body.hasRemaining(); k++) {
            body.put((byte) (id * 7 + k));
        }
        return body.array();
    }

    private static int id(byte[] body) {
        return ByteBuffer.wrap(body).getInt();
    }

    private static Map<String, Object> shape(int i, String queue) {
        return QuorumQueueShapes.withLeader(cluster, i, queue, WAIT);
    }

    private static int index(String node) {
        return QuorumQueueShapes.index(cluster, node);
    }

    @Test
    void aNodeOutsideTheGroupServesTheQueueThroughItsLeaderAndFollowsANewOne() throws Exception {
        String queue = "qq-outside";
        // again while the first elections settle: four brokers starting on a loaded machine can take longer than the
        // 5 s append timeout, and a declare refused with 541 by timeout may still be committed (declaring it again is
        // declare-ok)
        await().atMost(WAIT).ignoreExceptions().until(() -> {
            try (Connection c = connect(0)) {
                c.createChannel().queueDeclare(queue, true, false, false,
                    Map.of("x-queue-type", "quorum", "x-quorum-initial-group-size", 3));
                return true;
            }
        });
        List<String> members = List.of(cluster.name(0), cluster.name(1), cluster.name(2));
        Map<String, Object> shape = shape(OUTSIDE, queue);
        assertThat(shape.get("members")).as("members seen outside the group").isEqualTo(members);
        int leader = index((String) shape.get("leader"));
        assertThat(members).contains(cluster.name(leader));
        int member = (leader + 1) % 3;

        // published with confirms outside the group; got there, the rest consumed on a member, in order
        int count = 100;
        try (Connection o = connect(OUTSIDE)) {
            await().atMost(WAIT).ignoreExceptions().until(() -> {
                o.createChannel().queueDeclarePassive(queue);
                return true;
            });
            Channel publisher = o.createChannel();
            publisher.confirmSelect();
            for (int i = 0; i < count; i++) {
                publisher.basicPublish("", queue, null, body(i));
            }
            publisher.waitForConfirmsOrDie(WAIT.toMillis());
            assertThat(o.createChannel().queueDeclarePassive(queue).getMessageCount()).isEqualTo(count);
            GetResponse got = publisher.basicGet(queue, false);
            assertThat(got.getBody()).isEqualTo(body(0));
            publisher.basicAck(got.getEnvelope().getDeliveryTag(), false);
        }
        try (Connection m = connect(member)) {
            Channel consumer = m.createChannel();
            consumer.basicQos(20);
            BlockingQueue<Delivery> got = new LinkedBlockingQueue<>();
            consumer.basicConsume(queue, false, (tag, d) -> {
                consumer.basicAck(d.getEnvelope().getDeliveryTag(), false);
                got.add(d);
            }, tag -> { });
            for (int i = 1; i < count; i++) {
                Delivery d = got.poll(WAIT.toSeconds(), TimeUnit.SECONDS);
                assertThat(d).as("message " + i).isNotNull();
                assertThat(d.getBody()).as("message " + i).isEqualTo(body(i));
            }
        }

        // a consumer outside the group, its leader's node killed: it carries on with every confirmed message
        List<Integer> consumed = new CopyOnWriteArrayList<>();
        Set<String> tags = ConcurrentHashMap.newKeySet();
        AtomicBoolean cancelled = new AtomicBoolean();
        List<Integer> wrongBytes = new CopyOnWriteArrayList<>();
        try (Connection o = connect(OUTSIDE)) {
            Channel consumer = o.createChannel();
            consumer.basicQos(20);
            String tag = consumer.basicConsume(queue, false, (t, d) -> {
                tags.add(t);
                int id = id(d.getBody());
                if (!java.util.Arrays.equals(d.getBody(), body(id))) {
                    wrongBytes.add(id);
                }
                consumed.add(id);
                consumer.basicAck(d.getEnvelope().getDeliveryTag(), false);
            }, t -> cancelled.set(true));
            ConfirmingPublisher publisher = new ConfirmingPublisher(() -> connect(OUTSIDE), queue, count, 100,
                ClusterNonMemberQueueTest::body);
            Thread publishing = new Thread(publisher, "publisher");
            publishing.start();
            try {
                await().atMost(WAIT).until(() -> consumed.size() >= 200);
                List<Integer> beforeKill = List.copyOf(consumed);
                for (int i = 0; i < beforeKill.size(); i++) {
                    assertThat(beforeKill.get(i)).as("delivery " + i + " outside the group").isEqualTo(count + i);
                }
                cluster.nodes[leader].kill();
                String newLeader = await().atMost(WAIT).ignoreExceptions()
                    .until(() -> (String) shape(OUTSIDE, queue).get("leader"), l -> !l.equals(cluster.name(leader)));
                assertThat(members).contains(newLeader);
                int consumedAtKill = consumed.size();
                int confirmedAtKill = publisher.confirmed.size();
                await().atMost(WAIT).until(() -> publisher.confirmed.size() >= confirmedAtKill + 200
                    && consumed.size() >= consumedAtKill + 200);
            } finally {
                publisher.stop.set(true);
                publishing.join(WAIT.toMillis());
            }
            publisher.awaitEveryConfirmedIn(consumed, WAIT, () -> "cancelled " + cancelled);
            assertThat(wrongBytes).as("bodies changed").isEmpty();
            assertThat(cancelled).as("the consumer was not cancelled").isFalse();
            assertThat(tags).containsExactly(tag);
            consumer.close();

            // purged from outside the group, then an AMQP 1.0 consumer there gets what is published next, in order
            Channel channel = o.createChannel();
            channel.queuePurge(queue);
            assertThat(channel.queueDeclarePassive(queue).getMessageCount()).isZero();
            channel.confirmSelect();
            for (int i = 0; i < 10; i++) {
                channel.basicPublish("", queue, null, body(i));
            }
            channel.waitForConfirmsOrDie(WAIT.toMillis());
        }
        try (com.rabbitmq.client.amqp.Environment environment =
                new com.rabbitmq.client.amqp.impl.AmqpEnvironmentBuilder().connectionSettings().host("127.0.0.1")
                    .port(cluster.nodes[OUTSIDE].port).username("guest").password("guest").environmentBuilder().build();
                com.rabbitmq.client.amqp.Connection connection = environment.connectionBuilder().build()) {
            BlockingQueue<com.rabbitmq.client.amqp.Message> received = new LinkedBlockingQueue<>();
            connection.consumerBuilder().queue(queue).initialCredits(20).messageHandler((context, message) -> {
                received.add(message);
                context.accept();
            }).build();
            for (int i = 0; i < 10; i++) {
                com.rabbitmq.client.amqp.Message m = received.poll(WAIT.toSeconds(), TimeUnit.SECONDS);
                assertThat(m).as("AMQP 1.0 message " + i).isNotNull();
                assertThat(m.body()).isEqualTo(body(i));
            }
        }
    }
}
