package io.skiffmq.server;

import static io.skiffmq.server.Amqp091Support.TIMEOUT;
import static io.skiffmq.server.Amqp091Support.connectionError;
import static io.skiffmq.server.Amqp091Support.sendToQueue;
import static org.assertj.core.api.Assertions.assertThat;
import static io.skiffmq.server.Amqp091Support.await;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import io.skiffmq.server.Amqp091Support.Recorder;
import org.junit.jupiter.api.Test;

/**
 * {@code basic.qos} as RabbitMQ reads it: prefetch-count per consumer (global=false), per channel across its
 * consumers (global=true), both at once, taken at consume time; prefetch-size refused.
 */
class Amqp091QosTest extends Amqp091ClientTest {

    /** An exclusive queue holding {@code count} messages m1..mN. */
    private String queueWith(int count) throws Exception {
        String queue = channel.queueDeclare().getQueue();
        String[] bodies = new String[count];
        for (int i = 0; i < count; i++) {
            bodies[i] = "m" + (i + 1);
        }
        sendToQueue(connection, queue, bodies);
        return queue;
    }

    @Test
    void aConsumerGetsExactlyItsPrefetchAndMoreAsItAcks() throws Exception {
        String queue = queueWith(10);
        channel.basicQos(3);
        Recorder consumer = new Recorder(channel);
        channel.basicConsume(queue, false, consumer);
        consumer.awaitExactly(3);
        assertThat(channel.queueDeclarePassive(queue).getMessageCount()).isEqualTo(7);

        channel.basicAck(1, false);
        consumer.awaitExactly(4);
        channel.basicAck(4, true); // 2, 3 and 4: three more slots
        consumer.awaitExactly(7);
        channel.basicAck(7, true);
        consumer.awaitExactly(10);
        assertThat(consumer.bodies()).containsExactly("m1", "m2", "m3", "m4", "m5", "m6", "m7", "m8", "m9", "m10");
    }

    @Test
    void aNackWithRequeueFreesTheSlotAndTheMessageComesBack() throws Exception {
        String queue = queueWith(2);
        channel.basicQos(1);
        Recorder consumer = new Recorder(channel);
        channel.basicConsume(queue, false, consumer);
        consumer.awaitExactly(1);
        channel.basicNack(1, false, true);
        consumer.awaitExactly(2);
        assertThat(consumer.bodies()).containsExactly("m1", "m1");
        assertThat(consumer.deliveries.get(1).getEnvelope().isRedeliver()).isTrue();
    }

    @Test
    void perConsumerPrefetchAppliesToEachConsumerOfTheChannel() throws Exception {
        String q1 = queueWith(5);
        String q2 = queueWith(5);
        channel.basicQos(2, false);
        Recorder c1 = new Recorder(channel);
        Recorder c2 = new Recorder(channel);
        channel.basicConsume(q1, false, c1);
        channel.basicConsume(q2, false, c2);
        c1.awaitExactly(2);
        c2.awaitExactly(2);
    }

    @Test
    void prefetchIsTakenWhenTheConsumerStarts() throws Exception {
        String q1 = queueWith(6);
        String q2 = queueWith(6);
        channel.basicQos(2);
        Recorder before = new Recorder(channel);
        channel.basicConsume(q1, false, before);
        before.awaitExactly(2);
        channel.basicQos(4);
        Recorder after = new Recorder(channel);
        channel.basicConsume(q2, false, after);
        after.awaitExactly(4);
        // rabbit_channel keeps consumer_prefetch for the next consumers; the running one keeps its 2
        channel.basicAck(before.deliveries.get(0).getEnvelope().getDeliveryTag(), false);
        before.awaitExactly(3);
    }

    @Test
    void prefetchZeroIsUnlimited() throws Exception {
        String queue = queueWith(20);
        channel.basicQos(0);
        Recorder consumer = new Recorder(channel);
        channel.basicConsume(queue, false, consumer);
        consumer.awaitExactly(20);
    }

