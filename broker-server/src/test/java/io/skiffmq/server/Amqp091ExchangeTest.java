package io.skiffmq.server;

import static io.skiffmq.server.Amqp091Support.TIMEOUT;
import static io.skiffmq.server.Amqp091Support.awaitChannelError;
import static io.skiffmq.server.Amqp091Support.bytes;
import static io.skiffmq.server.Amqp091Support.channelError;
import static io.skiffmq.server.Amqp091Support.connectionError;
import static io.skiffmq.server.Amqp091Support.exchangeExists;
import static io.skiffmq.server.Amqp091Support.text;
import static io.skiffmq.server.Amqp091Support.unique;
import static org.assertj.core.api.Assertions.assertThat;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.BuiltinExchangeType;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.GetResponse;
import com.rabbitmq.client.Return;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Exchanges: the four types and how each routes, passive declares, equivalence (406), the reserved names (403),
 * durable, auto-delete and internal exchanges, alternate exchanges, delete with if-unused, and exchange-to-exchange
 * bindings. Names are unique per test (an external broker keeps durable ones); each test deletes what it declared.
 */
class Amqp091ExchangeTest extends Amqp091ClientTest {
    private final List<String> exchanges = new ArrayList<>();

    @AfterEach
    void cleanUp() throws Exception {
        try (Connection cleaner = target.factory().newConnection()) {
            Channel c = cleaner.createChannel();
            for (String exchange : exchanges) {
                c.exchangeDelete(exchange);
            }
        }
        if (connection.isOpen()) {
            connection.close();
        }
    }

    /** A unique exchange name, deleted after the test. */
    private String exchange(String prefix) {
        String name = unique(prefix);
        exchanges.add(name);
        return name;
    }

    /** A server-named exclusive queue bound to {@code exchange}. */
    private String boundQueue(String exchange, String key, Map<String, Object> arguments) throws Exception {
        String queue = channel.queueDeclare().getQueue();
        channel.queueBind(queue, exchange, key, arguments);
        return queue;
    }

    /** The bodies waiting in {@code queue}, taken. */
    private List<String> drain(String queue) throws Exception {
        List<String> bodies = new ArrayList<>();
        for (GetResponse r; (r = channel.basicGet(queue, true)) != null; ) {
            bodies.add(text(r.getBody()));
        }
        return bodies;
    }

    /** Publishes with confirms on this test's channel, so what is routed is in the queues afterwards. */
    private void publish(String exchange, String key, AMQP.BasicProperties properties, String body) throws Exception {
        Channel publisher = connection.createChannel();
        publisher.confirmSelect();
        publisher.basicPublish(exchange, key, properties, bytes(body));
        publisher.waitForConfirmsOrDie(TIMEOUT.toMillis());
        publisher.close();
    }

    @Test
    void aDirectExchangeRoutesOnTheWholeKey() throws Exception {
        String direct = exchange("direct");
        channel.exchangeDeclare(direct, BuiltinExchangeType.DIRECT);
        String orders = boundQueue(direct, "orders", null);
        String both = boundQueue(direct, "orders", null);
        channel.queueBind(both, direct, "refunds");
        publish(direct, "orders", null, "o1");
        publish(direct, "refunds", null, "r1");
        publish(direct, "orders.new", null, "nowhere");
        assertThat(drain(orders)).containsExactly("o1");
        assertThat(drain(both)).containsExactly("o1", "r1");
    }

    @Test
    void aFanoutExchangeIgnoresTheKey() throws Exception {
        String fanout = exchange("fanout");
        channel.exchangeDeclare(fanout, BuiltinExchangeType.FANOUT);
        String a = boundQueue(fanout, "", null);
        String b = boundQueue(fanout, "whatever", null);
        publish(fanout, "any.key", null, "m1");
        assertThat(drain(a)).containsExactly("m1");
        assertThat(drain(b)).containsExactly("m1");
    }

