package io.skiffmq.server;

import static io.skiffmq.server.Amqp091Support.TIMEOUT;
import static io.skiffmq.server.Amqp091Support.await;
import static io.skiffmq.server.Amqp091Support.text;
import static org.assertj.core.api.Assertions.assertThat;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.GetResponse;
import io.skiffmq.server.Amqp091Support.Recorder;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * Dead-lettering ({@code rabbit_dead_letter:publish/5}) for each reason: rejected ({@code basic.reject} and
 * {@code basic.nack} without requeue), expired, delivery_limit (maxlen is in {@link Amqp091QueueLengthTest}). The
 * message goes to the dead-letter exchange with the dead-letter routing key or its own, its history in
 * {@code x-death} (one table per queue and reason, counted, most recent first) and the first and last deaths named
 * in headers. A missing exchange drops it; a cycle of expiries is dropped, a cycle with a rejection in it is not.
 */
class Amqp091DeadLetterTest extends Amqp091ArgumentsTestBase {

    @Test
    void aRejectedMessageIsDeadLetteredWithItsHistory() throws Exception {
        String source = exchange("src", "direct");
        String dlx = exchange("dlx", "direct");
        String q = queue("work", "x-dead-letter-exchange", dlx);
        String dlq = queue("dead");
        channel.queueBind(q, source, "k");
        channel.queueBind(dlq, dlx, "k");
        AMQP.BasicProperties properties = new AMQP.BasicProperties.Builder().messageId("id-1").contentType("text/plain")
            .headers(Map.of("app", "kept")).build();
        send(source, "k", properties, "rejected");

        long from = time.millis();
        GetResponse got = awaitGet(q, false);
        channel.basicReject(got.getEnvelope().getDeliveryTag(), false);
        GetResponse dead = awaitGet(dlq, true);
        long to = time.millis();
        assertThat(text(dead.getBody())).isEqualTo("rejected");
        assertThat(dead.getEnvelope().getExchange()).isEqualTo(dlx);
        assertThat(dead.getEnvelope().getRoutingKey()).as("its own key, without a dead-letter one").isEqualTo("k");
        assertThat(dead.getEnvelope().isRedeliver()).isFalse();
        assertThat(dead.getProps().getMessageId()).isEqualTo("id-1");
        assertThat(dead.getProps().getContentType()).isEqualTo("text/plain");
        assertThat(String.valueOf(dead.getProps().getHeaders().get("app"))).isEqualTo("kept");
        List<Map<String, Object>> deaths = xDeath(dead.getProps());
        assertThat(deaths).hasSize(1);
        assertDeath(deaths.get(0), q, "rejected", 1, source, List.of("k"), null, from, to);
        assertFirstAndLast(dead.getProps(), "rejected", q, source, "rejected", q, source);
        assertThat(ready(q)).isZero();
    }

    @Test
    void aNackWithoutRequeueDeadLettersEveryMessageItCovers() throws Exception {
        String dlq = queue("dead");
        String q = queue("work", "x-dead-letter-exchange", "", "x-dead-letter-routing-key", dlq);
        send(q, "m1", "m2", "m3");
        awaitGet(q, false);
        GetResponse second = awaitGet(q, false);
        channel.basicNack(second.getEnvelope().getDeliveryTag(), true, false);
        await().atMost(TIMEOUT).until(() -> ready(dlq) == 2);
        GetResponse first = channel.basicGet(dlq, true);
        assertThat(text(first.getBody())).isEqualTo("m1");
        assertThat(xDeath(first.getProps()).get(0)).containsEntry("count", 1L);
        assertThat(String.valueOf(xDeath(first.getProps()).get(0).get("reason"))).isEqualTo("rejected");
        assertThat(text(channel.basicGet(dlq, true).getBody())).isEqualTo("m2");
        assertThat(getAll(q)).containsExactly("m3");
    }

    @Test
    void aDeadLetterRoutingKeyReplacesTheMessagesOwnKey() throws Exception {
        String dlx = exchange("dlx", "direct");
        String q = queue("work", "x-dead-letter-exchange", dlx, "x-dead-letter-routing-key", "dead-key");
        String byDeadKey = queue("by-dead-key");
        String byOwnKey = queue("by-own-key");
        channel.queueBind(byDeadKey, dlx, "dead-key");
        channel.queueBind(byOwnKey, dlx, q);
        send(q, "m");
        long from = time.millis();
        channel.basicReject(awaitGet(q, false).getEnvelope().getDeliveryTag(), false);
        GetResponse dead = awaitGet(byDeadKey, true);
        long to = time.millis();
        assertThat(dead.getEnvelope().getExchange()).isEqualTo(dlx);
        assertThat(dead.getEnvelope().getRoutingKey()).isEqualTo("dead-key");
        // the history keeps the key (and the exchange: the default one) it was published with
        assertDeath(xDeath(dead.getProps()).get(0), q, "rejected", 1, "", List.of(q), null, from, to);
        assertThat(ready(byOwnKey)).isZero();
    }