    @Test
    void autoAckConsumersIgnorePrefetch() throws Exception {
        String queue = queueWith(10);
        channel.basicQos(1);
        Recorder consumer = new Recorder(channel);
        channel.basicConsume(queue, true, consumer);
        consumer.awaitExactly(10);
        assertThat(channel.queueDeclarePassive(queue).getMessageCount()).isZero();
    }

    /**
     * Global qos: one limit shared by all consumers of the channel. RabbitMQ 3.x to 4.2 (deprecated feature
     * global_qos, permitted_by_default); RabbitMQ 4.3 denies it by default and reads global=true as global=false
     * (rabbit_channel.erl: is_global_qos_permitted/0).
     */
    @Test
    void globalPrefetchIsSharedByTheChannelsConsumers() throws Exception {
        assumeGlobalQos();
        String q1 = queueWith(5);
        String q2 = queueWith(5);
        channel.basicQos(3, true);
        Recorder c1 = new Recorder(channel);
        Recorder c2 = new Recorder(channel);
        channel.basicConsume(q1, false, c1);
        channel.basicConsume(q2, false, c2);
        await().atMost(TIMEOUT).until(() -> c1.deliveries.size() + c2.deliveries.size() >= 3);
        await().during(Amqp091Support.QUIET).atMost(TIMEOUT)
            .until(() -> c1.deliveries.size() + c2.deliveries.size() == 3);
        assertThat(c1.deliveries.size()).isGreaterThanOrEqualTo(1); // the first consumer started first
        channel.basicAck(1, false);
        await().atMost(TIMEOUT).until(() -> c1.deliveries.size() + c2.deliveries.size() >= 4);
        await().during(Amqp091Support.QUIET).atMost(TIMEOUT)
            .until(() -> c1.deliveries.size() + c2.deliveries.size() == 4);
    }

    /** Both limits at once: each consumer at most its own, all of them together at most the channel's. */
    @Test
    void globalAndPerConsumerPrefetchBothApply() throws Exception {
        assumeGlobalQos();
        String q1 = queueWith(5);
        String q2 = queueWith(5);
        String q3 = queueWith(5);
        channel.basicQos(2, false);
        channel.basicQos(5, true);
        Recorder c1 = new Recorder(channel);
        Recorder c2 = new Recorder(channel);
        Recorder c3 = new Recorder(channel);
        channel.basicConsume(q1, false, c1);
        channel.basicConsume(q2, false, c2);
        channel.basicConsume(q3, false, c3);
        await().atMost(TIMEOUT).until(() -> total(c1, c2, c3) >= 5);
        await().during(Amqp091Support.QUIET).atMost(TIMEOUT).until(() -> total(c1, c2, c3) == 5);
        assertThat(c1.deliveries).hasSizeLessThanOrEqualTo(2);
        assertThat(c2.deliveries).hasSizeLessThanOrEqualTo(2);
        assertThat(c3.deliveries).hasSizeLessThanOrEqualTo(2);
    }

    private static int total(Recorder... recorders) {
        int total = 0;
        for (Recorder r : recorders) {
            total += r.deliveries.size();
        }
        return total;
    }

    private static void assumeGlobalQos() throws Exception {
        org.junit.jupiter.api.Assumptions.assumeFalse(
            target.external() && !Amqp091Support.externalOlderThan(target, 4, 3),
            "RabbitMQ 4.3 denies global qos by default");
    }

    @Test
    void aPrefetchSizeIsNotImplemented() throws Exception {
        // rabbit_channel: basic.qos{prefetch_size = Size} when Size /= 0 is not_implemented, a connection error
        connectionError(connection, AMQP.NOT_IMPLEMENTED, "NOT_IMPLEMENTED - prefetch_size!=0 (1024)",
            () -> channel.basicQos(1024, 10, false));
    }
}
