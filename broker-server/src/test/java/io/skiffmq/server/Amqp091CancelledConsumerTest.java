package io.skiffmq.server;

import static io.skiffmq.server.Amqp091Support.TIMEOUT;
import static io.skiffmq.server.Amqp091Support.await;
import static io.skiffmq.server.Amqp091Support.bytes;
import static io.skiffmq.server.Amqp091Support.text;
import static org.assertj.core.api.Assertions.assertThat;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.Delivery;
import com.rabbitmq.client.GetResponse;
import io.skiffmq.server.Amqp091Support.Recorder;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Unacked deliveries belong to the channel, not to the consumer they went to: after {@code basic.cancel} they can
 * still be acked, nacked, rejected and recovered, and closing the channel or the connection requeues every one of
 * them, in their original order, with {@code redelivered} set, as RabbitMQ does. Spring's listener containers, pika
 * and the Java client cancel their consumers before closing channels, so every ordinary shutdown of a consuming
 * application goes this way.
 */
class Amqp091CancelledConsumerTest extends Amqp091ClientTest {
    private String queue;
    /** A second connection that outlives the consuming one: it publishes and counts. */
    private Connection observer;

    @BeforeEach
    void setUp() throws Exception {
        observer = target.factory().newConnection();
        // durable and not exclusive: it outlives the consuming connection
        queue = Amqp091Support.unique("cancelled");
        observer.createChannel().queueDeclare(queue, false, false, false, null);
    }

    @AfterEach
    void tearDown() throws Exception {
        if (observer.isOpen()) {
            Channel channel = observer.createChannel();
            channel.queueDelete(queue);
            observer.close();
        }
    }

    /** Publishes {@code m1..mN} with confirms. */
    private void publish(int count) throws Exception {
        Channel channel = observer.createChannel();
        channel.confirmSelect();
        for (int i = 1; i <= count; i++) {
            channel.basicPublish("", queue, null, bytes("m" + i));
        }
        channel.waitForConfirmsOrDie(TIMEOUT.toMillis());
        channel.close();
    }

    private void assertReady(int expected) {
        await().atMost(TIMEOUT).untilAsserted(() ->
            assertThat(Amqp091Support.passive(observer, queue).getMessageCount()).isEqualTo(expected));
    }

    /** A consumer with manual acks and a prefetch of {@code prefetch} that received exactly that many. */
    private Recorder consumeWithPrefetch(int prefetch) throws Exception {
        channel.basicQos(prefetch);
        Recorder consumer = new Recorder(channel);
        channel.basicConsume(queue, false, consumer);
        consumer.awaitExactly(prefetch);
        return consumer;
    }

    /** Takes every message from the queue with no-ack gets: their bodies, each checked for {@code redelivered}. */
    private List<String> drain(int expected, int redeliveredFirst) throws Exception {
        Channel channel = observer.createChannel();
        List<String> bodies = new ArrayList<>();
        GetResponse response;
        while ((response = channel.basicGet(queue, true)) != null) {
            String body = text(response.getBody());
            assertThat(response.getEnvelope().isRedeliver()).as("redelivered: %s", body)
                .isEqualTo(bodies.size() < redeliveredFirst);
            bodies.add(body);
        }
        channel.close();
        assertThat(bodies).hasSize(expected);
        return bodies;
    }

    private static List<String> bodies(int from, int to) {
        List<String> bodies = new ArrayList<>();
        for (int i = from; i <= to; i++) {
            bodies.add("m" + i);
        }
        return bodies;
    }

    @ParameterizedTest(name = "closed by {0} close")
    @ValueSource(strings = {"channel", "connection"})
    void closingRequeuesTheUnackedDeliveriesOfACancelledConsumer(String closedBy) throws Exception {
        publish(10);
        Recorder consumer = consumeWithPrefetch(5);
        String tag = consumer.getConsumerTag();
        channel.basicCancel(tag);
        await().atMost(TIMEOUT).until(() -> consumer.cancelOks.contains(tag));
        assertReady(5);
        if (closedBy.equals("channel")) {
            channel.close();
        } else {
            connection.close();
        }
        assertReady(10);
        assertThat(drain(10, 5)).isEqualTo(bodies(1, 10));
    }

    @Test
    void aCancelledConsumersDeliveriesCanStillBeAckedNackedAndRejected() throws Exception {
        publish(6);
        channel.basicCancel(consumeWithPrefetch(6).getConsumerTag());
        channel.basicAck(1, false);
        channel.basicNack(2, false, false); // dropped
        channel.basicReject(3, true); // back to the queue
        channel.basicAck(5, true); // 4 and 5
        assertReady(1);
        channel.close();
        assertReady(2);
        assertThat(drain(2, 2)).containsExactly("m3", "m6");
    }

