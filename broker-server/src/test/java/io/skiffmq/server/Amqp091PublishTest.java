package io.skiffmq.server;

import static io.skiffmq.server.Amqp091Support.TIMEOUT;
import static io.skiffmq.server.Amqp091Support.awaitChannelError;
import static io.skiffmq.server.Amqp091Support.awaitConnectionError;
import static io.skiffmq.server.Amqp091Support.bytes;
import static io.skiffmq.server.Amqp091Support.text;
import static io.skiffmq.server.Amqp091Support.unique;
import static org.assertj.core.api.Assertions.assertThat;
import static io.skiffmq.server.Amqp091Support.await;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import com.rabbitmq.client.Delivery;
import com.rabbitmq.client.LongString;
import com.rabbitmq.client.Return;
import io.skiffmq.server.Amqp091Support.Recorder;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Date;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/**
 * {@code basic.publish}: mandatory and unroutable ({@code basic.return} 312), immediate (refused), the user-id
 * check, and what a consumer gets: every property, headers of every field type, large and empty bodies, in order.
 */
class Amqp091PublishTest extends Amqp091ClientTest {

    /** Publishes one message to a fresh queue and returns what a consumer of it receives. */
    private Delivery roundTrip(AMQP.BasicProperties properties, byte[] body) throws Exception {
        String queue = channel.queueDeclare("", false, true, false, null).getQueue();
        channel.basicPublish("", queue, properties, body);
        Recorder consumer = new Recorder(channel);
        channel.basicConsume(queue, true, consumer);
        return consumer.awaitDeliveries(1).get(0);
    }

    @Test
    void aMandatoryUnroutableMessageIsReturnedWithNoRoute() throws Exception {
        List<Return> returns = new CopyOnWriteArrayList<>();
        channel.addReturnListener(returns::add);
        AMQP.BasicProperties properties = new AMQP.BasicProperties.Builder().messageId("id-1")
            .headers(Map.of("k", "v")).build();
        channel.basicPublish("amq.direct", "no-binding", true, properties, bytes("returned"));
        await().atMost(TIMEOUT).until(() -> returns.size() == 1);
        Return returned = returns.get(0);
        assertThat(returned.getReplyCode()).isEqualTo(AMQP.NO_ROUTE);
        assertThat(returned.getReplyText()).isEqualTo("NO_ROUTE");
        assertThat(returned.getExchange()).isEqualTo("amq.direct");
        assertThat(returned.getRoutingKey()).isEqualTo("no-binding");
        assertThat(text(returned.getBody())).isEqualTo("returned");
        assertThat(returned.getProperties().getMessageId()).isEqualTo("id-1");
        assertThat(returned.getProperties().getHeaders()).containsOnlyKeys("k");
        assertThat(returned.getProperties().getHeaders().get("k")).hasToString("v");

        // through the default exchange, to a queue that is not there
        channel.basicPublish("", unique("no-such-queue"), true, null, bytes("returned too"));
        await().atMost(TIMEOUT).until(() -> returns.size() == 2);
        assertThat(returns.get(1).getReplyCode()).isEqualTo(AMQP.NO_ROUTE);
        assertThat(returns.get(1).getExchange()).isEmpty();
        assertThat(channel.isOpen()).isTrue();
    }

    @Test
    void aRoutableMandatoryMessageIsNotReturnedAndAnUnroutableOtherIsDropped() throws Exception {
        List<Return> returns = new CopyOnWriteArrayList<>();
        channel.addReturnListener(returns::add);
        String queue = channel.queueDeclare().getQueue();
        channel.confirmSelect();
        channel.basicPublish("", queue, true, null, bytes("routed"));
        channel.basicPublish("amq.direct", "no-binding", false, null, bytes("dropped"));
        channel.waitForConfirmsOrDie(TIMEOUT.toMillis());
        assertThat(returns).isEmpty();
        assertThat(channel.isOpen()).isTrue();
        assertThat(channel.queueDeclarePassive(queue).getMessageCount()).isEqualTo(1);
    }

    /**
     * rabbit_channel: {@code basic.publish{immediate = true}} is not_implemented, a connection exception, whether or
     * not the message could go to a consumer at once (RabbitMQ 3.0 onwards, 4.x alike).
     */
    @Test
    void immediateIsNotImplemented() throws Exception {
        String queue = channel.queueDeclare().getQueue();
        channel.basicConsume(queue, true, new Recorder(channel));
        channel.basicPublish("", queue, false, true, null, bytes("immediate"));
        awaitConnectionError(connection, AMQP.NOT_IMPLEMENTED, "NOT_IMPLEMENTED - immediate=true");
    }

