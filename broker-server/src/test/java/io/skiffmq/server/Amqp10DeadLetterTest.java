package io.skiffmq.server;

import static io.skiffmq.server.Amqp091Support.unique;
import static org.assertj.core.api.Assertions.assertThat;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.GetResponse;
import com.rabbitmq.client.amqp.Message;
import com.rabbitmq.client.amqp.Publisher;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Date;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Dead-lettering through AMQP 1.0 with RabbitMQ's own client: a consumer's {@code rejected} (the client's
 * {@code discard()}) and {@code modified} undeliverable-here ({@code discard(annotations)}), an expired message with
 * its header TTL kept in the history; the history in {@code x-opt-deaths} checked field by field as the client
 * decodes it and on the wire, with the first and last deaths in annotations; and both ways across the protocols
 * ({@code x-death} for an AMQP 0-9-1 consumer).
 */
class Amqp10DeadLetterTest extends Amqp10ClientTestBase {

    @Test
    void aDiscardedMessageIsDeadLetteredWithItsHistory() throws Exception {
        String[] names = queueWithDeadLetterQueue("discard", Map.of());
        String q = names[0];
        Publisher publisher = publisher(q);
        assertThat(publish(publisher, publisher.message(bytes("discarded")).messageId("id-1").property("app", "kept"))
            .poll(10, TimeUnit.SECONDS)).isEqualTo(Publisher.Status.ACCEPTED);
        BlockingQueue<Message> seen = new LinkedBlockingQueue<>();
        consumer(q, seen, (context, message) -> context.discard());
        assertThat(seen.poll(10, TimeUnit.SECONDS)).isNotNull();
        long at = time.millis();

        Message dead = next(names[1]);
        assertThat(text(dead)).isEqualTo("discarded");
        assertThat(dead.messageId()).isEqualTo("id-1");
        assertThat(dead.property("app")).isEqualTo("kept");
        assertThat(dead.annotation("x-exchange")).isEqualTo("");
        assertThat(dead.annotation("x-routing-key")).isEqualTo(names[1]);
        Object[] deaths = (Object[]) dead.annotation("x-opt-deaths");
        assertThat(deaths).hasSize(1);
        assertDeath(deaths[0], q, "rejected", 1, "", List.of(q), -1, at, at);
        assertFirstAndLast(dead, "rejected", q, "");
        assertThat(seen).as("not requeued").isEmpty();
    }

    @Test
    void aMessageDiscardedWithAnnotationsIsDeadLetteredToo() throws Exception {
        // modified with undeliverable-here: RabbitMQ 4's classic queues discard it (rabbit_amqqueue_process: modify)
        String[] names = queueWithDeadLetterQueue("discard-annotated", Map.of());
        Publisher publisher = publisher(names[0]);
        assertThat(published(publisher, "discarded with annotations")).isEqualTo(Publisher.Status.ACCEPTED);
        BlockingQueue<Message> seen = new LinkedBlockingQueue<>();
        consumer(names[0], seen, (context, message) -> context.discard(Map.of("x-opt-why", "bad")));
        assertThat(seen.poll(10, TimeUnit.SECONDS)).isNotNull();
        Message dead = next(names[1]);
        assertDeath(((Object[]) dead.annotation("x-opt-deaths"))[0], names[0], "rejected", 1, "", List.of(names[0]),
            -1, time.millis(), time.millis());
        assertThat(seen.poll(QUIET.toMillis(), TimeUnit.MILLISECONDS)).as("not given back").isNull();
    }

