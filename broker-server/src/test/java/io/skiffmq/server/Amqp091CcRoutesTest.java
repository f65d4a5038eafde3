package io.skiffmq.server;

import static io.skiffmq.server.Amqp091Support.TIMEOUT;
import static io.skiffmq.server.Amqp091Support.await;
import static io.skiffmq.server.Amqp091Support.awaitChannelError;
import static io.skiffmq.server.Amqp091Support.bytes;
import static io.skiffmq.server.Amqp091Support.text;
import static io.skiffmq.server.Amqp091Support.unique;
import static org.assertj.core.api.Assertions.assertThat;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.GetResponse;
import com.rabbitmq.client.Return;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The {@code CC} and {@code BCC} headers (RabbitMQ's "sender-selected distribution"): a message goes through its
 * exchange with its routing key and every key they name, to each queue once; BCC is gone before any consumer sees
 * the message, dead-lettered ones included; a header that is no array closes the channel with 406. The cases of the
 * RabbitMQ Java client's {@code CcRoutes} functional test, and what RabbitMQ 4 does around them
 * ({@code rabbit_basic:header_routes/1}, {@code mc_amqpl}, {@code mc:record_death/3}).
 */
class Amqp091CcRoutesTest extends Amqp091ClientTest {
    private final List<String> queues = new ArrayList<>();
    private final List<String> exchanges = new ArrayList<>();

    @BeforeEach
    void declare() throws Exception {
        for (int i = 1; i <= 3; i++) {
            String queue = unique("cc-" + i);
            channel.queueDeclare(queue, false, false, true, null);
            queues.add(queue);
        }
    }

    @AfterEach
    void cleanUp() throws Exception {
        try (Connection cleaner = target.factory().newConnection()) {
            Channel c = cleaner.createChannel();
            for (String queue : queues) {
                c.queueDelete(queue);
            }
            for (String exchange : exchanges) {
                c.exchangeDelete(exchange);
            }
        }
    }

    private String q(int n) {
        return queues.get(n - 1);
    }

    private String exchange(String type) throws Exception {
        String name = unique(type);
        channel.exchangeDeclare(name, type, false, true, null);
        exchanges.add(name);
        return name;
    }

    private static AMQP.BasicProperties headers(List<?> cc, List<?> bcc) {
        Map<String, Object> headers = new HashMap<>();
        headers.put("app", "kept");
        if (cc != null) {
            headers.put("CC", cc);
        }
        if (bcc != null) {
            headers.put("BCC", bcc);
        }
        return new AMQP.BasicProperties.Builder().headers(headers).build();
    }

    private void publish(String exchange, String key, List<?> cc, List<?> bcc) throws Exception {
        Amqp091Support.publishConfirmed(connection, exchange, key, headers(cc, bcc), "m");
    }

    /** Each queue's message, as {@code CcRoutes.expect} checks it: the expected ones have one, with CC as sent. */
    private void expect(List<String> expected, boolean withCc) throws Exception {
        for (String queue : queues) {
            GetResponse got = channel.basicGet(queue, true);
            if (expected.contains(queue)) {
                assertThat(got).as(queue).isNotNull();
                assertThat(got.getMessageCount()).as("no duplicate in " + queue).isZero();
                Map<String, Object> headers = got.getProps().getHeaders();
                assertThat(headers).containsKey("app").doesNotContainKey("BCC");
                assertThat(headers.containsKey("CC")).isEqualTo(withCc);
            } else {
                assertThat(got).as(queue).isNull();
            }
        }
    }

    @Test
    void ccRoutesToEveryKeyItNames() throws Exception {
        publish("", q(1), List.of(q(2), q(3)), null);
        expect(List.of(q(1), q(2), q(3)), true);
    }

    @Test
    void bccRoutesTooAndIsGoneBeforeDelivery() throws Exception {
        publish("", q(1), null, List.of(q(2)));
        expect(List.of(q(1), q(2)), false);
    }

    @Test
    void emptyListsAndEntriesThatAreNoStringsAreIgnored() throws Exception {
        publish("", q(1), List.of(), List.of("frob"));
        expect(List.of(q(1)), true);
        publish("", q(1), List.of(5, q(2), true), null);
        expect(List.of(q(1), q(2)), true);
    }

    @Test
    void aQueueNamedSeveralTimesGetsTheMessageOnce() throws Exception {
        publish("", q(1), List.of(q(1), q(1)), List.of(q(1)));
        expect(List.of(q(1)), true);
    }

    @Test
    void theKeysGoThroughTheExchangeTheMessageWasPublishedTo() throws Exception {
        String direct = exchange("direct");
        publish(direct, q(2), List.of(q(1)), null);
        expect(List.of(), true);

        String topic = exchange("topic");
        channel.queueBind(q(2), topic, "routing_key");
        publish(topic, "", List.of("routing_key"), null);
        expect(List.of(q(2)), true);
    }

    @Test
    void anExchangeReachedThroughOneKeyMatchesTheOthers() throws Exception {
        String direct = exchange("direct");
        String topic = exchange("topic");
        channel.exchangeBind(topic, direct, "routing_key1");
        channel.queueBind(q(2), topic, "routing_key2");
        publish(direct, "", List.of("routing_key1"), List.of("routing_key2"));
        expect(List.of(q(2)), true);
    }

    @Test
    void aCcOrBccThatIsNoArrayClosesTheChannel() throws Exception {
        Map<String, Object> headers = Map.of("CC", 0);
        channel.basicPublish("", q(1), new AMQP.BasicProperties.Builder().headers(headers).build(), bytes("m"));
        awaitChannelError(channel, AMQP.PRECONDITION_FAILED,
            "PRECONDITION_FAILED - invalid message: {unacceptable_type_in_header,\"CC\",signedint}");
        channel = connection.createChannel();
        channel.basicPublish("", q(1), new AMQP.BasicProperties.Builder().headers(Map.of("BCC", "q")).build(),
            bytes("m"));
        awaitChannelError(channel, AMQP.PRECONDITION_FAILED,
            "PRECONDITION_FAILED - invalid message: {unacceptable_type_in_header,\"BCC\",longstr}");
        channel = connection.createChannel();
        expect(List.of(), false);
    }

    @Test
    void inATransactionTheHeadersAreCheckedOnPublishAndBccIsGoneAfterTheCommit() throws Exception {
        Channel tx = connection.createChannel();
        tx.txSelect();
        tx.basicPublish("", q(1), headers(null, List.of(q(2))), bytes("m"));
        tx.txCommit();
        expect(List.of(q(1), q(2)), false);

        tx.basicPublish("", q(1), new AMQP.BasicProperties.Builder().headers(Map.of("CC", 1L)).build(), bytes("m"));
        awaitChannelError(tx, AMQP.PRECONDITION_FAILED,
            "PRECONDITION_FAILED - invalid message: {unacceptable_type_in_header,\"CC\",long}");
    }

    @Test
    void aReturnedMessageHasNoBcc() throws Exception {
        List<Return> returns = new CopyOnWriteArrayList<>();
        channel.addReturnListener(returns::add);
        String missing = unique("nowhere");
        channel.basicPublish("", missing, true, headers(null, List.of(unique("nowhere-either"))), bytes("m"));
        await().atMost(TIMEOUT).until(() -> returns.size() == 1);
        assertThat(returns.get(0).getRoutingKey()).isEqualTo(missing);
        assertThat(returns.get(0).getProperties().getHeaders()).containsKey("app").doesNotContainKey("BCC");
    }

    @Test
    @SuppressWarnings("unchecked")
    void aDeadLetteredMessageGoesOnWithItsCcKeysHasNoBccAndItsDeathNamesTheCcKeys() throws Exception {
        // q4 dead-letters to amq.direct without a dead-letter routing key: the message goes on with all its keys
        String dying = unique("cc-dying");
        queues.add(dying);
        channel.queueDeclare(dying, false, false, true, Map.of("x-dead-letter-exchange", "amq.direct"));
        String byCc = unique("cc-dead");
        queues.add(byCc);
        channel.queueDeclare(byCc, false, false, true, null);
        channel.queueBind(byCc, "amq.direct", "copy-key");
        publish("", dying, List.of("copy-key"), List.of(q(1)));
        GetResponse taken = channel.basicGet(dying, false);
        assertThat(taken.getProps().getHeaders()).doesNotContainKey("BCC");
        channel.basicReject(taken.getEnvelope().getDeliveryTag(), false);
        await().atMost(TIMEOUT).until(() -> channel.queueDeclarePassive(byCc).getMessageCount() == 1);
        GetResponse dead = channel.basicGet(byCc, true);
        Map<String, Object> headers = dead.getProps().getHeaders();
        assertThat(headers).containsKey("CC").doesNotContainKey("BCC");
        List<Map<String, Object>> deaths = (List<Map<String, Object>>) headers.get("x-death");
        assertThat((List<Object>) deaths.get(0).get("routing-keys")).extracting(Object::toString)
            .as("its routing key and CC keys, not its BCC keys").containsExactly(dying, "copy-key");
        assertThat(text(dead.getBody())).isEqualTo("m");
        // the BCC queue had its copy when it was published, and no other
        assertThat(channel.basicGet(q(1), true)).isNotNull();
        assertThat(channel.basicGet(q(1), true)).isNull();
    }
}