    @Test
    void aUserIdOtherThanTheLoginIsRefused() throws Exception {
        String queue = channel.queueDeclare().getQueue();
        channel.basicPublish("", queue, new AMQP.BasicProperties.Builder().userId("guest").build(), bytes("ok"));
        channel.basicPublish("", queue, new AMQP.BasicProperties.Builder().userId("mallory").build(), bytes("no"));
        awaitChannelError(channel, AMQP.PRECONDITION_FAILED,
            "PRECONDITION_FAILED - user_id property set to 'mallory' but authenticated user was 'guest'");
        assertThat(Amqp091Support.passive(connection, queue).getMessageCount()).isEqualTo(1);
    }

    @Test
    void everyPropertyArrivesAsSent() throws Exception {
        Date timestamp = new Date(1_700_000_000_000L); // whole seconds: the wire carries seconds
        AMQP.BasicProperties sent = new AMQP.BasicProperties.Builder()
            .contentType("application/json")
            .contentEncoding("gzip")
            .headers(Map.of("h", "v"))
            .deliveryMode(2)
            .priority(7)
            .correlationId("corr-1")
            .replyTo("reply-queue")
            .expiration("600000")
            .messageId("msg-1")
            .timestamp(timestamp)
            .type("order.created")
            .userId("guest")
            .appId("skiff-tests")
            .clusterId("cluster-x")
            .build();
        AMQP.BasicProperties got = roundTrip(sent, bytes("{}")).getProperties();
        assertThat(got.getContentType()).isEqualTo("application/json");
        assertThat(got.getContentEncoding()).isEqualTo("gzip");
        assertThat(got.getHeaders()).containsOnlyKeys("h");
        assertThat(got.getDeliveryMode()).isEqualTo(2);
        assertThat(got.getPriority()).isEqualTo(7);
        assertThat(got.getCorrelationId()).isEqualTo("corr-1");
        assertThat(got.getReplyTo()).isEqualTo("reply-queue");
        assertThat(got.getExpiration()).isEqualTo("600000");
        assertThat(got.getMessageId()).isEqualTo("msg-1");
        assertThat(got.getTimestamp()).isEqualTo(timestamp);
        assertThat(got.getType()).isEqualTo("order.created");
        assertThat(got.getUserId()).isEqualTo("guest");
        assertThat(got.getAppId()).isEqualTo("skiff-tests");
        assertThat(got.getClusterId()).isEqualTo("cluster-x");
    }

    @Test
    void noPropertiesArriveAsNoProperties() throws Exception {
        AMQP.BasicProperties got = roundTrip(null, bytes("bare")).getProperties();
        assertThat(got.getContentType()).isNull();
        assertThat(got.getHeaders()).isNull();
        assertThat(got.getDeliveryMode()).isNull();
        assertThat(got.getPriority()).isNull();
        assertThat(got.getTimestamp()).isNull();
        assertThat(got.getMessageId()).isNull();
    }

