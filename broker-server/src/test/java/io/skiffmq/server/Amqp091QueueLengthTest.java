package io.skiffmq.server;

import static io.skiffmq.server.Amqp091Support.TIMEOUT;
import static io.skiffmq.server.Amqp091Support.await;
import static io.skiffmq.server.Amqp091Support.bytes;
import static io.skiffmq.server.Amqp091Support.text;
import static org.assertj.core.api.Assertions.assertThat;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.GetResponse;
import io.skiffmq.server.Amqp091Support.Recorder;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * {@code x-max-length} and {@code x-max-length-bytes} (body bytes only) with each {@code x-overflow}: drop-head drops
 * the oldest, dead-lettered as {@code maxlen}; reject-publish nacks what would go over and acks the rest;
 * reject-publish-dlx nacks it and dead-letters it. RabbitMQ's rules ({@code rabbit_amqqueue_process}:
 * {@code will_overflow/2} before a message is taken, {@code maybe_drop_head/2} after).
 */
class Amqp091QueueLengthTest extends Amqp091ArgumentsTestBase {

    /** Publishes each body on a confirming channel of its own and waits for every confirm. */
    private Amqp091Confirms publishAll(String queue, AMQP.BasicProperties properties, String... bodies)
            throws Exception {
        Channel publisher = connection.createChannel();
        Amqp091Confirms confirms = Amqp091Confirms.on(publisher);
        for (String body : bodies) {
            confirms.publish(publisher, "", queue, properties, bytes(body));
        }
        await().atMost(TIMEOUT).until(() -> confirms.outstanding.isEmpty());
        assertThat(confirms.errors).isEmpty();
        publisher.close();
        return confirms;
    }

    @Test
    void dropHeadKeepsTheNewestMessages() throws Exception {
        String q = queue("drop-head", "x-max-length", 3);
        Amqp091Confirms confirms = publishAll(q, null, "m1", "m2", "m3", "m4", "m5");
        assertThat(confirms.acked).containsExactly(1L, 2L, 3L, 4L, 5L);
        assertThat(ready(q)).isEqualTo(3);
        assertThat(getAll(q)).containsExactly("m3", "m4", "m5");
    }

    @Test
    void maxLengthBytesCountsBodiesOnlyAndDropHeadDropsUntilUnder() throws Exception {
        String q = queue("bytes", "x-max-length-bytes", 10);
        // headers many times the limit do not count
        AMQP.BasicProperties heavy = new AMQP.BasicProperties.Builder()
            .headers(Map.of("padding", "x".repeat(1000))).build();
        publishAll(q, heavy, "aaaa", "bbbb");
        assertThat(ready(q)).isEqualTo(2);
        publishAll(q, heavy, "cccc"); // 12 bytes: the oldest goes
        assertThat(ready(q)).isEqualTo(2);
        publishAll(q, null, "dd"); // 10 bytes: fits exactly
        assertThat(ready(q)).isEqualTo(3);
        assertThat(getAll(q)).containsExactly("bbbb", "cccc", "dd");

        // a message over the limit on its own: the oldest go, then it goes too
        publishAll(q, null, "eeee", "0123456789X");
        assertThat(ready(q)).isZero();
    }

    @Test
    void rejectPublishNacksWhatWouldGoOverAndAcksTheRest() throws Exception {
        String q = queue("reject", "x-max-length", 2, "x-overflow", "reject-publish");
        Amqp091Confirms confirms = publishAll(q, null, "m1", "m2", "m3", "m4");
        assertThat(confirms.acked).containsExactly(1L, 2L);
        assertThat(confirms.nacked).containsExactly(3L, 4L);
        assertThat(ready(q)).isEqualTo(2);

        GetResponse first = channel.basicGet(q, true);
        assertThat(text(first.getBody())).isEqualTo("m1");
        confirms = publishAll(q, null, "m5", "m6");
        assertThat(confirms.acked).containsExactly(1L);
        assertThat(confirms.nacked).containsExactly(2L);
        assertThat(getAll(q)).containsExactly("m2", "m5");
    }

    @Test
    void rejectPublishByBytesRefusesAMessageThatWouldTakeTheQueueOver() throws Exception {
        String q = queue("reject-bytes", "x-max-length-bytes", 10, "x-overflow", "reject-publish");
        Amqp091Confirms confirms = publishAll(q, null, "aaaa", "bbbb", "cccc", "cc", "d");
        // 4, 8, 12 (refused), 10, 11 (refused): the new message's size counts, not only the queue being full
        assertThat(confirms.acked).containsExactly(1L, 2L, 4L);
        assertThat(confirms.nacked).containsExactly(3L, 5L);
        assertThat(getAll(q)).containsExactly("aaaa", "bbbb", "cc");

        confirms = publishAll(q, null, "0123456789X", "0123456789");
        assertThat(confirms.nacked).as("too big for the empty queue").containsExactly(1L);
        assertThat(confirms.acked).containsExactly(2L);
    }

    @Test
    void withoutConfirmsARefusedMessageIsDroppedQuietly() throws Exception {
        String q = queue("reject-quiet", "x-max-length", 1, "x-overflow", "reject-publish");
        Channel publisher = connection.createChannel();
        publisher.basicPublish("", q, null, bytes("m1"));
        publisher.basicPublish("", q, null, bytes("m2"));
        await().atMost(TIMEOUT).until(() -> ready(q) == 1);
        assertThat(publisher.isOpen()).isTrue();
        assertThat(getAll(q)).containsExactly("m1");
    }

