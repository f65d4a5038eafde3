package io.skiffmq.server;

import static io.skiffmq.server.Amqp091Support.TIMEOUT;
import static io.skiffmq.server.Amqp091Support.unique;
import static org.assertj.core.api.Assertions.assertThat;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.DefaultConsumer;
import com.rabbitmq.client.Envelope;
import com.rabbitmq.client.amqp.Management;
import com.rabbitmq.client.amqp.Message;
import com.rabbitmq.client.amqp.Publisher;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A quorum queue delivers by priority as RabbitMQ 4.0's {@code rabbit_fifo} does: messages of priority above 4 in a
 * high lane, the rest (none, AMQP 1.0's default 4, 0 to 4) in a normal one, served 2:1 (every third message taken
 * from the lanes is the older of their heads), and messages given back first, in the order they came back. A classic
 * queue with {@code x-max-priority} keeps its strict lanes. Messages are published with no consumer, then consumed:
 * the RabbitMQ Java client over 0-9-1 (with RabbitMQ 4.0's own two cases of {@code quorum_queue_SUITE}), RabbitMQ's
 * AMQP 1.0 client.
 */
class QuorumQueuePriorityTest extends Amqp10ClientTestBase {
    /** Published in this order, with these 0-9-1 priorities (null: none). */
    private static final Object[][] MIX = {{null, "n1"}, {4, "n2"}, {5, "h1"}, {9, "h2"}, {200, "h3"}, {5, "h4"},
        {0, "n3"}};

    private Channel channel() throws Exception {
        Channel channel = amqp091.createChannel();
        closeAfter.add(() -> {
            if (channel.isOpen()) {
                channel.close();
            }
        });
        return channel;
    }

    private static void publishMix(Channel channel, String queue) throws Exception {
        channel.confirmSelect();
        for (Object[] m : MIX) {
            channel.basicPublish("", queue, new AMQP.BasicProperties.Builder().priority((Integer) m[0]).build(),
                ((String) m[1]).getBytes(StandardCharsets.UTF_8));
        }
        channel.waitForConfirmsOrDie(TIMEOUT.toMillis());
    }

    private static List<String> getAll(Channel channel, String queue) throws Exception {
        List<String> bodies = new ArrayList<>();
        for (com.rabbitmq.client.GetResponse got; (got = channel.basicGet(queue, true)) != null; ) {
            bodies.add(new String(got.getBody(), StandardCharsets.UTF_8));
        }
        return bodies;
    }

    @Test
    void over091TwoHighThenTheOlderHeadEveryThirdWhereAClassicQueueIsStrict() throws Exception {
        Channel channel = channel();
        String q = unique("qq-priorities");
        channel.queueDeclare(q, true, false, false, Map.of("x-queue-type", "quorum"));
        publishMix(channel, q);
        assertThat(getAll(channel, q)).as("h1 h2, then n1 (older than h3), h3 h4, then the normal lane")
            .containsExactly("h1", "h2", "n1", "h3", "h4", "n2", "n3");

        String classic = unique("classic-priorities");
        channel.queueDeclare(classic, true, false, false, Map.of("x-max-priority", 9));
        publishMix(channel, classic);
        assertThat(getAll(channel, classic)).as("strict lanes, 200 counted as 9")
            .containsExactly("h2", "h3", "h1", "h4", "n2", "n1", "n3");
    }

    /** Publishes each priority's number as its body, then consumes them all as RabbitMQ's validate_queue/3 does. */
    private List<String> publishedThenConsumed(String queue, List<Integer> priorities) throws Exception {
        Channel channel = channel();
        channel.queueDeclare(queue, true, false, false, Map.of("x-queue-type", "quorum"));
        channel.confirmSelect();
        for (int p : priorities) {
            channel.basicPublish("", queue, new AMQP.BasicProperties.Builder().priority(p).build(),
                Integer.toString(p).getBytes(StandardCharsets.UTF_8));
        }
        channel.waitForConfirmsOrDie(TIMEOUT.toMillis());
        channel.basicQos(priorities.size());
        BlockingQueue<String> seen = new LinkedBlockingQueue<>();
        channel.basicConsume(queue, true, bodiesInto(channel, seen));
        return take(seen, priorities.size());
    }

    /** A consumer that adds each body it gets, as text, to {@code seen}. */
    private static DefaultConsumer bodiesInto(Channel channel, BlockingQueue<String> seen) {
        return new DefaultConsumer(channel) {
            @Override
            public void handleDelivery(String consumerTag, Envelope envelope, AMQP.BasicProperties properties,
                    byte[] body) {
                seen.add(new String(body, StandardCharsets.UTF_8));
            }
        };
    }

    /** RabbitMQ 4.0's {@code quorum_queue_SUITE:priority_queue_2_1_ratio}: normal ones first, then high ones. */
    @Test
    void normalOnesPublishedFirstComeOneForTwoHighOnes() throws Exception {
        List<Integer> priorities = List.of(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14);
        assertThat(publishedThenConsumed(unique("qq-2-1-ratio"), priorities)).as("lists_interleave(Lo, Hi)")
            .containsExactly("5", "6", "0", "7", "8", "1", "9", "10", "2", "11", "12", "3", "13", "14", "4");
    }

    /** RabbitMQ 4.0's {@code quorum_queue_SUITE:priority_queue_fifo}: high ones first, then normal ones. */
    @Test
    void highOnesPublishedFirstAllComeFirst() throws Exception {
        List<Integer> priorities = List.of(5, 6, 7, 8, 9, 10, 0, 1, 2, 3, 4);
        assertThat(publishedThenConsumed(unique("qq-priority-fifo"), priorities))
            .containsExactly("5", "6", "7", "8", "9", "10", "0", "1", "2", "3", "4");
    }

    @Test
    void over091ReturnedMessagesGoFirstInTheOrderTheyCameBack() throws Exception {
        Channel channel = channel();
        String q = unique("qq-returns");
        channel.queueDeclare(q, true, false, false, Map.of("x-queue-type", "quorum"));
        channel.confirmSelect();
        for (String body : List.of("n1", "n2", "n3")) {
            channel.basicPublish("", q, null, body.getBytes(StandardCharsets.UTF_8));
        }
        channel.waitForConfirmsOrDie(TIMEOUT.toMillis());
        Channel consuming = channel();
        consuming.basicQos(3);
        BlockingQueue<String> seen = new LinkedBlockingQueue<>();
        consuming.basicConsume(q, false, bodiesInto(consuming, seen));
        List<String> got = take(seen, 3);
        assertThat(got).containsExactly("n1", "n2", "n3");
        for (String body : List.of("h1", "h2")) {
            channel.basicPublish("", q, new AMQP.BasicProperties.Builder().priority(8).build(),
                body.getBytes(StandardCharsets.UTF_8));
        }
        channel.waitForConfirmsOrDie(TIMEOUT.toMillis());
        // the consumer has room for one more each time: what comes back goes out before h1 and h2 can
        consuming.basicNack(3, false, true);
        consuming.basicReject(1, true);
        consuming.basicNack(2, false, true);
        List<String> again = take(seen, 3);
        assertThat(again).as("in the order they came back, ahead of the high lane").containsExactly("n3", "n1", "n2");
        consuming.basicAck(6, true);
        assertThat(take(seen, 2)).containsExactly("h1", "h2");
    }

    @Test
    void overAmqp10PrioritiesAbove4GoTwoToOneAndTheDefault4IsNormal() throws Exception {
        String q = unique("qq-priorities-amqp10");
        management().queue().name(q).type(Management.QueueType.QUORUM).declare();
        Publisher publisher = publisher(q);
        Object[][] mix = {{null, "n1"}, {4, "n2"}, {5, "h1"}, {0, "n3"}, {9, "h2"}, {255, "h3"}};
        for (Object[] m : mix) {
            Message message = publisher.message(bytes((String) m[1]));
            if (m[0] != null) {
                message.priority((byte) (int) (Integer) m[0]);
            }
            assertThat(publish(publisher, message).poll(10, TimeUnit.SECONDS)).isEqualTo(Publisher.Status.ACCEPTED);
        }
        BlockingQueue<Message> seen = new LinkedBlockingQueue<>();
        consumer(q, seen, (context, message) -> context.accept());
        List<String> bodies = new ArrayList<>();
        for (int i = 0; i < mix.length; i++) {
            Message message = seen.poll(10, TimeUnit.SECONDS);
            assertThat(message).as("message " + i).isNotNull();
            bodies.add(text(message));
        }
        assertThat(bodies).as("h1 h2, n1 (older than h3), h3, then n2 n3")
            .containsExactly("h1", "h2", "n1", "h3", "n2", "n3");
    }

    private static List<String> take(BlockingQueue<String> seen, int count) throws InterruptedException {
        List<String> got = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            String body = seen.poll(10, TimeUnit.SECONDS);
            assertThat(body).as("delivery " + got.size() + " after " + got).isNotNull();
            got.add(body);
        }
        return got;
    }
}