    @Test
    void recoverAfterTheCancelRequeuesWhatIsUnackedAndItsTagsAreGone() throws Exception {
        publish(4);
        channel.basicCancel(consumeWithPrefetch(4).getConsumerTag());
        channel.basicAck(2, false);
        channel.basicRecover(true); // no consumer left on the channel: they wait in the queue
        assertReady(3);
        channel.basicAck(1, false);
        Amqp091Support.awaitChannelError(channel, AMQP.PRECONDITION_FAILED, "PRECONDITION_FAILED - unknown delivery tag 1");
        assertReady(3);
        assertThat(drain(3, 3)).containsExactly("m1", "m3", "m4");
    }

    /**
     * Gets, a cancelled consumer and a live one on one queue, and a consumer of another connection waiting on it: the
     * queue takes back the closed channel's deliveries together, so the waiting consumer gets them in their order.
     */
    @Test
    void getsAndACancelledAndALiveConsumerOnOneQueueGoBackTogetherInOrder() throws Exception {
        publish(12);
        assertThat(text(channel.basicGet(queue, false).getBody())).isEqualTo("m1");
        assertThat(text(channel.basicGet(queue, false).getBody())).isEqualTo("m2");
        channel.basicQos(3);
        Recorder cancelled = new Recorder(channel);
        channel.basicConsume(queue, false, cancelled);
        cancelled.awaitExactly(3); // m3..m5
        channel.basicCancel(cancelled.getConsumerTag());
        Recorder live = new Recorder(channel);
        channel.basicConsume(queue, false, live);
        live.awaitExactly(3); // m6..m8
        Recorder waiting = new Recorder(observer.createChannel());
        waiting.getChannel().basicConsume(queue, true, waiting);
        waiting.awaitExactly(4); // m9..m12
        channel.close();
        List<Delivery> all = waiting.awaitExactly(12);
        assertThat(waiting.bodies()).isEqualTo(concat(bodies(9, 12), bodies(1, 8)));
        assertThat(all.subList(4, 12)).allSatisfy(d -> assertThat(d.getEnvelope().isRedeliver()).isTrue());
    }

    private static List<String> concat(List<String> first, List<String> second) {
        List<String> all = new ArrayList<>(first);
        all.addAll(second);
        return all;
    }

    /**
     * A queue deleted under a cancelled consumer and under a live one (which hears the broker's basic.cancel): their
     * deliveries went with the queue, and acking them afterwards is no error.
     */
    @Test
    void deliveriesOfADeletedQueueCanStillBeAcked() throws Exception {
        publish(2);
        String other = Amqp091Support.unique("deleted");
        observer.createChannel().queueDeclare(other, false, false, false, null);
        Amqp091Support.sendToQueue(observer, other, "o1", "o2");
        channel.basicQos(2);
        Recorder cancelled = new Recorder(channel);
        channel.basicConsume(queue, false, cancelled);
        cancelled.awaitExactly(2);
        channel.basicCancel(cancelled.getConsumerTag());
        Recorder live = new Recorder(channel);
        channel.basicConsume(other, false, live);
        live.awaitExactly(2);
        Channel admin = observer.createChannel();
        admin.queueDelete(queue);
        admin.queueDelete(other);
        await().atMost(TIMEOUT).until(() -> live.brokerCancels.size() == 1);
        channel.basicAck(1, false);
        channel.basicAck(4, true);
        channel.basicQos(1); // a round trip: the acks were taken
        assertThat(channel.isOpen()).isTrue();
        observer.createChannel().queueDeclare(queue, false, false, false, null); // for the tear-down
    }

    /** 2,000 unacked deliveries of a cancelled consumer, some acked after the cancel: none lost, the rest in order. */
    @ParameterizedTest(name = "closed by {0} close")
    @ValueSource(strings = {"channel", "connection"})
    void twoThousandUnackedDeliveriesOfACancelledConsumerAllComeBackInOrder(String closedBy) throws Exception {
        int count = 2000;
        publish(count);
        Recorder consumer = new Recorder(channel);
        channel.basicConsume(queue, false, consumer);
        await().atMost(TIMEOUT.multipliedBy(2)).until(() -> consumer.deliveries.size() == count);
        channel.basicCancel(consumer.getConsumerTag());
        List<String> expected = new ArrayList<>();
        for (Delivery delivery : consumer.deliveries) {
            long tag = delivery.getEnvelope().getDeliveryTag();
            if (tag % 100 == 0) {
                channel.basicAck(tag, false);
            } else {
                expected.add(text(delivery.getBody()));
            }
        }
        assertThat(expected).hasSize(count - count / 100);
        if (closedBy.equals("channel")) {
            channel.close();
        } else {
            connection.close();
        }
        assertReady(expected.size());
        assertThat(drain(expected.size(), expected.size())).isEqualTo(expected);
    }

    @Test
    void inATransactionAcksOfACancelledConsumerThatAreNotCommittedComeBackOnClose() throws Exception {
        publish(3);
        channel.txSelect();
        channel.basicCancel(consumeWithPrefetch(3).getConsumerTag());
        channel.basicAck(2, true);
        channel.close();
        assertReady(3);
        assertThat(drain(3, 3)).isEqualTo(bodies(1, 3));
    }
}
