package io.skiffmq.server;

import static io.skiffmq.server.Amqp091Support.TIMEOUT;
import static io.skiffmq.server.Amqp091Support.awaitChannelError;
import static io.skiffmq.server.Amqp091Support.connectionError;
import static io.skiffmq.server.Amqp091Support.sendToQueue;
import static io.skiffmq.server.Amqp091Support.text;
import static org.assertj.core.api.Assertions.assertThat;
import static io.skiffmq.server.Amqp091Support.await;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Delivery;
import com.rabbitmq.client.GetResponse;
import io.skiffmq.server.Amqp091Support.Recorder;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@code basic.get}, and settling deliveries: ack, nack and reject, single and multiple, with and without requeue;
 * unknown and repeated tags (406); {@code basic.recover}. After settling, the test counts what is left by closing
 * the consuming channel (which requeues whatever it still holds) and declaring the queue passively.
 */
class Amqp091AckTest extends Amqp091ClientTest {
    private String queue;

    @BeforeEach
    void setUp() throws Exception {
        // exclusive, not auto-delete: it outlives the consumers the tests close
        queue = channel.queueDeclare("", false, true, false, null).getQueue();
    }

    /**
     * Closes the channel, which requeues what it holds, and checks the ready messages of the queue come to
     * {@code expected} (the requeue may finish just after close-ok).
     */
    private void assertLeftAfterClose(int expected) throws Exception {
        if (channel.isOpen()) {
            channel.close();
        }
        assertReady(expected);
    }

    private void assertReady(int expected) {
        await().atMost(TIMEOUT).untilAsserted(() ->
            assertThat(Amqp091Support.passive(connection, queue).getMessageCount()).isEqualTo(expected));
    }

    private Recorder consumeAll(int expected) throws Exception {
        Recorder consumer = new Recorder(channel);
        channel.basicConsume(queue, false, consumer);
        consumer.awaitExactly(expected);
        return consumer;
    }

    @Test
    void getReturnsMessagesWithTheCountLeftThenGetEmpty() throws Exception {
        sendToQueue(connection, queue, "m1", "m2", "m3");
        for (int i = 1; i <= 3; i++) {
            GetResponse response = channel.basicGet(queue, false);
            assertThat(text(response.getBody())).isEqualTo("m" + i);
            assertThat(response.getMessageCount()).isEqualTo(3 - i);
            assertThat(response.getEnvelope().getDeliveryTag()).isEqualTo(i);
            assertThat(response.getEnvelope().isRedeliver()).isFalse();
            assertThat(response.getEnvelope().getExchange()).isEmpty();
            assertThat(response.getEnvelope().getRoutingKey()).isEqualTo(queue);
        }
        assertThat(channel.basicGet(queue, false)).as("get-empty").isNull();
        channel.basicAck(3, true);
        assertLeftAfterClose(0);
    }

    @Test
    void getWithAutoAckTakesTheMessage() throws Exception {
        sendToQueue(connection, queue, "m1");
        GetResponse response = channel.basicGet(queue, true);
        assertThat(text(response.getBody())).isEqualTo("m1");
        assertLeftAfterClose(0);
    }

    @Test
    void deliveryTagsCountPerChannelAcrossGetsAndConsumers() throws Exception {
        sendToQueue(connection, queue, "m1", "m2", "m3");
        assertThat(channel.basicGet(queue, false).getEnvelope().getDeliveryTag()).isEqualTo(1);
        Recorder consumer = new Recorder(channel);
        channel.basicConsume(queue, false, consumer);
        assertThat(consumer.awaitExactly(2)).extracting(d -> d.getEnvelope().getDeliveryTag()).containsExactly(2L, 3L);
        Channel other = connection.createChannel();
        String otherQueue = other.queueDeclare().getQueue();
        sendToQueue(connection, otherQueue, "x");
        assertThat(other.basicGet(otherQueue, false).getEnvelope().getDeliveryTag()).as("a channel of its own")
            .isEqualTo(1);
    }

    @Test
    void ackSingleAndMultiple() throws Exception {
        sendToQueue(connection, queue, "m1", "m2", "m3", "m4", "m5");
        consumeAll(5);
        channel.basicAck(2, false);
        channel.basicAck(4, true); // 1, 3 and 4
        assertLeftAfterClose(1);
        assertThat(text(connection.createChannel().basicGet(queue, true).getBody())).isEqualTo("m5");
    }

    @Test
    void ackOfTagZeroWithMultipleAcknowledgesEverything() throws Exception {
        sendToQueue(connection, queue, "m1", "m2", "m3");
        consumeAll(3);
        // AMQP 0-9-1: multiple with delivery tag 0 means every outstanding message
        channel.basicAck(0, true);
        assertLeftAfterClose(0);
    }