    @Test
    void headersOfEveryFieldTypeArriveAsSent() throws Exception {
        Map<String, Object> nested = new LinkedHashMap<>();
        nested.put("inner", "value");
        nested.put("depth", Map.of("deeper", 1));
        Map<String, Object> headers = new LinkedHashMap<>();
        headers.put("longstr", "text é ✓");
        headers.put("bool-true", true);
        headers.put("bool-false", false);
        headers.put("byte", (byte) -8);
        headers.put("short", (short) -1234);
        headers.put("int", -123_456);
        headers.put("long", 1L << 40);
        headers.put("float", 1.5f);
        headers.put("double", -2.25d);
        headers.put("decimal", new BigDecimal("123.45"));
        headers.put("timestamp", new Date(1_700_000_000_000L));
        headers.put("table", nested);
        headers.put("array", Arrays.asList("a", 1, true, List.of(2, 3)));
        headers.put("bytes", new byte[] {0, 1, (byte) 0xff});
        headers.put("void", null);
        headers.put("empty-string", "");
        AMQP.BasicProperties got = roundTrip(new AMQP.BasicProperties.Builder().headers(headers).build(),
            bytes("headers")).getProperties();
        Map<String, Object> h = got.getHeaders();
        assertThat(h).containsOnlyKeys(headers.keySet());
        assertThat(h.get("longstr")).isInstanceOf(LongString.class).hasToString("text é ✓");
        assertThat(h.get("bool-true")).isEqualTo(true);
        assertThat(h.get("bool-false")).isEqualTo(false);
        assertThat(h.get("byte")).isEqualTo((byte) -8);
        assertThat(h.get("short")).isEqualTo((short) -1234);
        assertThat(h.get("int")).isEqualTo(-123_456);
        assertThat(h.get("long")).isEqualTo(1L << 40);
        assertThat(h.get("float")).isEqualTo(1.5f);
        assertThat(h.get("double")).isEqualTo(-2.25d);
        assertThat(h.get("decimal")).isEqualTo(new BigDecimal("123.45"));
        assertThat(h.get("timestamp")).isEqualTo(new Date(1_700_000_000_000L));
        @SuppressWarnings("unchecked")
        Map<String, Object> table = (Map<String, Object>) h.get("table");
        assertThat(table).containsOnlyKeys("inner", "depth");
        assertThat(table.get("inner")).hasToString("value");
        assertThat(table.get("depth")).isEqualTo(Map.of("deeper", 1));
        @SuppressWarnings("unchecked")
        List<Object> array = (List<Object>) h.get("array");
        assertThat(array).hasSize(4);
        assertThat(array.get(0)).hasToString("a");
        assertThat(array.get(1)).isEqualTo(1);
        assertThat(array.get(2)).isEqualTo(true);
        assertThat(array.get(3)).isEqualTo(List.of(2, 3));
        assertThat(h.get("bytes")).isEqualTo(new byte[] {0, 1, (byte) 0xff});
        assertThat(h).containsEntry("void", null);
        assertThat(h.get("empty-string")).hasToString("");
    }

    @Test
    void aOneMegabyteBodyCrossesManyBodyFramesIntact() throws Exception {
        byte[] body = new byte[1024 * 1024];
        new Random(11).nextBytes(body);
        // 131072-byte frames: 9 body frames each way
        assertThat(roundTrip(null, body).getBody()).isEqualTo(body);

        ConnectionFactory small = target.factory();
        small.setRequestedFrameMax(8192); // the least RabbitMQ 4.1 allows
        try (Connection smallFrames = small.newConnection()) {
            Channel c = smallFrames.createChannel();
            String queue = c.queueDeclare().getQueue();
            c.basicPublish("", queue, null, body); // 257 body frames in
            Recorder consumer = new Recorder(c);
            c.basicConsume(queue, true, consumer);
            assertThat(consumer.awaitDeliveries(1).get(0).getBody()).isEqualTo(body); // and out
        }
    }

    @Test
    void anEmptyBodyArrivesEmpty() throws Exception {
        Delivery delivery = roundTrip(new AMQP.BasicProperties.Builder().messageId("empty").build(), new byte[0]);
        assertThat(delivery.getBody()).isEmpty();
        assertThat(delivery.getProperties().getMessageId()).isEqualTo("empty");
    }

    @Test
    void messagesFromOneChannelArriveInOrder() throws Exception {
        String queue = channel.queueDeclare().getQueue();
        List<String> sent = new ArrayList<>();
        for (int i = 0; i < 200; i++) {
            sent.add("m" + i);
            channel.basicPublish("", queue, null, bytes("m" + i));
        }
        Channel consuming = connection.createChannel();
        Recorder consumer = new Recorder(consuming);
        consuming.basicConsume(queue, true, consumer);
        consumer.awaitExactly(200);
        assertThat(consumer.bodies()).containsExactlyElementsOf(sent);
    }

    /** RabbitMQ 4.0 lowered max_message_size to 16 MiB (3.x: 128 MiB); SkiffMQ's max-message-size is 16 MiB too. */
    @Test
    void aMessageOverTheMaximumSizeIsPreconditionFailed() throws Exception {
        org.junit.jupiter.api.Assumptions.assumeFalse(Amqp091Support.externalOlderThan(target, 4, 0),
            "RabbitMQ 3.x allows 128 MiB");
        String queue = channel.queueDeclare().getQueue();
        channel.basicPublish("", queue, null, new byte[16 * 1024 * 1024 + 1]);
        awaitChannelError(channel, AMQP.PRECONDITION_FAILED,
            "PRECONDITION_FAILED - message size 16777217 is larger than configured max size 16777216");
    }
}