    @Test
    void rejectPublishDlxNacksAndDeadLettersTheRefused() throws Exception {
        String dlq = queue("dlq");
        String q = queue("reject-dlx", "x-max-length", 1, "x-overflow", "reject-publish-dlx",
            "x-dead-letter-exchange", "", "x-dead-letter-routing-key", dlq);
        long from = time.millis();
        Amqp091Confirms confirms = publishAll(q, null, "m1", "m2");
        long to = time.millis();
        assertThat(confirms.acked).containsExactly(1L);
        assertThat(confirms.nacked).containsExactly(2L);
        assertThat(getAll(q)).containsExactly("m1");

        GetResponse dead = channel.basicGet(dlq, true);
        assertThat(text(dead.getBody())).isEqualTo("m2");
        assertThat(dead.getEnvelope().getExchange()).isEmpty();
        assertThat(dead.getEnvelope().getRoutingKey()).isEqualTo(dlq);
        List<Map<String, Object>> deaths = xDeath(dead.getProps());
        assertThat(deaths).hasSize(1);
        assertDeath(deaths.get(0), q, "maxlen", 1, "", List.of(q), null, from, to);
        assertFirstAndLast(dead.getProps(), "maxlen", q, "", "maxlen", q, "");
        assertThat(channel.basicGet(dlq, true)).isNull();
    }

    @Test
    void dropHeadDeadLettersTheDroppedAsMaxlen() throws Exception {
        String dlq = queue("dlq");
        String q = queue("drop-dlx", "x-max-length", 1, "x-dead-letter-exchange", "",
            "x-dead-letter-routing-key", dlq);
        long from = time.millis();
        publishAll(q, null, "m1", "m2", "m3");
        long to = time.millis();
        assertThat(getAll(q)).containsExactly("m3");
        await().atMost(TIMEOUT).until(() -> ready(dlq) == 2);
        GetResponse first = channel.basicGet(dlq, true);
        assertThat(text(first.getBody())).isEqualTo("m1");
        assertDeath(xDeath(first.getProps()).get(0), q, "maxlen", 1, "", List.of(q), null, from, to);
        assertThat(text(channel.basicGet(dlq, true).getBody())).isEqualTo("m2");
    }

    @Test
    void aRequeuePastTheLimitDropsTheHeadWhateverRequeuesIt() throws Exception {
        // the unacked ones go back ahead of the newer ones, past the limit: the two at the head die, as maxlen
        for (String how : List.of("nack", "reject", "channel close", "recover")) {
            String dlq = queue("dlq");
            String q = queue("requeue", "x-max-length", 2, "x-dead-letter-exchange", "",
                "x-dead-letter-routing-key", dlq);
            publishAll(q, null, "old1", "old2");
            Channel holder = connection.createChannel();
            long first = holder.basicGet(q, false).getEnvelope().getDeliveryTag();
            long second = holder.basicGet(q, false).getEnvelope().getDeliveryTag();
            publishAll(q, null, "new1", "new2");
            switch (how) {
                case "nack" -> holder.basicNack(second, true, true);
                case "reject" -> {
                    holder.basicReject(first, true);
                    holder.basicReject(second, true);
                }
                case "channel close" -> holder.close();
                default -> holder.basicRecover(true);
            }
            await().atMost(TIMEOUT).until(() -> ready(dlq) == 2);
            assertThat(getAll(q)).as(how).containsExactly("new1", "new2");
            GetResponse dead = channel.basicGet(dlq, true);
            assertThat(text(dead.getBody())).as(how).isEqualTo("old1");
            assertThat(xDeath(dead.getProps()).get(0).get("reason")).as(how).hasToString("maxlen");
            assertThat(getAll(dlq)).as(how).containsExactly("old2");
            if (holder.isOpen()) {
                holder.close();
            }
        }
    }

    @Test
    void aRejectPublishQueueTakesARequeueBackPastItsLimit() throws Exception {
        // rabbit_amqqueue_process:maybe_drop_head/1 drops nothing for reject-publish: the queue holds one more
        String q = queue("requeue-reject", "x-max-length", 1, "x-overflow", "reject-publish");
        publishAll(q, null, "m1");
        Channel holder = connection.createChannel();
        long tag = holder.basicGet(q, false).getEnvelope().getDeliveryTag();
        publishAll(q, null, "m2");
        holder.basicNack(tag, false, true);
        await().atMost(TIMEOUT).until(() -> ready(q) == 2);
        Channel publisher = connection.createChannel();
        Amqp091Confirms confirms = Amqp091Confirms.on(publisher);
        confirms.publish(publisher, "", q, null, bytes("m3"));
        await().atMost(TIMEOUT).until(() -> confirms.outstanding.isEmpty());
        assertThat(confirms.nacked).as("still full").containsExactly(1L);
        assertThat(getAll(q)).containsExactly("m1", "m2");
    }

    @Test
    void aQueueOfLengthZeroKeepsNothingButAWaitingConsumerStillGetsIt() throws Exception {
        String q = queue("zero", "x-max-length", 0);
        publishAll(q, null, "dropped");
        assertThat(ready(q)).isZero();

        Channel consuming = connection.createChannel();
        Recorder recorder = new Recorder(consuming);
        consuming.basicConsume(q, true, recorder);
        publishAll(q, null, "delivered");
        assertThat(recorder.awaitExactly(1)).extracting(d -> text(d.getBody())).containsExactly("delivered");
    }
}
