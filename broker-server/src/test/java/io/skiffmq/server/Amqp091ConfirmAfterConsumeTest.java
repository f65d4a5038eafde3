package io.skiffmq.server;

import static io.skiffmq.server.Amqp091Support.QUIET;
import static io.skiffmq.server.Amqp091Support.TIMEOUT;
import static io.skiffmq.server.Amqp091Support.await;
import static io.skiffmq.server.Amqp091Support.bytes;
import static io.skiffmq.server.Amqp091Support.channelError;
import static io.skiffmq.server.Amqp091Support.text;
import static org.assertj.core.api.Assertions.assertThat;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.GetResponse;
import io.skiffmq.server.Amqp091Support.Recorder;
import java.util.Map;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * SkiffMQ's own {@code x-confirm-after-consume}: a publisher's confirm for a message to such a queue waits until a
 * consumer acknowledged it (an ack), and is a nack when the message leaves without being consumed: rejected without
 * requeue, expired, dropped for length, purged, deleted with its queue. A message routed to several such queues is
 * acked once every one of them had it consumed. Not RabbitMQ's, so SkiffMQ only.
 */
class Amqp091ConfirmAfterConsumeTest extends Amqp091ArgumentsTestBase {
    private static final String ARGUMENT = "x-confirm-after-consume";
    private Channel publisher;
    private Amqp091Confirms confirms;

    @BeforeEach
    void confirming() throws Exception {
        Assumptions.assumeFalse(target.external(), "SkiffMQ's own argument");
        publisher = connection.createChannel();
        confirms = Amqp091Confirms.on(publisher);
    }

    private long publish(String exchange, String routingKey, String body) throws Exception {
        return confirms.publish(publisher, exchange, routingKey, null, bytes(body));
    }

    /** Watches for a while that the tag stays unconfirmed. */
    private void stillWaiting(long tag) {
        await().during(QUIET).atMost(QUIET.plus(TIMEOUT)).until(() -> confirms.outstanding.contains(tag));
    }

    private void awaitAcked(long tag) {
        await().atMost(TIMEOUT).until(() -> confirms.acked.contains(tag));
        assertThat(confirms.errors).isEmpty();
    }

    private void awaitNacked(long tag) {
        await().atMost(TIMEOUT).until(() -> confirms.nacked.contains(tag));
        assertThat(confirms.errors).isEmpty();
    }

    @Test
    void theConfirmWaitsForTheConsumersAck() throws Exception {
        String q = queue("after-consume", ARGUMENT, true);
        long tag = publish("", q, "m1");
        stillWaiting(tag);
        GetResponse got = channel.basicGet(q, false);
        assertThat(text(got.getBody())).isEqualTo("m1");
        stillWaiting(tag);
        channel.basicAck(got.getEnvelope().getDeliveryTag(), false);
        awaitAcked(tag);
    }

    @Test
    void aRequeueKeepsItWaitingAndARejectionNacks() throws Exception {
        String q = queue("after-consume", ARGUMENT, true);
        long requeued = publish("", q, "requeued, then acked");
        long rejected = publish("", q, "rejected");
        channel.basicReject(channel.basicGet(q, false).getEnvelope().getDeliveryTag(), true);
        stillWaiting(requeued);
        GetResponse again = awaitGet(q, false);
        assertThat(again.getEnvelope().isRedeliver()).isTrue();
        channel.basicAck(again.getEnvelope().getDeliveryTag(), false);
        awaitAcked(requeued);

        channel.basicReject(awaitGet(q, false).getEnvelope().getDeliveryTag(), false);
        awaitNacked(rejected);
    }

    @Test
    void aConsumerThatGoesWithoutAckingLeavesItWaiting() throws Exception {
        String q = queue("after-consume", ARGUMENT, true);
        long tag = publish("", q, "m1");
        try (Connection other = target.factory().newConnection()) {
            Channel consuming = other.createChannel();
            Recorder recorder = new Recorder(consuming);
            consuming.basicConsume(q, false, recorder);
            recorder.awaitDeliveries(1);
        }
        stillWaiting(tag);
        Channel consuming = connection.createChannel();
        Recorder recorder = new Recorder(consuming);
        consuming.basicConsume(q, true, recorder); // auto-ack: consumed as it is sent
        recorder.awaitDeliveries(1);
        awaitAcked(tag);
    }

    @Test
    void purgingOrDeletingTheQueueNacks() throws Exception {
        String purged = queue("purged", ARGUMENT, true);
        long first = publish("", purged, "m1");
        long second = publish("", purged, "m2");
        stillWaiting(second);
        assertThat(channel.queuePurge(purged).getMessageCount()).isEqualTo(2);
        awaitNacked(first);
        awaitNacked(second);

        String deleted = queue("deleted", ARGUMENT, true);
        long third = publish("", deleted, "m3");
        stillWaiting(third);
        channel.queueDelete(deleted);
        awaitNacked(third);
    }

    @Test
    void expiringOrBeingDroppedForLengthNacks() throws Exception {
        String dlq = queue("dead");
        String expiring = queue("expiring", ARGUMENT, true, "x-message-ttl", 100, "x-dead-letter-exchange", "",
            "x-dead-letter-routing-key", dlq);
        long expired = publish("", expiring, "expires");
        await().atMost(TIMEOUT).until(() -> ready(expiring) == 1); // in the queue, its TTL running
        stillWaiting(expired);
        time.advance(100);
        awaitNacked(expired);
        // dead-lettered all the same: the nack tells the publisher no consumer had it
        assertThat(text(awaitGet(dlq, true).getBody())).isEqualTo("expires");

        String bounded = queue("bounded", ARGUMENT, true, "x-max-length", 1);
        long dropped = publish("", bounded, "dropped");
        long kept = publish("", bounded, "kept");
        awaitNacked(dropped);
        stillWaiting(kept);
    }

    @Test
    void routedToSeveralQueuesItIsAckedOnceEveryOneHadItConsumed() throws Exception {
        String fanout = exchange("fanout", "fanout");
        String q1 = queue("q1", ARGUMENT, true);
        String q2 = queue("q2", ARGUMENT, true);
        String plain = queue("plain");
        for (String q : new String[] {q1, q2, plain}) {
            channel.queueBind(q, fanout, "");
        }
        long tag = publish(fanout, "", "to three");
        stillWaiting(tag);
        assertThat(channel.basicGet(q1, true)).isNotNull();
        stillWaiting(tag);
        assertThat(channel.basicGet(q2, true)).isNotNull();
        awaitAcked(tag);

        long rejected = publish(fanout, "", "rejected by one");
        assertThat(channel.basicGet(q1, true)).isNotNull();
        channel.basicReject(awaitGet(q2, false).getEnvelope().getDeliveryTag(), false);
        awaitNacked(rejected);
        assertThat(confirms.acked).containsExactly(tag);
    }

    @Test
    void theArgumentIsABoolean() throws Exception {
        String q = queueName("bad");
        channelError(channel, AMQP.PRECONDITION_FAILED, "PRECONDITION_FAILED - invalid arg '" + ARGUMENT
                + "' for queue '" + q + "' in vhost '/': {unacceptable_type,longstr}",
            () -> channel.queueDeclare(q, false, false, false, Map.of(ARGUMENT, "yes")));
        channel = connection.createChannel();
        String off = queue("off", ARGUMENT, false);
        long tag = publish("", off, "confirmed when queued");
        awaitAcked(tag);
    }
}