    @Test
    void aTopicExchangeMatchesStarAndHash() throws Exception {
        String topic = exchange("topic");
        channel.exchangeDeclare(topic, BuiltinExchangeType.TOPIC);
        String star = boundQueue(topic, "stock.*.nyse", null);
        String hash = boundQueue(topic, "stock.#", null);
        String exact = boundQueue(topic, "stock.ibm.nyse", null);
        publish(topic, "stock.ibm.nyse", null, "ibm");
        publish(topic, "stock.ibm.nasdaq.extra", null, "deep");
        publish(topic, "stock", null, "bare");
        publish(topic, "bonds.x.nyse", null, "nowhere");
        assertThat(drain(star)).containsExactly("ibm");
        assertThat(drain(hash)).containsExactly("ibm", "deep", "bare");
        assertThat(drain(exact)).containsExactly("ibm");
    }

    @Test
    void aHeadersExchangeMatchesAllOrAny() throws Exception {
        String headers = exchange("headers");
        channel.exchangeDeclare(headers, BuiltinExchangeType.HEADERS);
        String all = boundQueue(headers, "", Map.of("x-match", "all", "format", "pdf", "type", "report"));
        String any = boundQueue(headers, "", Map.of("x-match", "any", "format", "pdf", "type", "log"));
        publish(headers, "ignored", props(Map.of("format", "pdf", "type", "report")), "pdf report");
        publish(headers, "ignored", props(Map.of("format", "zip", "type", "log")), "zip log");
        publish(headers, "ignored", props(Map.of("format", "txt")), "nowhere");
        assertThat(drain(all)).containsExactly("pdf report");
        assertThat(drain(any)).containsExactly("pdf report", "zip log");
    }

    private static AMQP.BasicProperties props(Map<String, Object> headers) {
        return new AMQP.BasicProperties.Builder().headers(headers).build();
    }

    @Test
    void passiveDeclareFindsAnExchangeOrClosesTheChannelWith404() throws Exception {
        String direct = exchange("passive");
        channel.exchangeDeclare(direct, BuiltinExchangeType.DIRECT);
        channel.exchangeDeclarePassive(direct);
        channel.exchangeDeclarePassive("amq.direct");
        channel.exchangeDeclarePassive("amq.fanout");
        channel.exchangeDeclarePassive("amq.topic");
        channel.exchangeDeclarePassive("amq.headers");
        channel.exchangeDeclarePassive("amq.match");
        String missing = unique("missing");
        channelError(channel, AMQP.NOT_FOUND, "NOT_FOUND - no exchange '" + missing + "' in vhost '/'",
            () -> channel.exchangeDeclarePassive(missing));
    }

    @Test
    void redeclaringWithAnotherTypeIsPreconditionFailed() throws Exception {
        String name = exchange("retype");
        channel.exchangeDeclare(name, BuiltinExchangeType.DIRECT);
        channel.exchangeDeclare(name, BuiltinExchangeType.DIRECT); // the same again is fine
        channelError(channel, AMQP.PRECONDITION_FAILED,
            "PRECONDITION_FAILED - inequivalent arg 'type' for exchange '" + name + "' in vhost '/': "
                + "received 'fanout' but current is 'direct'",
            () -> channel.exchangeDeclare(name, BuiltinExchangeType.FANOUT));
    }

