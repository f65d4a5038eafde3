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
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@code basic.qos} as RabbitMQ reads it: prefetch-count per consumer (global=false), taken at consume time; per
 * channel across its consumers (global=true) as rabbit_limiter counts: from the channel's unacked deliveries when it
 * comes, for the consumers there already, fairly among them, no-ack ones waiting at the limit without counting, gets
 * neither; both at once; prefetch-size refused. RabbitMQ's own QosTests (Java client) check the same points.
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

    /** Acks every delivery {@code recorder} has, one by one, from the first not acked yet. */
    private void ackFrom(Recorder recorder, int from) throws Exception {
        for (int i = from; i < recorder.deliveries.size(); i++) {
            channel.basicAck(recorder.deliveries.get(i).getEnvelope().getDeliveryTag(), false);
        }
    }

    /** rabbit_limiter's count starts at the channel's unacked deliveries when the first global limit comes. */
    @Test
    void aGlobalLimitCountsWhatTheChannelHoldsUnackedAlready() throws Exception {
        assumeGlobalQos();
        String queue = queueWith(20);
        channel.basicQos(5);
        Recorder consumer = new Recorder(channel);
        channel.basicConsume(queue, false, consumer);
        consumer.awaitExactly(5);
        channel.basicQos(3, true);
        channel.basicAck(1, false);
        consumer.awaitExactly(5); // 4 unacked, limit 3
        channel.basicAck(3, true); // 2 and 3: 2 unacked
        consumer.awaitExactly(6);
        assertThat(consumer.bodies()).last().isEqualTo("m6");
    }

    /** A consumer there before the limit waits for it too (rabbit_channel's activate_limit_all). */
    @Test
    void aGlobalLimitSetAfterConsumeHoldsTheConsumersThereAlready() throws Exception {
        assumeGlobalQos();
        String queue = channel.queueDeclare().getQueue();
        Recorder consumer = new Recorder(channel);
        channel.basicConsume(queue, false, consumer);
        Recorder autoAck = new Recorder(channel);
        String other = channel.queueDeclare().getQueue();
        channel.basicConsume(other, true, autoAck);
        channel.basicQos(1, true);
        sendToQueue(connection, queue, "m1", "m2", "m3");
        consumer.awaitExactly(1);
        sendToQueue(connection, other, "n1");
        autoAck.awaitExactly(0); // at the limit: no-ack consumers wait too
        channel.basicAck(1, false);
        consumer.awaitExactly(2);
        channel.basicAck(2, false);
        consumer.awaitExactly(3);
        channel.basicAck(3, false);
        autoAck.awaitExactly(1);
    }

    /** Deliveries to a no-ack consumer take nothing from the limit (RabbitMQ's QosTests.noAckNoAlterLimit). */
    @Test
    void noAckDeliveriesDoNotCountAgainstAGlobalLimit() throws Exception {
        assumeGlobalQos();
        String queue = queueWith(10);
        channel.basicQos(1, true);
        Recorder consumer = new Recorder(channel);
        channel.basicConsume(queue, true, consumer);
        consumer.awaitExactly(10);
        Recorder acked = new Recorder(channel);
        channel.basicConsume(queueWith(2), false, acked);
        acked.awaitExactly(1);
    }

    /**
     * While the channel's acked deliveries are at the global limit its no-ack consumers wait too, and go on as soon as
     * there is room (RabbitMQ's QosTests.noAckObeysLimit).
     */
    @Test
    void noAckConsumersWaitWhileTheChannelIsAtItsGlobalLimit() throws Exception {
        assumeGlobalQos();
        channel.basicQos(1, true);
        Recorder acked = new Recorder(channel);
        channel.basicConsume(queueWith(2), false, acked);
        acked.awaitExactly(1);
        Recorder autoAck = new Recorder(channel);
        channel.basicConsume(queueWith(3), true, autoAck);
        autoAck.awaitExactly(0);
        channel.basicAck(1, false);
        await().atMost(TIMEOUT).until(() -> autoAck.deliveries.size() == 3 || acked.deliveries.size() == 2);
        ackFrom(acked, 1);
        autoAck.awaitExactly(3);
        acked.awaitExactly(2);
    }

    /**
     * Each of a channel's two consumers gets its turn at a global limit of 1, on one queue or on two, whichever queue
     * the ack freed a slot on.
     */
    @ParameterizedTest(name = "on {0} queue(s)")
    @ValueSource(ints = {1, 2})
    void consumersOfOneChannelShareAGlobalLimitFairly(int queues) throws Exception {
        assumeGlobalQos();
        String q1 = queueWith(30);
        String q2 = queues == 1 ? q1 : queueWith(30);
        channel.basicQos(1, true);
        Recorder c1 = new Recorder(channel);
        Recorder c2 = new Recorder(channel);
        channel.basicConsume(q1, false, c1);
        channel.basicConsume(q2, false, c2);
        for (int n = 1; n <= 20; n++) {
            int expected = n;
            await().atMost(TIMEOUT).until(() -> total(c1, c2) == expected);
            channel.basicAck(n, false);
        }
        await().atMost(TIMEOUT).until(() -> total(c1, c2) == 21);
        // RabbitMQ's own QosTests only ask that no consumer is left behind; we serve the waiting in turn
        assertThat(c1.deliveries.size()).as("c1 of 21").isBetween(7, 14);
        assertThat(c2.deliveries.size()).as("c2 of 21").isBetween(7, 14);
    }

    @Test
    void aGlobalLimitRaisedLoweredAndRemovedTakesEffectAtOnce() throws Exception {
        assumeGlobalQos();
        String queue = queueWith(10);
        channel.basicQos(1, true);
        Recorder consumer = new Recorder(channel);
        channel.basicConsume(queue, false, consumer);
        consumer.awaitExactly(1);
        channel.basicQos(3, true);
        consumer.awaitExactly(3);
        channel.basicQos(1, true);
        channel.basicAck(2, true);
        consumer.awaitExactly(3); // 1 unacked: at the lowered limit
        channel.basicAck(3, false);
        consumer.awaitExactly(4);
        channel.basicQos(0, true);
        consumer.awaitExactly(10);
    }

    /** In a transaction an ack frees its slot at the commit, not before (RabbitMQ's QosTests.permutations). */
    @Test
    void aTransactionsAcksFreeTheirSlotsAtTheCommit() throws Exception {
        assumeGlobalQos();
        String queue = queueWith(3);
        channel.basicQos(1, true);
        channel.txSelect();
        Recorder consumer = new Recorder(channel);
        channel.basicConsume(queue, false, consumer);
        consumer.awaitExactly(1);
        channel.basicAck(1, false);
        consumer.awaitExactly(1);
        channel.txRollback();
        consumer.awaitExactly(1);
        channel.basicAck(1, false);
        channel.txCommit();
        consumer.awaitExactly(2);
    }

    /** basic.get is not limited, and neither its deliveries nor their acks change the count (RabbitMQ's QosTests). */
    @Test
    void getsNeitherWaitForNorCountAgainstAGlobalLimit() throws Exception {
        assumeGlobalQos();
        String queue = queueWith(6);
        channel.basicQos(1, true);
        Recorder consumer = new Recorder(channel);
        channel.basicConsume(queue, false, consumer);
        consumer.awaitExactly(1);
        com.rabbitmq.client.GetResponse got = channel.basicGet(queue, false);
        assertThat(got).as("a get at the limit").isNotNull();
        channel.basicAck(1, false);
        consumer.awaitExactly(2); // the unacked get takes no slot
        channel.basicAck(got.getEnvelope().getDeliveryTag(), false);
        consumer.awaitExactly(2); // nor does its ack give one
    }

    /** A cancelled consumer's unacked deliveries count until acked; recover gives their slots back too. */
    @Test
    void cancelledConsumersAndRecoverUnderAGlobalLimit() throws Exception {
        assumeGlobalQos();
        String queue = channel.queueDeclare("", false, true, false, null).getQueue(); // outlives its first consumer
        sendToQueue(connection, queue, "m1", "m2", "m3", "m4", "m5", "m6");
        channel.basicQos(2, true);
        Recorder first = new Recorder(channel);
        channel.basicConsume(queue, false, first);
        first.awaitExactly(2);
        channel.basicCancel(first.getConsumerTag());
        Recorder second = new Recorder(channel);
        channel.basicConsume(queue, false, second);
        second.awaitExactly(0);
        channel.basicAck(1, false);
        second.awaitExactly(1);
        channel.basicRecover(true); // m2 (the cancelled one's) and m3 go back: two slots free
        second.awaitExactly(3);
        assertThat(second.bodies()).containsExactly("m3", "m2", "m3");
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