    @Test
    void anExpiredMessageIsDeadLetteredWithItsOwnTtlInTheHistoryAndNoneLeft() throws Exception {
        String dlq = queue("dead");
        String q = queue("work", "x-dead-letter-exchange", "", "x-dead-letter-routing-key", dlq,
            "x-message-ttl", 60_000);
        AMQP.BasicProperties own = new AMQP.BasicProperties.Builder().expiration("100").messageId("own").build();
        send("", q, own, "own ttl");
        long from = time.millis();
        time.advance(100);
        GetResponse dead = awaitGet(dlq, true);
        long to = time.millis();
        assertThat(dead.getProps().getMessageId()).isEqualTo("own");
        assertThat(dead.getProps().getExpiration()).as("the TTL does not follow the message").isNull();
        assertThat(dead.getEnvelope().getRoutingKey()).isEqualTo(dlq);
        assertDeath(xDeath(dead.getProps()).get(0), q, "expired", 1, "", List.of(q), "100", from, to);
        assertFirstAndLast(dead.getProps(), "expired", q, "", "expired", q, "");
    }

    @Test
    void aMessageExpiredByTheQueuesTtlHasNoOriginalExpiration() throws Exception {
        String dlq = queue("dead");
        String q = queue("work", "x-dead-letter-exchange", "", "x-dead-letter-routing-key", dlq,
            "x-message-ttl", 100);
        send(q, "queue ttl");
        long from = time.millis();
        time.advance(100);
        GetResponse dead = awaitGet(dlq, true);
        long to = time.millis();
        assertDeath(xDeath(dead.getProps()).get(0), q, "expired", 1, "", List.of(q), null, from, to);
    }

    @Test
    void dyingTwiceInOneQueueForOneReasonCountsOnOneEntryAndACycleThroughARejectionGoesOn() throws Exception {
        // the queue dead-letters to itself: rejected messages come back, which RabbitMQ allows (a client decided)
        String q = queueName("self");
        channel.queueDeclare(q, false, false, false, args("x-dead-letter-exchange", "",
            "x-dead-letter-routing-key", q));
        send(q, "again and again");
        long from = time.millis();
        channel.basicReject(awaitGet(q, false).getEnvelope().getDeliveryTag(), false);
        GetResponse back = awaitGet(q, false);
        long to = time.millis();
        assertDeath(xDeath(back.getProps()).get(0), q, "rejected", 1, "", List.of(q), null, from, to);

        time.advance(5_000);
        channel.basicReject(back.getEnvelope().getDeliveryTag(), false);
        GetResponse again = awaitGet(q, true);
        List<Map<String, Object>> deaths = xDeath(again.getProps());
        assertThat(deaths).hasSize(1);
        // counted, and the time stays the first death's
        assertDeath(deaths.get(0), q, "rejected", 2, "", List.of(q), null, from, to);
        assertFirstAndLast(again.getProps(), "rejected", q, "", "rejected", q, "");
    }

    @Test
    void aRetryLoopKeepsOneEntryPerQueueAndReasonMostRecentFirst() throws Exception {
        String q = queueName("work");
        String wait = queueName("wait");
        channel.queueDeclare(q, false, false, false, args("x-dead-letter-exchange", "",
            "x-dead-letter-routing-key", wait));
        channel.queueDeclare(wait, false, false, false, args("x-dead-letter-exchange", "",
            "x-dead-letter-routing-key", q, "x-message-ttl", 100));
        send(q, "retried");
        long from = time.millis();
        for (int attempt = 1; attempt <= 2; attempt++) {
            channel.basicReject(awaitGet(q, false).getEnvelope().getDeliveryTag(), false);
            await().atMost(TIMEOUT).until(() -> ready(wait) == 1);
            time.advance(100);
        }
        GetResponse third = awaitGet(q, true);
        long to = time.millis();
        List<Map<String, Object>> deaths = xDeath(third.getProps());
        assertThat(deaths).hasSize(2);
        // each wait routed it back by the dead-letter key: the history keeps the keys of its first death there
        assertDeath(deaths.get(0), wait, "expired", 2, "", List.of(wait), null, from, to);
        assertDeath(deaths.get(1), q, "rejected", 2, "", List.of(q), null, from, to);
        assertFirstAndLast(third.getProps(), "rejected", q, "", "expired", wait, "");
    }

    @Test
    void aMissingDeadLetterExchangeDropsTheMessageSilently() throws Exception {
        String q = queue("work", "x-dead-letter-exchange", "no-such-exchange");
        send(q, "m1", "m2");
        channel.basicReject(awaitGet(q, false).getEnvelope().getDeliveryTag(), false);
        // the next method on the channel goes through: nothing went wrong for the client
        assertThat(text(awaitGet(q, true).getBody())).isEqualTo("m2");
        assertThat(channel.isOpen()).isTrue();
        assertThat(ready(q)).isZero();
    }

