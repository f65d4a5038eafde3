package io.skiffmq.server;

import static io.skiffmq.server.Amqp091Support.TIMEOUT;
import static io.skiffmq.server.Amqp091Support.awaitChannelError;
import static io.skiffmq.server.Amqp091Support.bytes;
import static io.skiffmq.server.Amqp091Support.channelError;
import static io.skiffmq.server.Amqp091Support.unique;
import static org.assertj.core.api.Assertions.assertThat;
import static io.skiffmq.server.Amqp091Support.await;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.MessageProperties;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Publisher confirms: {@code confirm.select}, tags from 1, every tag confirmed exactly once (multiple acks
 * expanded), unroutable messages acked (after their {@code basic.return} when mandatory), persistent messages to a
 * durable queue, nacks when a queue refuses, and confirm and tx mode excluding each other.
 */
class Amqp091ConfirmTest extends Amqp091ClientTest {

    @Test
    void tagsStartAtOneAndEveryTagIsAckedExactlyOnce() throws Exception {
        String queue = channel.queueDeclare().getQueue();
        channel.confirmSelect();
        Amqp091Confirms confirms = new Amqp091Confirms();
        channel.addConfirmListener(confirms);
        assertThat(channel.getNextPublishSeqNo()).isEqualTo(1);
        int count = 500;
        for (int i = 1; i <= count; i++) {
            confirms.published(channel.getNextPublishSeqNo());
            channel.basicPublish("", queue, null, bytes("m" + i));
        }
        assertThat(channel.getNextPublishSeqNo()).isEqualTo(count + 1);
        channel.waitForConfirmsOrDie(TIMEOUT.toMillis());
        await().atMost(TIMEOUT).until(() -> confirms.acked.size() == count);
        assertThat(confirms.errors).isEmpty();
        assertThat(confirms.outstanding).isEmpty();
        assertThat(confirms.nacked).isEmpty();
        assertThat(confirms.acked).hasSize(count).first().isEqualTo(1L);
        assertThat(confirms.acked.last()).isEqualTo(count);
        assertThat(channel.queueDeclarePassive(queue).getMessageCount()).isEqualTo(count);
    }

    @Test
    void confirmSelectTwiceIsFineAndTagsGoOn() throws Exception {
        String queue = channel.queueDeclare().getQueue();
        channel.confirmSelect();
        channel.basicPublish("", queue, null, bytes("m1"));
        channel.confirmSelect();
        assertThat(channel.getNextPublishSeqNo()).isEqualTo(2);
        channel.basicPublish("", queue, null, bytes("m2"));
        channel.waitForConfirmsOrDie(TIMEOUT.toMillis());
    }

    @Test
    void eachChannelCountsItsOwnTags() throws Exception {
        String queue = channel.queueDeclare().getQueue();
        Channel other = connection.createChannel();
        channel.confirmSelect();
        other.confirmSelect();
        Amqp091Confirms mine = new Amqp091Confirms();
        Amqp091Confirms theirs = new Amqp091Confirms();
        channel.addConfirmListener(mine);
        other.addConfirmListener(theirs);
        for (int i = 0; i < 3; i++) {
            mine.published(channel.getNextPublishSeqNo());
            channel.basicPublish("", queue, null, bytes("a"));
            theirs.published(other.getNextPublishSeqNo());
            other.basicPublish("", queue, null, bytes("b"));
        }
        channel.waitForConfirmsOrDie(TIMEOUT.toMillis());
        other.waitForConfirmsOrDie(TIMEOUT.toMillis());
        await().atMost(TIMEOUT).until(() -> mine.acked.size() == 3 && theirs.acked.size() == 3);
        assertThat(mine.acked).containsExactly(1L, 2L, 3L);
        assertThat(theirs.acked).containsExactly(1L, 2L, 3L);
        assertThat(mine.errors).isEmpty();
        assertThat(theirs.errors).isEmpty();
    }

    @Test
    void unroutableMessagesAreAckedAndMandatoryOnesReturnedFirst() throws Exception {
        channel.confirmSelect();
        Amqp091Confirms confirms = new Amqp091Confirms();
        channel.addConfirmListener(confirms);
        channel.addReturnListener(r -> confirms.events.add("return " + Amqp091Support.text(r.getBody())));
        confirms.published(1);
        channel.basicPublish("amq.direct", "no-binding", false, null, bytes("dropped"));
        channel.waitForConfirmsOrDie(TIMEOUT.toMillis());
        confirms.published(2);
        channel.basicPublish("amq.direct", "no-binding", true, null, bytes("returned"));
        channel.waitForConfirmsOrDie(TIMEOUT.toMillis());
        await().atMost(TIMEOUT).until(() -> confirms.events.size() == 3);
        // rabbit_channel: the return goes out before the confirm of an unroutable mandatory message
        assertThat(confirms.events).containsExactly("ack 1", "return returned", "ack 2");
        assertThat(confirms.errors).isEmpty();
    }