    @Test
    void redeclaringWithOtherFlagsOrAlternateExchangeIsPreconditionFailed() throws Exception {
        String name = exchange("reflag");
        channel.exchangeDeclare(name, BuiltinExchangeType.DIRECT, true, false, false, null);
        channelError(channel, AMQP.PRECONDITION_FAILED,
            "PRECONDITION_FAILED - inequivalent arg 'durable' for exchange '" + name + "' in vhost '/': "
                + "received 'false' but current is 'true'",
            () -> channel.exchangeDeclare(name, BuiltinExchangeType.DIRECT, false, false, false, null));
        channel = connection.createChannel();
        channelError(channel, AMQP.PRECONDITION_FAILED,
            "PRECONDITION_FAILED - inequivalent arg 'auto_delete' for exchange '" + name + "' in vhost '/': "
                + "received 'true' but current is 'false'",
            () -> channel.exchangeDeclare(name, BuiltinExchangeType.DIRECT, true, true, false, null));
        channel = connection.createChannel();
        channelError(channel, AMQP.PRECONDITION_FAILED,
            "PRECONDITION_FAILED - inequivalent arg 'internal' for exchange '" + name + "' in vhost '/': "
                + "received 'true' but current is 'false'",
            () -> channel.exchangeDeclare(name, BuiltinExchangeType.DIRECT, true, false, true, null));
        channel = connection.createChannel();
        channelError(channel, AMQP.PRECONDITION_FAILED,
            "PRECONDITION_FAILED - inequivalent arg 'alternate-exchange' for exchange '" + name + "' in vhost '/'",
            () -> channel.exchangeDeclare(name, BuiltinExchangeType.DIRECT, true, false, false,
                Map.of("alternate-exchange", "elsewhere")));
        channel = connection.createChannel();
        // an argument RabbitMQ does not know is not compared
        channel.exchangeDeclare(name, BuiltinExchangeType.DIRECT, true, false, false, Map.of("x-custom", 1));
    }

    @Test
    void anExchangeTypeIsMatchedExactly() throws Exception {
        // rabbit_exchange:check_type looks the type up as given: "DIRECT" is no type
        String name = exchange("upper");
        connectionError(connection, AMQP.COMMAND_INVALID, "COMMAND_INVALID - unknown exchange type 'DIRECT'",
            () -> channel.exchangeDeclare(name, "DIRECT"));
    }

    @Test
    void amqNamesAndTheDefaultExchangeAreRefused() throws Exception {
        // rabbit_channel:check_name: "exchange name 'amq.mine' contains reserved prefix 'amq.*'"
        channelError(channel, AMQP.ACCESS_REFUSED,
            "ACCESS_REFUSED - exchange name 'amq.mine' contains reserved prefix 'amq.*'",
            () -> channel.exchangeDeclare("amq.mine", BuiltinExchangeType.DIRECT));
        channel = connection.createChannel();
        // an existing amq.* exchange may be declared again as it is
        channel.exchangeDeclare("amq.direct", BuiltinExchangeType.DIRECT, true);
        channelError(channel, AMQP.ACCESS_REFUSED,
            "ACCESS_REFUSED - operation not permitted on the default exchange",
            () -> channel.exchangeDelete(""));
        channel = connection.createChannel();
        channelError(channel, AMQP.ACCESS_REFUSED,
            "ACCESS_REFUSED - operation not permitted on the default exchange",
            () -> channel.queueBind(channel.queueDeclare().getQueue(), "", "key"));
        channel = connection.createChannel();
        // even a passive declare of "" (rabbit_channel: check_not_default_exchange, passive or not)
        channelError(channel, AMQP.ACCESS_REFUSED,
            "ACCESS_REFUSED - operation not permitted on the default exchange",
            () -> channel.exchangeDeclarePassive(""));
        channel = connection.createChannel();
        channelError(channel, AMQP.ACCESS_REFUSED,
            "ACCESS_REFUSED - deletion of system exchange 'amq.direct' in vhost '/' not allowed",
            () -> channel.exchangeDelete("amq.direct"));
    }

    @Test
    void publishingToAMissingExchangeClosesTheChannel() throws Exception {
        String missing = unique("missing");
        channel.basicPublish(missing, "key", null, bytes("lost"));
        awaitChannelError(channel, AMQP.NOT_FOUND, "NOT_FOUND - no exchange '" + missing + "' in vhost '/'");
    }

