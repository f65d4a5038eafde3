package io.skiffmq.server;

import static io.skiffmq.server.Amqp091Support.QUIET;
import static io.skiffmq.server.Amqp091Support.TIMEOUT;
import static io.skiffmq.server.Amqp091Support.await;
import static io.skiffmq.server.Amqp091Support.bytes;
import static io.skiffmq.server.Amqp091Support.text;
import static org.assertj.core.api.Assertions.assertThat;

import com.rabbitmq.client.Channel;
import com.rabbitmq.client.GetResponse;
import io.skiffmq.server.Amqp091Support.Recorder;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * Message TTLs ({@code x-message-ttl}, a message's own {@code expiration}, the shorter winning) and queue expiry
 * ({@code x-expires}), on {@link #time}. Messages expire at the head only, as in RabbitMQ, and by a timer, so an idle
 * queue lets go of them; a TTL of 0 lets a message through only to a consumer waiting with room. An unused queue
 * goes, and a consumer, a {@code basic.get} or a declaration (passive too) keeps it.
 */
class Amqp091MessageTtlTest extends Amqp091ArgumentsTestBase {

    /**
     * Waits until the queue holds {@code count} ready messages with no client doing anything to it: SkiffMQ's count
     * is read inside the broker; RabbitMQ's by passive declares, which do not expire messages there.
     */
    private void awaitReadyByItself(String queue, int count) {
        if (target.external()) {
            await().atMost(TIMEOUT).until(() -> ready(queue) == count);
        } else {
            await().atMost(TIMEOUT).until(() -> target.broker().vhost("/").queue(queue).readyCount() == count);
        }
    }

    /**
     * Whether the default exchange still routes to the queue: a mandatory publish comes back when it is gone. Unlike
     * a declaration or a get, a publish does not count as using the queue.
     */
    private boolean routable(String queue) throws Exception {
        Channel probe = connection.createChannel();
        try {
            probe.confirmSelect();
            AtomicBoolean returned = new AtomicBoolean();
            probe.addReturnListener(r -> returned.set(true));
            probe.basicPublish("", queue, true, null, bytes("probe"));
            probe.waitForConfirmsOrDie(TIMEOUT.toMillis()); // the return comes before the ack
            return !returned.get();
        } finally {
            probe.close();
        }
    }

    @Test
    void aQueueTtlExpiresTheMessagesOfAnIdleQueue() throws Exception {
        String q = queue("ttl", "x-message-ttl", 200);
        send(q, "m1", "m2");
        if (time.isManual()) {
            time.advance(199);
            assertThat(ready(q)).isEqualTo(2);
        }
        time.advance(1);
        awaitReadyByItself(q, 0);
        assertThat(channel.basicGet(q, true)).isNull();
    }

    @Test
    void aTtlCountsFromEachMessagesArrival() throws Exception {
        Assumptions.assumeTrue(time.isManual(), "moves time between publishes");
        String q = queue("ttl-arrival", "x-message-ttl", 1000);
        send(q, "m1");
        time.advance(500);
        send(q, "m2");
        time.advance(500);
        awaitReadyByItself(q, 1);
        time.advance(499);
        assertThat(ready(q)).isEqualTo(1);
        time.advance(1);
        awaitReadyByItself(q, 0);
    }

    @Test
    void theShorterOfTheQueuesTtlAndTheMessagesOwnWins() throws Exception {
        String q = queue("ttl-shorter", "x-message-ttl", 1000);
        send("", q, expiring(200), "own 200");
        send("", q, expiring(5000), "own 5000");
        send(q, "queue's 1000");
        time.advance(200);
        awaitReadyByItself(q, 2);
        time.advance(800);
        awaitReadyByItself(q, 0);
    }

    @Test
    void messagesExpireAtTheHeadOnly() throws Exception {
        String q = queue("ttl-head");
        send("", q, expiring(1000), "long");
        send("", q, expiring(100), "short");
        if (time.isManual()) {
            time.advance(100);
            // the short one's time is up, but it waits behind the long one, as in RabbitMQ
            assertThat(ready(q)).isEqualTo(2);
            GetResponse got = channel.basicGet(q, true);
            assertThat(text(got.getBody())).isEqualTo("long");
            assertThat(got.getProps().getExpiration()).isEqualTo("1000");
            // now at the head, and expired: dropped
            assertThat(channel.basicGet(q, true)).isNull();
            assertThat(ready(q)).isZero();
        } else {
            time.advance(1000);
            awaitReadyByItself(q, 0);
        }
    }

    @Test
    void aTtlOfZeroLetsAMessageThroughOnlyToAConsumerWaitingWithRoom() throws Exception {
        String q = queue("ttl-zero", "x-message-ttl", 0);
        send(q, "nobody waits");
        assertThat(ready(q)).isZero();

        Channel consuming = connection.createChannel();
        consuming.basicQos(1);
        Recorder recorder = new Recorder(consuming);
        consuming.basicConsume(q, false, recorder);
        send(q, "taken at once");
        assertThat(recorder.awaitDeliveries(1).get(0).getBody()).asString().isEqualTo("taken at once");
        // the consumer has no room now: the next one expires rather than wait
        send(q, "no room");
        assertThat(ready(q)).isZero();
        consuming.basicAck(recorder.lastTag(), false);
        assertThat(recorder.awaitExactly(1)).hasSize(1);

        // a message's own expiration of 0 alike
        String own = queue("own-zero");
        send("", own, expiring(0), "own zero");
        assertThat(ready(own)).isZero();
    }

    /**
     * A TTL of 0 means one delivery at most: rejected with requeue, the message dies even in the millisecond it was
     * published (on the manual clock, time stands still), as RabbitMQ drops a requeued message when
     * {@code Now >= Expiry} ({@code rabbit_amqqueue_process:requeue_and_run/4}).
     */
    @Test
    void aRequeuedMessageWithATtlOfZeroIsNotDeliveredAgain() throws Exception {
        String q = queue("ttl-zero-requeue", "x-message-ttl", 0);
        Channel consuming = connection.createChannel();
        Recorder recorder = new Recorder(consuming);
        consuming.basicConsume(q, false, recorder);
        send(q, "once");
        assertThat(recorder.awaitDeliveries(1).get(0).getBody()).asString().isEqualTo("once");
        consuming.basicReject(recorder.lastTag(), true);
        assertThat(recorder.awaitExactly(1)).as("not redelivered").hasSize(1);
        assertThat(ready(q)).isZero();
    }

    @Test
    void aMessageGivenBackAfterItsTtlExpiresThen() throws Exception {
        String q = queue("ttl-requeue", "x-message-ttl", 200);
        send(q, "held");
        GetResponse held = channel.basicGet(q, false);
        assertThat(text(held.getBody())).isEqualTo("held");
        // a marker published after the get expires later than the held message would have
        send(q, "marker");
        time.advance(200);
        awaitReadyByItself(q, 0);
        // unacknowledged, the held message was not in the queue to expire; given back, it expires at once
        channel.basicReject(held.getEnvelope().getDeliveryTag(), true);
        Channel consuming = connection.createChannel();
        Recorder recorder = new Recorder(consuming);
        consuming.basicConsume(q, true, recorder);
        recorder.awaitExactly(0);
        assertThat(ready(q)).isZero();
    }

    @Test
    void anUnusedQueueExpires() throws Exception {
        String q = queue("expires", "x-expires", 200);
        if (time.isManual()) {
            time.advance(199);
            assertThat(routable(q)).isTrue();
        }
        time.advance(1);
        await().atMost(TIMEOUT).until(() -> !routable(q));
    }

    @Test
    void aQueueWithAConsumerDoesNotExpireAndExpiresOnceItLeaves() throws Exception {
        String q = queue("expires-consumed", "x-expires", 200);
        Channel consuming = connection.createChannel();
        String tag = consuming.basicConsume(q, true, new Recorder(consuming));
        time.advance(1000);
        await().during(Duration.ofMillis(500)).atMost(Duration.ofMillis(500).plus(TIMEOUT)).until(() -> routable(q));
        consuming.basicCancel(tag);
        if (time.isManual()) {
            time.advance(199);
            assertThat(routable(q)).as("unused for 199 ms").isTrue();
        }
        time.advance(1);
        await().atMost(TIMEOUT).until(() -> !routable(q));
    }

    @Test
    void aGetOrADeclarationPassiveOrNotRenewsTheLease() throws Exception {
        Assumptions.assumeTrue(time.isManual(), "moves time between uses");
        String q = queue("expires-renewed", "x-expires", 1000);
        time.advance(600);
        assertThat(channel.basicGet(q, true)).isNull();
        time.advance(600);
        assertThat(routable(q)).as("got from 600 ms ago").isTrue();
        channel.queueDeclarePassive(q);
        time.advance(600);
        assertThat(routable(q)).as("passively declared 600 ms ago").isTrue();
        channel.queueDeclare(q, false, false, false, args("x-expires", 1000));
        time.advance(999);
        assertThat(routable(q)).as("declared 999 ms ago").isTrue();
        time.advance(1);
        await().atMost(TIMEOUT).until(() -> !routable(q));
    }
}
