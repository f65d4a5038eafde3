package io.skiffmq.server;

import static io.skiffmq.server.Amqp091Support.TIMEOUT;
import static io.skiffmq.server.Amqp091Support.await;
import static io.skiffmq.server.Amqp091Support.bytes;
import static io.skiffmq.server.Amqp091Support.channelError;
import static io.skiffmq.server.Amqp091Support.text;
import static org.assertj.core.api.Assertions.assertThat;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.Delivery;
import io.skiffmq.server.Amqp091Support.Recorder;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Who gets which message in what order: priority queues ({@code x-max-priority}, a higher priority first, one above
 * the maximum counted as the maximum), a single active consumer ({@code x-single-active-consumer}: the first
 * consumer gets everything, the next in line takes over when it goes, with what it left unacknowledged), and
 * consumer priorities ({@code x-priority}: the highest with room is served first).
 */
class Amqp091DeliveryOrderTest extends Amqp091ArgumentsTestBase {

    private static AMQP.BasicProperties priority(Integer priority) {
        return new AMQP.BasicProperties.Builder().priority(priority).build();
    }

    private static List<String> bodies(List<Delivery> deliveries) {
        return deliveries.stream().map(d -> text(d.getBody())).toList();
    }

    @Test
    void higherPrioritiesGoFirstAndOnesAboveTheMaximumCountAsTheMaximum() throws Exception {
        String q = queue("priorities", "x-max-priority", 5);
        Channel publisher = connection.createChannel();
        publisher.confirmSelect();
        Object[][] messages = {{0, "a0"}, {3, "b3"}, {5, "c5"}, {9, "d9"}, {null, "e-none"}, {1, "f1"}, {5, "g5"}};
        for (Object[] m : messages) {
            publisher.basicPublish("", q, priority((Integer) m[0]), bytes((String) m[1]));
        }
        publisher.waitForConfirmsOrDie(TIMEOUT.toMillis());
        assertThat(ready(q)).isEqualTo(7);
        // 9 is capped at 5 and waits behind the 5 before it; no priority is 0
        assertThat(channel.basicGet(q, true).getProps().getPriority()).isEqualTo(5);
        assertThat(text(channel.basicGet(q, true).getBody())).isEqualTo("d9");
        assertThat(getAll(q)).containsExactly("g5", "b3", "f1", "a0", "e-none");
    }

    @Test
    void withoutMaxPriorityPrioritiesAreIgnored() throws Exception {
        String q = queue("no-priorities");
        send("", q, priority(0), "low");
        send("", q, priority(9), "high");
        assertThat(getAll(q)).containsExactly("low", "high");
    }

    @Test
    void aSingleActiveConsumerGetsEverythingAndTheNextInLineTakesOver() throws Exception {
        String q = queue("single", "x-single-active-consumer", true);
        Connection first = target.factory().newConnection();
        Connection others = target.factory().newConnection();
        try {
            Channel a = first.createChannel();
            Channel b = others.createChannel();
            Channel c = others.createChannel();
            Recorder recorderA = new Recorder(a);
            Recorder recorderB = new Recorder(b);
            Recorder recorderC = new Recorder(c);
            a.basicConsume(q, false, recorderA);
            String tagB = b.basicConsume(q, false, recorderB);
            c.basicConsume(q, false, recorderC);
            assertThat(channel.queueDeclarePassive(q).getConsumerCount()).as("all three count").isEqualTo(3);

            send(q, "m1", "m2", "m3");
            List<Delivery> toA = recorderA.awaitExactly(3);
            assertThat(bodies(toA)).containsExactly("m1", "m2", "m3");
            assertThat(recorderB.deliveries).isEmpty();
            assertThat(recorderC.deliveries).isEmpty();

            // A goes with two unacknowledged: they go to B, the next in line, redelivered
            a.basicAck(toA.get(0).getEnvelope().getDeliveryTag(), false);
            first.close();
            List<Delivery> toB = recorderB.awaitExactly(2);
            assertThat(bodies(toB)).containsExactly("m2", "m3");
            assertThat(toB).allMatch(d -> d.getEnvelope().isRedeliver());
            assertThat(recorderC.deliveries).isEmpty();
            b.basicAck(recorderB.lastTag(), true);

            send(q, "m4");
            assertThat(bodies(recorderB.awaitExactly(3))).endsWith("m4");
            // B cancels holding m4: C takes over for what comes next; m4 stays B's to settle
            b.basicCancel(tagB);
            send(q, "m5");
            List<Delivery> toC = recorderC.awaitExactly(1);
            assertThat(bodies(toC)).containsExactly("m5");
            assertThat(toC.get(0).getEnvelope().isRedeliver()).isFalse();
            b.basicAck(recorderB.lastTag(), false);
            c.basicAck(recorderC.lastTag(), false);
            await().atMost(TIMEOUT).until(() -> channel.queueDeclarePassive(q).getConsumerCount() == 1);
            assertThat(ready(q)).isZero();
        } finally {
            if (first.isOpen()) {
                first.close();
            }
            others.close();
        }
    }

    @Test
    void theConsumerOfHighestPriorityWithRoomIsServedFirst() throws Exception {
        String q = queue("consumer-priorities");
        Channel low = connection.createChannel();
        Channel high = connection.createChannel();
        low.basicQos(10);
        high.basicQos(2);
        Recorder toLow = new Recorder(low);
        Recorder toHigh = new Recorder(high);
        low.basicConsume(q, false, "", false, false, Map.of("x-priority", 0), toLow);
        high.basicConsume(q, false, "", false, false, Map.of("x-priority", 10), toHigh);

        send(q, "m1", "m2", "m3", "m4", "m5");
        assertThat(bodies(toHigh.awaitExactly(2))).containsExactly("m1", "m2");
        assertThat(bodies(toLow.awaitExactly(3))).containsExactly("m3", "m4", "m5");

        // room again for the high one: the next message is its; published on its own channel, after the ack
        high.basicAck(toHigh.deliveries.get(0).getEnvelope().getDeliveryTag(), false);
        high.basicPublish("", q, null, bytes("m6"));
        assertThat(bodies(toHigh.awaitExactly(3))).endsWith("m6");
        assertThat(toLow.deliveries).hasSize(3);
    }

    @Test
    void aConsumerPriorityMustBeAnInteger() throws Exception {
        String q = queue("bad-priority");
        channelError(channel, AMQP.PRECONDITION_FAILED, "PRECONDITION_FAILED - invalid arg 'x-priority' for queue '" + q
                + "' in vhost '/': \"expected integer, got longstr\"",
            () -> channel.basicConsume(q, true, "", false, false, Map.of("x-priority", "high"),
                new Recorder(channel)));
    }
}