    @Test
    void aCycleOfExpiriesIsDropped() throws Exception {
        String q1 = queueName("cycle-1");
        String q2 = queueName("cycle-2");
        channel.queueDeclare(q1, false, false, false, args("x-dead-letter-exchange", "",
            "x-dead-letter-routing-key", q2, "x-message-ttl", 100));
        channel.queueDeclare(q2, false, false, false, args("x-dead-letter-exchange", "",
            "x-dead-letter-routing-key", q1, "x-message-ttl", 300));
        send(q1, "round and round");
        time.advance(100);
        await().atMost(TIMEOUT).until(() -> ready(q2) == 1);
        // back in q1 it would arrive here: it must not, and must not stay in q2 either
        Channel consuming = connection.createChannel();
        Recorder recorder = new Recorder(consuming);
        consuming.basicConsume(q1, true, recorder);
        time.advance(300);
        await().atMost(TIMEOUT).until(() -> ready(q2) == 0);
        recorder.awaitExactly(0);
    }

    @Test
    void aQueueDeadLetteringToItselfOnExpiryDropsTheMessageAtOnce() throws Exception {
        String q = queueName("self-expiry");
        channel.queueDeclare(q, false, false, false, args("x-dead-letter-exchange", "",
            "x-dead-letter-routing-key", q, "x-message-ttl", 100));
        send(q, "expires once");
        time.advance(100);
        await().atMost(TIMEOUT).until(() -> ready(q) == 0);
        Channel consuming = connection.createChannel();
        Recorder recorder = new Recorder(consuming);
        consuming.basicConsume(q, true, recorder);
        recorder.awaitExactly(0);
    }

    @Test
    void aMessageFailedMoreOftenThanTheDeliveryLimitIsDeadLettered() throws Exception {
        Assumptions.assumeFalse(target.external(), "RabbitMQ has x-delivery-limit for quorum queues only");
        String dlq = queue("dead");
        String q = queue("limited", "x-delivery-limit", 2, "x-dead-letter-exchange", "",
            "x-dead-letter-routing-key", dlq);
        send(q, "poison");
        long from = time.millis();
        // a requeue counts as a failed delivery, nack or reject (as RabbitMQ 4 counts it): two are allowed
        GetResponse first = awaitGet(q, false);
        assertThat(first.getEnvelope().isRedeliver()).isFalse();
        channel.basicNack(first.getEnvelope().getDeliveryTag(), false, true);
        GetResponse second = awaitGet(q, false);
        assertThat(second.getEnvelope().isRedeliver()).isTrue();
        channel.basicReject(second.getEnvelope().getDeliveryTag(), true);
        GetResponse third = awaitGet(q, false);
        assertThat(third.getEnvelope().isRedeliver()).isTrue();
        assertThat(ready(dlq)).isZero();
        channel.basicReject(third.getEnvelope().getDeliveryTag(), true);
        GetResponse dead = awaitGet(dlq, true);
        long to = time.millis();
        assertThat(text(dead.getBody())).isEqualTo("poison");
        assertDeath(xDeath(dead.getProps()).get(0), q, "delivery_limit", 1, "", List.of(q), null, from, to);
        assertFirstAndLast(dead.getProps(), "delivery_limit", q, "", "delivery_limit", q, "");
        assertThat(ready(q)).isZero();
    }

    /**
     * A publisher's own {@code x-death} (here 20 tables of three queues, without count or time, as the Java client's
     * {@code XDeathHeaderGrowth.handlingOfXDeathHeadersFromEarlierVersions} sends them) is no history: RabbitMQ 4
     * records deaths from its own ({@code mc:record_death/4}) and the header it writes replaces the publisher's, so
     * the message that died in two queues carries two entries, each counted once.
     */
    @Test
    void aPublishersOwnXDeathHeaderIsReplacedByTheHistory() throws Exception {
        String dlq = queue("dead");
        String second = queue("second", "x-dead-letter-exchange", "", "x-dead-letter-routing-key", dlq);
        String first = queue("first", "x-dead-letter-exchange", "", "x-dead-letter-routing-key", second);
        List<Map<String, Object>> legacy = new java.util.ArrayList<>();
        for (String q : List.of("queue97", "queue97", "queue97", "queue98", "queue99")) {
            for (int i = 0; i < 4; i++) {
                legacy.add(Map.of("reason", "expired", "queue", q, "exchange", "fanout0",
                    "routing-keys", List.of("routing-key-1", "routing-key-2"), "random", "r" + i));
            }
        }
        send("", first, new AMQP.BasicProperties.Builder().headers(Map.of("x-death", legacy)).build(), "legacy");
        channel.basicReject(awaitGet(first, false).getEnvelope().getDeliveryTag(), false);
        channel.basicReject(awaitGet(second, false).getEnvelope().getDeliveryTag(), false);
        GetResponse dead = awaitGet(dlq, true);
        List<Map<String, Object>> deaths = xDeath(dead.getProps());
        assertThat(deaths).extracting(d -> String.valueOf(d.get("queue"))).containsExactly(second, first);
        assertThat(deaths).extracting(d -> d.get("count")).containsExactly(1L, 1L);
        assertThat(String.valueOf(dead.getProps().getHeaders().get("x-first-death-queue"))).isEqualTo(first);
    }
}