    @Test
    void publishingToAnInternalExchangeIsRefusedButItRoutesFromAnotherExchange() throws Exception {
        String internal = exchange("internal");
        String front = exchange("front");
        channel.exchangeDeclare(internal, BuiltinExchangeType.FANOUT, false, false, true, null);
        channel.exchangeDeclare(front, BuiltinExchangeType.FANOUT, false, false, false, null);
        channel.exchangeBind(internal, front, "");
        String queue = boundQueue(internal, "", null);
        publish(front, "", null, "through the front");
        assertThat(drain(queue)).containsExactly("through the front");

        channel.basicPublish(internal, "", null, bytes("direct to internal"));
        awaitChannelError(channel, AMQP.ACCESS_REFUSED,
            "ACCESS_REFUSED - cannot publish to internal exchange '" + internal + "' in vhost '/'");
    }

    @Test
    void aDurableExchangeIsSeenFromAnotherConnection() throws Exception {
        String durable = exchange("durable");
        channel.exchangeDeclare(durable, BuiltinExchangeType.TOPIC, true);
        try (Connection other = target.factory().newConnection()) {
            other.createChannel().exchangeDeclarePassive(durable);
        }
    }

    @Test
    void anAutoDeleteExchangeGoesWithItsLastBinding() throws Exception {
        String auto = exchange("auto");
        channel.exchangeDeclare(auto, BuiltinExchangeType.DIRECT, false, true, null);
        // never bound: it stays
        assertThat(exchangeExists(connection, auto)).isTrue();
        String q1 = boundQueue(auto, "a", null);
        String q2 = boundQueue(auto, "b", null);
        channel.queueUnbind(q1, auto, "a");
        assertThat(exchangeExists(connection, auto)).as("one binding left").isTrue();
        channel.queueUnbind(q2, auto, "b");
        assertThat(exchangeExists(connection, auto)).as("after its last binding").isFalse();
    }

    @Test
    void anAutoDeleteExchangeGoesWhenItsLastBoundQueueIsDeleted() throws Exception {
        String auto = exchange("auto-q");
        channel.exchangeDeclare(auto, BuiltinExchangeType.FANOUT, false, true, null);
        String queue = boundQueue(auto, "", null);
        channel.queueDelete(queue);
        assertThat(exchangeExists(connection, auto)).isFalse();
    }

    @Test
    void anAlternateExchangeTakesWhatTheExchangeCannotRoute() throws Exception {
        String alternate = exchange("alternate");
        String main = exchange("main");
        channel.exchangeDeclare(alternate, BuiltinExchangeType.FANOUT);
        channel.exchangeDeclare(main, BuiltinExchangeType.DIRECT, false, false,
            Map.of("alternate-exchange", alternate));
        String routed = boundQueue(main, "known", null);
        String unrouted = boundQueue(alternate, "", null);
        List<Return> returns = new CopyOnWriteArrayList<>();
        Channel publisher = connection.createChannel();
        publisher.addReturnListener(returns::add);
        publisher.confirmSelect();
        publisher.basicPublish(main, "known", true, null, bytes("routed"));
        publisher.basicPublish(main, "unknown", true, null, bytes("to the alternate"));
        publisher.waitForConfirmsOrDie(TIMEOUT.toMillis());
        assertThat(drain(routed)).containsExactly("routed");
        assertThat(drain(unrouted)).containsExactly("to the alternate");
        assertThat(returns).as("routed by the alternate exchange: not returned although mandatory").isEmpty();
    }

    @Test
    void aMissingAlternateExchangeLeavesTheMessageUnroutable() throws Exception {
        String main = exchange("main-no-ae");
        channel.exchangeDeclare(main, BuiltinExchangeType.DIRECT, false, false,
            Map.of("alternate-exchange", unique("absent")));
        List<Return> returns = new CopyOnWriteArrayList<>();
        Channel publisher = connection.createChannel();
        publisher.addReturnListener(returns::add);
        publisher.confirmSelect();
        publisher.basicPublish(main, "unknown", true, null, bytes("returned"));
        publisher.waitForConfirmsOrDie(TIMEOUT.toMillis());
        assertThat(returns).singleElement().satisfies(r -> {
            assertThat(r.getReplyCode()).isEqualTo(AMQP.NO_ROUTE);
            assertThat(text(r.getBody())).isEqualTo("returned");
        });
    }