    @Test
    void anExpiredMessageKeepsItsTtlInTheHistoryAndLosesItsHeaderTtl() throws Exception {
        String[] names = queueWithDeadLetterQueue("expired", Map.of());
        Publisher publisher = publisher(names[0]);
        assertThat(publish(publisher, publisher.message(bytes("expires")).ttl(Duration.ofMillis(100)))
            .poll(10, TimeUnit.SECONDS)).isEqualTo(Publisher.Status.ACCEPTED);
        time.advance(100);
        long at = time.millis();
        org.apache.qpid.proton.message.Message dead = rawGet(names[1]);
        assertThat(dead.getTtl()).as("no TTL left: the history keeps it").isZero();
        Object[] deaths = (Object[]) dead.getMessageAnnotations().getValue().get(wire("x-opt-deaths"));
        Map<?, ?> death = (Map<?, ?>) deaths[0];
        assertThat(new ArrayList<Object>(death.keySet())).as("ttl first, as RabbitMQ 4 puts it").startsWith(wire("ttl"));
        assertThat(death.get(wire("ttl"))).isEqualTo(org.apache.qpid.proton.amqp.UnsignedInteger.valueOf(100));
        assertThat(death.get(wire("reason"))).isEqualTo(wire("expired"));
        assertThat(death.get(wire("first-time"))).isEqualTo(new Date(at));
    }

    /**
     * The history's wire types, read with proton-j (which, unlike the RabbitMQ client's decoder, tells a timestamp
     * from a long): an array of maps keyed by symbols; queue and exchange strings, reason a symbol, count a ulong,
     * the times timestamps, routing-keys an array of strings.
     */
    @Test
    void theHistoryIsEncodedWithRabbitMqsTypes() throws Exception {
        String[] names = queueWithDeadLetterQueue("wire", Map.of());
        Publisher publisher = publisher(names[0]);
        assertThat(published(publisher, "typed")).isEqualTo(Publisher.Status.ACCEPTED);
        BlockingQueue<Message> seen = new LinkedBlockingQueue<>();
        consumer(names[0], seen, (context, message) -> context.discard());
        assertThat(seen.poll(10, TimeUnit.SECONDS)).isNotNull();
        long at = time.millis();
        org.apache.qpid.proton.message.Message dead = rawGet(names[1]);
        Object deaths = dead.getMessageAnnotations().getValue().get(wire("x-opt-deaths"));
        assertThat(deaths).isInstanceOf(Object[].class);
        assertThat((Object[]) deaths).hasSize(1);
        Map<?, ?> death = (Map<?, ?>) ((Object[]) deaths)[0];
        assertThat(new ArrayList<Object>(death.keySet())).containsExactly(wire("queue"), wire("reason"), wire("count"),
            wire("first-time"), wire("last-time"), wire("exchange"), wire("routing-keys"));
        assertThat(death.get(wire("queue"))).isEqualTo(names[0]);
        assertThat(death.get(wire("reason"))).isEqualTo(wire("rejected"));
        assertThat(death.get(wire("count"))).isEqualTo(org.apache.qpid.proton.amqp.UnsignedLong.valueOf(1));
        assertThat(death.get(wire("first-time"))).isEqualTo(new Date(at));
        assertThat(death.get(wire("last-time"))).isEqualTo(new Date(at));
        assertThat(death.get(wire("exchange"))).isEqualTo("");
        assertThat(death.get(wire("routing-keys"))).isEqualTo(new String[] {names[0]});
        Map<?, ?> annotations = dead.getMessageAnnotations().getValue();
        assertThat(annotations.get(wire("x-first-death-reason"))).as("a string, as mc_util:infer_type/1 makes it")
            .isEqualTo("rejected");
        assertThat(annotations.get(wire("x-last-death-queue"))).isEqualTo(names[0]);
    }


    @Test
    void aMessagePublishedOver091AndDeadLetteredShowsXOptDeathsOver10() throws Exception {
        String[] names = queueWithDeadLetterQueue("from-091", Map.of());
        // it dies on a whole second: the milliseconds are the subject of the next test
        long toNextSecond = 1000 - time.millis() % 1000;
        time.advance(toNextSecond < 100 ? toNextSecond + 900 : toNextSecond - 100);
        Channel channel = amqp091.createChannel();
        channel.confirmSelect();
        channel.basicPublish("", names[0], new AMQP.BasicProperties.Builder().expiration("100").build(),
            bytes("expires"));
        channel.waitForConfirmsOrDie(10_000);
        channel.close();
        time.advance(100);
        long at = time.millis();
        Message dead = next(names[1]);
        assertThat(text(dead)).isEqualTo("expires");
        Object[] deaths = (Object[]) dead.annotation("x-opt-deaths");
        assertThat(deaths).hasSize(1);
        assertDeath(deaths[0], names[0], "expired", 1, "", List.of(names[0]), 100, at, at);
        assertFirstAndLast(dead, "expired", names[0], "");
    }