    @Test
    void persistentMessagesToADurableQueueAreConfirmed() throws Exception {
        String queue = unique("durable-confirms");
        channel.queueDeclare(queue, true, false, false, null);
        try {
            channel.confirmSelect();
            Amqp091Confirms confirms = new Amqp091Confirms();
            channel.addConfirmListener(confirms);
            for (int i = 0; i < 50; i++) {
                confirms.published(channel.getNextPublishSeqNo());
                channel.basicPublish("", queue, MessageProperties.PERSISTENT_TEXT_PLAIN, bytes("p" + i));
            }
            channel.waitForConfirmsOrDie(TIMEOUT.toMillis());
            await().atMost(TIMEOUT).until(() -> confirms.acked.size() == 50);
            assertThat(confirms.errors).isEmpty();
            assertThat(channel.queueDeclarePassive(queue).getMessageCount()).isEqualTo(50);
        } finally {
            channel.queueDelete(queue);
        }
    }

    @Test
    void aMessageToSeveralQueuesIsAckedOnce() throws Exception {
        String q1 = channel.queueDeclare().getQueue();
        String q2 = channel.queueDeclare().getQueue();
        String q3 = channel.queueDeclare().getQueue();
        for (String q : List.of(q1, q2, q3)) {
            channel.queueBind(q, "amq.fanout", "");
        }
        channel.confirmSelect();
        Amqp091Confirms confirms = new Amqp091Confirms();
        channel.addConfirmListener(confirms);
        for (int i = 0; i < 20; i++) {
            confirms.published(channel.getNextPublishSeqNo());
            channel.basicPublish("amq.fanout", "", null, bytes("to three"));
        }
        channel.waitForConfirmsOrDie(TIMEOUT.toMillis());
        await().atMost(TIMEOUT).until(() -> confirms.acked.size() == 20);
        assertThat(confirms.errors).isEmpty();
        for (String q : List.of(q1, q2, q3)) {
            assertThat(channel.queueDeclarePassive(q).getMessageCount()).isEqualTo(20);
        }
    }

    /** A queue that refuses a message nacks it: x-overflow reject-publish at x-max-length. */
    @Test
    void aMessageTheQueueRefusesIsNacked() throws Exception {
        String queue = channel.queueDeclare("", false, true, false,
            Map.of("x-max-length", 1, "x-overflow", "reject-publish")).getQueue();
        channel.confirmSelect();
        Amqp091Confirms confirms = new Amqp091Confirms();
        channel.addConfirmListener(confirms);
        for (int i = 1; i <= 3; i++) {
            confirms.published(i);
            channel.basicPublish("", queue, null, bytes("m" + i));
        }
        await().atMost(TIMEOUT).until(() -> confirms.outstanding.isEmpty());
        assertThat(confirms.acked).containsExactly(1L);
        assertThat(confirms.nacked).containsExactly(2L, 3L);
        assertThat(confirms.errors).isEmpty();
        assertThat(channel.queueDeclarePassive(queue).getMessageCount()).isEqualTo(1);
    }

    @Test
    void publishingToAMissingExchangeInConfirmModeIsAChannelErrorNotANack() throws Exception {
        channel.confirmSelect();
        Amqp091Confirms confirms = new Amqp091Confirms();
        channel.addConfirmListener(confirms);
        String missing = unique("missing");
        channel.basicPublish(missing, "k", null, bytes("lost"));
        awaitChannelError(channel, AMQP.NOT_FOUND, "NOT_FOUND - no exchange '" + missing + "' in vhost '/'");
        assertThat(confirms.acked).isEmpty();
        assertThat(confirms.nacked).isEmpty();
    }

    @Test
    void confirmModeAndTransactionsExcludeEachOther() throws Exception {
        channel.txSelect();
        channelError(channel, AMQP.PRECONDITION_FAILED,
            "PRECONDITION_FAILED - cannot switch from tx to confirm mode", channel::confirmSelect);
        Channel confirming = connection.createChannel();
        confirming.confirmSelect();
        channelError(confirming, AMQP.PRECONDITION_FAILED,
            "PRECONDITION_FAILED - cannot switch from confirm to tx mode", confirming::txSelect);
    }
}