    @Test
    void deleteIfUnusedRefusesAnExchangeWithBindings() throws Exception {
        String used = exchange("used");
        channel.exchangeDeclare(used, BuiltinExchangeType.DIRECT);
        String queue = boundQueue(used, "k", null);
        channelError(channel, AMQP.PRECONDITION_FAILED,
            "PRECONDITION_FAILED - exchange '" + used + "' in vhost '/' in use",
            () -> channel.exchangeDelete(used, true));
        channel = connection.createChannel();
        assertThat(exchangeExists(connection, used)).isTrue();
        channel.queueUnbind(queue, used, "k");
        channel.exchangeDelete(used, true);
        assertThat(exchangeExists(connection, used)).isFalse();
    }

    @Test
    void deleteRemovesTheExchangeAndItsBindings() throws Exception {
        String gone = exchange("gone");
        channel.exchangeDeclare(gone, BuiltinExchangeType.DIRECT);
        String queue = boundQueue(gone, "k", null);
        channel.exchangeDelete(gone);
        assertThat(exchangeExists(connection, gone)).isFalse();
        channel.exchangeDeclare(gone, BuiltinExchangeType.DIRECT);
        publish(gone, "k", null, "not routed: the binding went with the exchange");
        assertThat(drain(queue)).isEmpty();
        // deleting a missing exchange is not an error
        channel.exchangeDelete(unique("never-declared"));
        assertThat(channel.isOpen()).isTrue();
    }

    @Test
    void exchangeToExchangeBindingsRouteUntilUnbound() throws Exception {
        String source = exchange("source");
        String destination = exchange("destination");
        channel.exchangeDeclare(source, BuiltinExchangeType.TOPIC);
        channel.exchangeDeclare(destination, BuiltinExchangeType.DIRECT);
        channel.exchangeBind(destination, source, "orders.*");
        String queue = boundQueue(destination, "orders.new", null);
        String direct = boundQueue(source, "orders.new", null);
        publish(source, "orders.new", null, "m1");
        publish(source, "orders.old", null, "m2: reaches the destination, which has no binding for it");
        assertThat(drain(queue)).containsExactly("m1");
        assertThat(drain(direct)).containsExactly("m1");

        channel.exchangeUnbind(destination, source, "orders.*");
        publish(source, "orders.new", null, "m3");
        assertThat(drain(queue)).isEmpty();
        assertThat(drain(direct)).containsExactly("m3");
        // unbinding what is not bound is fine
        channel.exchangeUnbind(destination, source, "orders.*");
    }

    @Test
    void exchangeBindingsThatFormACycleDeliverOnce() throws Exception {
        String a = exchange("cycle-a");
        String b = exchange("cycle-b");
        channel.exchangeDeclare(a, BuiltinExchangeType.FANOUT);
        channel.exchangeDeclare(b, BuiltinExchangeType.FANOUT);
        channel.exchangeBind(b, a, "");
        channel.exchangeBind(a, b, "");
        String queue = boundQueue(a, "", null);
        channel.queueBind(queue, b, "");
        publish(a, "", null, "once");
        assertThat(drain(queue)).containsExactly("once");
    }

    /** Declares auto-delete fanout exchanges. */
    private void autoDeleteFanouts(String... names) throws Exception {
        for (String name : names) {
            channel.exchangeDeclare(name, BuiltinExchangeType.FANOUT, false, true, null);
        }
    }