    @Test
    void aMessagePublishedOver091KeepsItsDeathTimesToTheMillisecondForAnAmqp10Consumer() throws Exception {
        String q = unique("self-091");
        management().queue().name(q).deadLetterExchange("").deadLetterRoutingKey(q).declare();
        Channel channel = amqp091.createChannel();
        channel.confirmSelect();
        channel.basicPublish("", q, null, bytes("twice"));
        channel.waitForConfirmsOrDie(10_000);
        if (time.millis() % 1000 == 0) {
            time.advance(123);
        }
        long first = time.millis();
        channel.basicReject(awaitGet(channel, q).getEnvelope().getDeliveryTag(), false);
        GetResponse back = awaitGet(channel, q); // it died (the reject is asynchronous) before time moves on
        time.advance(1_500);
        long last = time.millis();
        channel.basicReject(back.getEnvelope().getDeliveryTag(), false);
        channel.close();
        Message dead = next(q);
        assertDeath(((Object[]) dead.annotation("x-opt-deaths"))[0], q, "rejected", 2, "", List.of(q), -1, first, last);
    }

    @Test
    @SuppressWarnings("unchecked")
    void aMessagePublishedOver10AndDeadLetteredShowsXDeathOver091() throws Exception {
        String[] names = queueWithDeadLetterQueue("from-10", Map.of());
        Publisher publisher = publisher(names[0]);
        assertThat(publish(publisher, publisher.message(bytes("discarded")).ttl(Duration.ofMinutes(1)))
            .poll(10, TimeUnit.SECONDS)).isEqualTo(Publisher.Status.ACCEPTED);
        BlockingQueue<Message> seen = new LinkedBlockingQueue<>();
        consumer(names[0], seen, (context, message) -> context.discard());
        assertThat(seen.poll(10, TimeUnit.SECONDS)).isNotNull();
        long at = time.millis();

        Channel channel = amqp091.createChannel();
        GetResponse dead = awaitGet(channel, names[1]);
        channel.basicAck(dead.getEnvelope().getDeliveryTag(), false);
        Map<String, Object> headers = dead.getProps().getHeaders();
        List<Map<String, Object>> deaths = (List<Map<String, Object>>) headers.get("x-death");
        assertThat(deaths).hasSize(1);
        Map<String, Object> death = deaths.get(0);
        assertThat(death).containsOnlyKeys("count", "reason", "queue", "time", "exchange", "routing-keys",
            "original-expiration");
        assertThat(death.get("count")).isEqualTo(1L);
        assertThat(String.valueOf(death.get("reason"))).isEqualTo("rejected");
        assertThat(String.valueOf(death.get("queue"))).isEqualTo(names[0]);
        assertThat(death.get("time")).isEqualTo(new Date(at / 1000 * 1000));
        assertThat(String.valueOf(death.get("exchange"))).isEmpty();
        assertThat(((List<Object>) death.get("routing-keys")).stream().map(String::valueOf))
            .containsExactly(names[0]);
        assertThat(String.valueOf(death.get("original-expiration"))).isEqualTo("60000");
        for (String which : List.of("first", "last")) {
            assertThat(String.valueOf(headers.get("x-" + which + "-death-reason"))).isEqualTo("rejected");
            assertThat(String.valueOf(headers.get("x-" + which + "-death-queue"))).isEqualTo(names[0]);
            assertThat(String.valueOf(headers.get("x-" + which + "-death-exchange"))).isEmpty();
        }
        assertThat(dead.getProps().getExpiration()).isNull();
        channel.close();
    }
}