    @Test
    void nackMultipleWithRequeueRedeliversInOrder() throws Exception {
        sendToQueue(connection, queue, "m1", "m2", "m3");
        Recorder consumer = consumeAll(3);
        channel.basicNack(3, true, true);
        List<Delivery> all = consumer.awaitExactly(6);
        assertThat(consumer.bodies()).containsExactly("m1", "m2", "m3", "m1", "m2", "m3");
        assertThat(all.subList(3, 6)).allSatisfy(d -> assertThat(d.getEnvelope().isRedeliver()).isTrue());
        assertThat(all.subList(3, 6)).extracting(d -> d.getEnvelope().getDeliveryTag()).containsExactly(4L, 5L, 6L);
        channel.basicAck(6, true);
        assertLeftAfterClose(0);
    }

    @Test
    void nackAndRejectWithoutRequeueDropTheMessage() throws Exception {
        sendToQueue(connection, queue, "m1", "m2", "m3", "m4");
        consumeAll(4);
        channel.basicReject(1, false);
        channel.basicNack(3, true, false); // 2 and 3
        assertLeftAfterClose(1);
    }

    @Test
    void rejectWithRequeueRedelivers() throws Exception {
        sendToQueue(connection, queue, "m1", "m2");
        Recorder consumer = consumeAll(2);
        channel.basicReject(2, true);
        consumer.awaitExactly(3);
        Delivery again = consumer.deliveries.get(2);
        assertThat(text(again.getBody())).isEqualTo("m2");
        assertThat(again.getEnvelope().isRedeliver()).isTrue();
    }

    @Test
    void anUnknownDeliveryTagIsPreconditionFailed() throws Exception {
        sendToQueue(connection, queue, "m1");
        consumeAll(1);
        channel.basicAck(42, false);
        awaitChannelError(channel, AMQP.PRECONDITION_FAILED, "PRECONDITION_FAILED - unknown delivery tag 42");
        assertReady(1); // m1, requeued as the channel closed
    }

    @Test
    void aSecondAckOfATagIsPreconditionFailed() throws Exception {
        sendToQueue(connection, queue, "m1", "m2");
        consumeAll(2);
        channel.basicAck(1, false);
        channel.basicAck(1, false);
        awaitChannelError(channel, AMQP.PRECONDITION_FAILED, "PRECONDITION_FAILED - unknown delivery tag 1");
        assertReady(1); // m2, requeued as the channel closed
    }

    @Test
    void nackAndRejectOfAnUnknownTagArePreconditionFailedToo() throws Exception {
        channel.basicNack(7, false, true);
        awaitChannelError(channel, AMQP.PRECONDITION_FAILED, "PRECONDITION_FAILED - unknown delivery tag 7");
        Channel second = connection.createChannel();
        second.basicReject(9, false);
        awaitChannelError(second, AMQP.PRECONDITION_FAILED, "PRECONDITION_FAILED - unknown delivery tag 9");
    }

    @Test
    void anAckForAnAutoAckDeliveryIsUnknown() throws Exception {
        sendToQueue(connection, queue, "m1");
        Recorder consumer = new Recorder(channel);
        channel.basicConsume(queue, true, consumer);
        consumer.awaitExactly(1);
        channel.basicAck(1, false);
        awaitChannelError(channel, AMQP.PRECONDITION_FAILED, "PRECONDITION_FAILED - unknown delivery tag 1");
    }

    @Test
    void recoverWithRequeueRedeliversEveryUnackedMessage() throws Exception {
        sendToQueue(connection, queue, "m1", "m2", "m3");
        Recorder consumer = consumeAll(3);
        channel.basicAck(2, false);
        channel.basicRecover(true);
        consumer.awaitExactly(5);
        List<Delivery> again = consumer.deliveries.subList(3, 5);
        assertThat(again).extracting(d -> text(d.getBody())).containsExactly("m1", "m3");
        assertThat(again).allSatisfy(d -> assertThat(d.getEnvelope().isRedeliver()).isTrue());
        channel.basicAck(0, true);
        assertLeftAfterClose(0);
    }

    @Test
    void recoverWithoutRequeueIsNotImplemented() throws Exception {
        // rabbit_channel: basic.recover{requeue = false} goes to basic.recover_async, not_implemented
        connectionError(connection, AMQP.NOT_IMPLEMENTED, "NOT_IMPLEMENTED - requeue=false",
            () -> channel.basicRecover(false));
    }
}