    @Test
    void autoDeleteExchangesCascadeThroughExchangeBindingsOnUnbind() throws Exception {
        // a -> b and b -> a: unbinding a -> b leaves a without bindings; a goes, and with it b -> a, so b goes too
        String a = exchange("loop-a");
        String b = exchange("loop-b");
        autoDeleteFanouts(a, b);
        channel.exchangeBind(b, a, "");
        channel.exchangeBind(a, b, "");
        channel.exchangeUnbind(b, a, "");
        assertThat(exchangeExists(connection, a)).isFalse();
        assertThat(exchangeExists(connection, b)).isFalse();
    }

    @Test
    void autoDeleteExchangesCascadeWhenTheirDestinationExchangeIsDeleted() throws Exception {
        // a -> b -> c -> d, a -> c, and source -> each: deleting d empties c, then b, then a; source keeps its
        // bindings to the ones still there until the last goes
        String a = exchange("chain-a");
        String b = exchange("chain-b");
        String c = exchange("chain-c");
        String d = exchange("chain-d");
        String source = exchange("chain-source");
        autoDeleteFanouts(a, b, c, d, source);
        channel.exchangeBind(b, a, "");
        channel.exchangeBind(c, b, "");
        channel.exchangeBind(d, c, "");
        channel.exchangeBind(c, a, "");
        for (String e : List.of(a, b, c, d)) {
            channel.exchangeBind(e, source, "");
        }
        channel.exchangeDelete(d);
        for (String e : List.of(a, b, c, d)) {
            assertThat(exchangeExists(connection, e)).as(e).isFalse();
        }
        assertThat(exchangeExists(connection, source)).as("it lost its last binding too").isFalse();
    }

    @Test
    void anAutoDeleteExchangeBoundOnlyToAnotherOneGoesWhenThatOnesQueueIsDeleted() throws Exception {
        String upstream = exchange("upstream");
        String downstream = exchange("downstream");
        autoDeleteFanouts(upstream, downstream);
        channel.exchangeBind(downstream, upstream, "");
        String queue = boundQueue(downstream, "", null);
        channel.queueDelete(queue);
        assertThat(exchangeExists(connection, downstream)).isFalse();
        assertThat(exchangeExists(connection, upstream)).isFalse();
    }

    @Test
    void bindingToAMissingExchangeIsNotFound() throws Exception {
        String missing = unique("missing");
        String queue = channel.queueDeclare().getQueue();
        channelError(channel, AMQP.NOT_FOUND, "NOT_FOUND - no exchange '" + missing + "' in vhost '/'",
            () -> channel.queueBind(queue, missing, "k"));
        channel = connection.createChannel();
        String destination = exchange("dest");
        channel.exchangeDeclare(destination, BuiltinExchangeType.FANOUT);
        channelError(channel, AMQP.NOT_FOUND, "NOT_FOUND - no exchange '" + missing + "' in vhost '/'",
            () -> channel.exchangeBind(destination, missing, "k"));
    }

    @Test
    void unbindingWhatDoesNotExistIsFine() throws Exception {
        String missingExchange = unique("missing-x");
        String missingQueue = unique("missing-q");
        String queue = boundQueue("amq.direct", "k", null);
        // queue.unbind of a missing queue, exchange or both: unbind-ok, as RabbitMQ 4 answers
        channel.queueUnbind(missingQueue, "amq.direct", "k");
        channel.queueUnbind(queue, missingExchange, "k");
        channel.queueUnbind(missingQueue, missingExchange, "k");
        // exchange.unbind likewise
        channel.exchangeUnbind(missingExchange, "amq.direct", "k");
        channel.exchangeUnbind("amq.fanout", missingExchange, "k");
        assertThat(channel.isOpen()).isTrue();
        // and the default exchange is still refused
        channelError(channel, AMQP.ACCESS_REFUSED, "ACCESS_REFUSED - operation not permitted on the default exchange",
            () -> channel.queueUnbind(missingQueue, "", "k"));
        channel = connection.createChannel();
        publish("amq.direct", "k", null, "still bound");
        assertThat(drain(queue)).containsExactly("still bound");
    }
}
