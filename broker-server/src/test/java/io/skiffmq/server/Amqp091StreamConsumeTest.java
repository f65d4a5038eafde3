package io.skiffmq.server;

import static io.skiffmq.server.Amqp091Support.QUIET;
import static io.skiffmq.server.Amqp091Support.TIMEOUT;
import static io.skiffmq.server.Amqp091Support.await;
import static io.skiffmq.server.Amqp091Support.bytes;
import static org.assertj.core.api.Assertions.assertThat;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.Delivery;
import io.skiffmq.core.stream.StreamQueue;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Date;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * Reading streams over AMQP 0-9-1 with the RabbitMQ Java client, as RabbitMQ 4 serves them: every offset
 * specification of {@code x-stream-offset}, the {@code x-stream-offset} header on each delivery, Bloom-filtered
 * reading ({@code x-stream-filter}, {@code x-stream-match-unfiltered}, the publisher's {@code x-stream-filter-value}),
 * acks, nacks and rejects that only give the prefetch back, independent consumers, offsets without a gap across
 * segment rolls, and retention by size and by age moving the first offset.
 */
class Amqp091StreamConsumeTest extends Amqp091StreamTestBase {
    private String declare(String prefix, Object... arguments) throws Exception {
        String name = name(prefix);
        channel.queueDeclare(name, true, false, false, stream(arguments));
        return name;
    }

    /** Publishes {@code bodies} with confirms and waits for them: one chunk, as they come in one go. */
    private void publish(String stream, AMQP.BasicProperties properties, String... bodies) throws Exception {
        try (Channel publisher = connection.createChannel()) {
            publisher.confirmSelect();
            for (String body : bodies) {
                publisher.basicPublish("", stream, properties, bytes(body));
            }
            publisher.waitForConfirmsOrDie(TIMEOUT.toMillis());
        }
    }

    private void publish(String stream, String... bodies) throws Exception {
        publish(stream, null, bodies);
    }

    private static AMQP.BasicProperties filterValue(String value) {
        return new AMQP.BasicProperties.Builder().headers(Map.of("x-stream-filter-value", value)).build();
    }

    /** A consumer with prefetch {@code qos} on a channel of its own, from {@code arguments}. */
    private Amqp091Support.Recorder consume(String stream, int qos, Map<String, Object> arguments) throws Exception {
        Channel c = connection.createChannel();
        c.basicQos(qos);
        Amqp091Support.Recorder recorder = new Amqp091Support.Recorder(c);
        c.basicConsume(stream, false, arguments, recorder);
        return recorder;
    }

    private Amqp091Support.Recorder consumeFrom(String stream, Object offset) throws Exception {
        return consume(stream, 1000, Map.of("x-stream-offset", offset));
    }

    private static List<Long> offsets(List<Delivery> deliveries) {
        return deliveries.stream().map(d -> (Long) d.getProperties().getHeaders().get("x-stream-offset")).toList();
    }

    private static List<Long> range(long from, long to) {
        return java.util.stream.LongStream.range(from, to).boxed().toList();
    }

    @Test
    void eachOffsetSpecificationStartsWhereRabbitMqStarts() throws Exception {
        String s = declare("offsets");
        publish(s, "a0", "a1", "a2");
        publish(s, "b3", "b4", "b5");
        assertThat(offsets(consumeFrom(s, "first").awaitExactly(6))).isEqualTo(range(0, 6));
        // the last chunk: what the stream took in its last run, the last message at least (a batch's messages may
        // reach the stream in more than one run)
        Amqp091Support.Recorder last = consumeFrom(s, "last");
        await().atMost(TIMEOUT).until(() -> !last.deliveries.isEmpty() && last.bodies().contains("b5"));
        assertThat(List.of("b3 b4 b5", "b4 b5", "b5")).contains(String.join(" ", last.awaitExactly(
            last.deliveries.size()).stream().map(d -> new String(d.getBody())).toList()));
        assertThat(offsets(consumeFrom(s, 4L).awaitExactly(2))).as("its chunk, from 4").containsExactly(4L, 5L);
        assertThat(offsets(consumeFrom(s, 4).awaitExactly(2))).as("any integer type").containsExactly(4L, 5L);
        assertThat(offsets(consumeFrom(s, new Date(0)).awaitExactly(6))).as("a timestamp, seconds").isEqualTo(
            range(0, 6));
        assertThat(offsets(consumeFrom(s, "1h").awaitExactly(6))).as("an interval back from now").isEqualTo(
            range(0, 6));
        Amqp091Support.Recorder next = consumeFrom(s, "next");
        Amqp091Support.Recorder byDefault = consume(s, 10, Map.of());
        Amqp091Support.Recorder future = consumeFrom(s, new Date(System.currentTimeMillis() + 3_600_000));
        Amqp091Support.Recorder ahead = consumeFrom(s, 7L);
        await().atMost(TIMEOUT).until(() -> next.consumeOks.size() == 1 && byDefault.consumeOks.size() == 1
            && future.consumeOks.size() == 1 && ahead.consumeOks.size() == 1);
        next.awaitExactly(0);
        publish(s, "c6", "c7");
        assertThat(offsets(next.awaitExactly(2))).as("next: what comes").containsExactly(6L, 7L);
        assertThat(offsets(byDefault.awaitExactly(2))).as("next by default").containsExactly(6L, 7L);
        assertThat(offsets(future.awaitExactly(2))).as("a time to come: what comes").containsExactly(6L, 7L);
        assertThat(offsets(ahead.awaitExactly(1))).as("an offset not written yet: from it").containsExactly(7L);
    }

    @Test
    void acksNacksAndRejectsOnlyGiveThePrefetchBack() throws Exception {
        String s = declare("credit");
        publish(s, "m0", "m1", "m2", "m3", "m4", "m5");
        Channel c = connection.createChannel();
        c.basicQos(2);
        Amqp091Support.Recorder recorder = new Amqp091Support.Recorder(c);
        c.basicConsume(s, false, Map.of("x-stream-offset", "first"), recorder);
        List<Delivery> got = recorder.awaitExactly(2);
        c.basicAck(got.get(0).getEnvelope().getDeliveryTag(), false);
        got = recorder.awaitExactly(3);
        c.basicNack(got.get(1).getEnvelope().getDeliveryTag(), false, true);
        got = recorder.awaitExactly(4);
        c.basicReject(got.get(2).getEnvelope().getDeliveryTag(), false);
        got = recorder.awaitExactly(5);
        assertThat(recorder.bodies()).as("nothing requeued, nothing redelivered")
            .containsExactly("m0", "m1", "m2", "m3", "m4");
        assertThat(got).allMatch(d -> !d.getEnvelope().isRedeliver());
        c.basicAck(got.get(4).getEnvelope().getDeliveryTag(), true);
        recorder.awaitExactly(6);
        assertThat(offsets(consumeFrom(s, "first").awaitExactly(6))).as("the messages stay").isEqualTo(range(0, 6));
        assertThat(Amqp091Support.passive(connection, s).getMessageCount()).isEqualTo(6);
    }

    @Test
    void aDeliveryCarriesTheMessageAsRabbitMqConvertsIt() throws Exception {
        String s = declare("convert");
        Map<String, Object> headers = new LinkedHashMap<>();
        headers.put("colour", "red");
        headers.put("size", 3);
        headers.put("nested", Map.of("a", 1)); // a table: dropped, as RabbitMQ 4 drops it converting to AMQP 1.0
        headers.put("list", List.of(1, 2)); // an array likewise
        AMQP.BasicProperties properties = new AMQP.BasicProperties.Builder().contentType("text/plain")
            .messageId("m-1").correlationId("c-1").type("order").appId("app").deliveryMode(2).priority(3)
            .timestamp(new Date(1_700_000_000_000L)).headers(headers).build();
        channel.exchangeDeclare("stream-convert-x", "direct", false, true, null);
        channel.queueBind(s, "stream-convert-x", "key");
        try (Channel publisher = connection.createChannel()) {
            publisher.confirmSelect();
            publisher.basicPublish("stream-convert-x", "key", properties, bytes("body"));
            publisher.waitForConfirmsOrDie(TIMEOUT.toMillis());
        }
        Delivery d = consumeFrom(s, "first").awaitExactly(1).get(0);
        assertThat(d.getEnvelope().getExchange()).isEqualTo("stream-convert-x");
        assertThat(d.getEnvelope().getRoutingKey()).isEqualTo("key");
        AMQP.BasicProperties p = d.getProperties();
        assertThat(p.getContentType()).isEqualTo("text/plain");
        assertThat(p.getMessageId()).isEqualTo("m-1");
        assertThat(p.getCorrelationId()).isEqualTo("c-1");
        assertThat(p.getType()).isEqualTo("order");
        assertThat(p.getAppId()).isEqualTo("app");
        assertThat(p.getDeliveryMode()).isEqualTo(2);
        assertThat(p.getPriority()).isEqualTo(3);
        assertThat(p.getTimestamp()).isEqualTo(new Date(1_700_000_000_000L));
        assertThat(p.getHeaders()).containsOnlyKeys("x-stream-offset", "colour", "size");
        assertThat(p.getHeaders().get("colour").toString()).isEqualTo("red");
        assertThat(new String(d.getBody())).isEqualTo("body");
    }

    @Test
    void aFilteringConsumerReadsOnlyTheChunksItsValuesMayBeIn() throws Exception {
        String s = declare("filter");
        publish(s, filterValue("eu"), "eu0", "eu1");
        publish(s, filterValue("us"), "us2", "us3");
        publish(s, "none4", "none5");
        publish(s, filterValue("eu"), "eu6");
        assertThat(consume(s, 10, Map.of("x-stream-offset", "first", "x-stream-filter", "eu")).awaitExactly(3)
            .stream().map(d -> new String(d.getBody()))).containsExactly("eu0", "eu1", "eu6");
        assertThat(consume(s, 10, Map.of("x-stream-offset", "first", "x-stream-filter", List.of("eu", "us")))
            .awaitExactly(5).stream().map(d -> new String(d.getBody())))
            .containsExactly("eu0", "eu1", "us2", "us3", "eu6");
        assertThat(consume(s, 10, Map.of("x-stream-offset", "first", "x-stream-filter", "us",
            "x-stream-match-unfiltered", true)).awaitExactly(4).stream().map(d -> new String(d.getBody())))
            .containsExactly("us2", "us3", "none4", "none5");
        assertThat(offsets(consume(s, 10, Map.of("x-stream-offset", "first")).awaitExactly(7)))
            .as("unfiltered: everything").isEqualTo(range(0, 7));
    }

    @Test
    void twoConsumersReadTheSameStreamIndependently() throws Exception {
        String s = declare("two");
        publish(s, "m0", "m1", "m2", "m3", "m4");
        Amqp091Support.Recorder all = consume(s, 2, Map.of("x-stream-offset", "first"));
        Amqp091Support.Recorder tail = consume(s, 10, Map.of("x-stream-offset", 3L));
        assertThat(offsets(tail.awaitExactly(2))).containsExactly(3L, 4L);
        assertThat(offsets(all.awaitExactly(2))).as("held by its prefetch, not by the other").containsExactly(0L,
            1L);
        publish(s, "m5");
        assertThat(offsets(tail.awaitExactly(3))).containsExactly(3L, 4L, 5L);
        all.getChannel().basicAck(all.lastTag(), true);
        assertThat(offsets(all.awaitExactly(4))).containsExactly(0L, 1L, 2L, 3L);
    }

    @Test
    void offsetsHaveNoGapAcrossSegmentRolls() throws Exception {
        Assumptions.assumeFalse(target.external(), "looks at the stream's segments");
        // a segment of 1 byte takes one chunk
        String s = declare("rolls", "x-stream-max-segment-size-bytes", 1);
        List<String> bodies = new ArrayList<>();
        for (int chunk = 0; chunk < 5; chunk++) {
            String[] batch = IntStream.range(0, 10).mapToObj(i -> "m" + bodies.size() + i).toArray(String[]::new);
            publish(s, batch);
            bodies.addAll(List.of(batch));
        }
        StreamQueue queue = (StreamQueue) target.broker().vhost("/").queue(s);
        assertThat(queue.store().segmentCount()).as("rolled at least twice").isGreaterThanOrEqualTo(3);
        Amqp091Support.Recorder recorder = consumeFrom(s, "first");
        assertThat(offsets(recorder.awaitExactly(50))).isEqualTo(range(0, 50));
        assertThat(recorder.bodies()).isEqualTo(bodies);
        assertThat(offsets(consumeFrom(s, 25L).awaitExactly(25))).isEqualTo(range(25, 50));
    }

    @Test
    void retentionBySizeMovesTheFirstOffset() throws Exception {
        Assumptions.assumeFalse(target.external(), "looks at the stream's segments");
        // segments of one chunk each, and fewer bytes than two: only the newest segments stay
        String s = declare("by-size", "x-stream-max-segment-size-bytes", 1, "x-max-length-bytes", 1);
        for (int chunk = 0; chunk < 4; chunk++) {
            publish(s, "m" + (2 * chunk), "m" + (2 * chunk + 1));
        }
        StreamQueue queue = (StreamQueue) target.broker().vhost("/").queue(s);
        long first = queue.store().firstOffset();
        assertThat(first).as("retention deleted the oldest segments").isGreaterThan(0);
        assertThat(Amqp091Support.passive(connection, s).getMessageCount()).isEqualTo(8 - first);
        assertThat(offsets(consumeFrom(s, "first").awaitExactly((int) (8 - first)))).isEqualTo(range(first, 8));
        assertThat(offsets(consumeFrom(s, 0L).awaitExactly((int) (8 - first)))).as("below the first: the first")
            .isEqualTo(range(first, 8));
    }

    @Test
    void retentionByAgeMovesTheFirstOffset() throws Exception {
        Assumptions.assumeFalse(target.external(), "looks at the stream's segments");
        String s = declare("by-age", "x-stream-max-segment-size-bytes", 1, "x-max-age", "1s");
        publish(s, "old0", "old1");
        publish(s, "old2");
        StreamQueue queue = (StreamQueue) target.broker().vhost("/").queue(s);
        // the stream looks at its segments' ages every second: the old ones go, the newest stays
        await().atMost(Duration.ofSeconds(10)).until(() -> queue.store().firstOffset() > 0);
        publish(s, "new3");
        assertThat(consumeFrom(s, "first").awaitExactly((int) (4 - queue.store().firstOffset())).stream()
            .map(d -> new String(d.getBody()))).contains("new3").doesNotContain("old0", "old1");
    }

    @Test
    void aConsumerOfADeletedStreamIsCancelled() throws Exception {
        String s = declare("deleted");
        Amqp091Support.Recorder recorder = consumeFrom(s, "first");
        await().atMost(TIMEOUT).until(() -> recorder.consumeOks.size() == 1);
        channel.queueDelete(s);
        await().atMost(TIMEOUT).until(() -> recorder.brokerCancels.size() == 1);
        await().during(QUIET).atMost(QUIET.plus(TIMEOUT)).until(() -> recorder.getChannel().isOpen());
    }
}
