package io.skiffmq.core.routing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.skiffmq.codec.Bytes;
import io.skiffmq.codec.amqp091.BasicProperties;
import io.skiffmq.codec.amqp10.MessageSections;
import io.skiffmq.codec.amqp10.ProtonCodec;
import io.skiffmq.core.BrokerException;
import io.skiffmq.core.Exchange;
import io.skiffmq.core.VirtualHost;
import io.skiffmq.core.message.Amqp091Message;
import io.skiffmq.core.message.Amqp10Message;
import io.skiffmq.core.message.Message;
import io.skiffmq.core.queue.Queue;
import io.skiffmq.core.queue.QueueExecutor;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.qpid.proton.amqp.Binary;
import org.apache.qpid.proton.amqp.Symbol;
import org.apache.qpid.proton.amqp.UnsignedInteger;
import org.apache.qpid.proton.amqp.messaging.ApplicationProperties;
import org.apache.qpid.proton.amqp.messaging.Data;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Routing against RabbitMQ's documented behaviour, exchange type by exchange type. */
class RoutingTest {

    private final VirtualHost vhost = new VirtualHost("/", () -> QueueExecutor.CALLER_THREAD);
    private final Router router = new Router();

    private List<String> route(String exchange, String key, Map<String, Object> headers) {
        List<Queue> out = vhost.route(vhost.exchange(exchange), key, () -> headers, router, new ArrayList<>());
        return out.stream().map(Queue::name).toList();
    }

    private List<String> route(String exchange, String key) {
        return route(exchange, key, Map.of());
    }

    private void queues(String... names) {
        for (String n : names) {
            vhost.declareQueue(n);
        }
    }

    private void bind(String source, String queue, String key, Map<String, Object> args) {
        vhost.bind(new Binding(source, Destination.queue(queue), key, args));
    }

    private void bind(String source, String queue, String key) {
        bind(source, queue, key, Map.of());
    }

    @ParameterizedTest(name = "binding ''{0}'' vs routing key ''{1}'' -> {2}")
    @CsvSource(delimiter = '|', value = {
        "#|''|true", "#|a|true", "#|a.b.c|true", "*|''|false", "*|a|true", "*|a.b|false",
        "a.#.b|a.b|true", "a.#.b|a.x.b|true", "a.#.b|a.x.y.b|true", "a.#.b|a.b.c|false", "#.#|''|true",
        "#.#|a.b|true", "''|''|true", "''|a|false", "a.*|a.b|true", "a.*|a|false", "a.*.c|a.b.c|true",
        "*.b.#|a.b|true", "*.b.#|a.b.c.d|true", "#.a|a|true", "#.a|x.y.a|true", "#.a|a.x|false",
        "a..b|a..b|true", "a.*.b|a..b|true", "a.#|a|true", "#.b.#|b|true", "#.b.#|a.c|false", "a|A|false"})
    void topicMatchesAsRabbitMq(String binding, String key, boolean matches) {
        queues("q");
        bind("amq.topic", "q", binding);
        assertThat(route("amq.topic", key)).isEqualTo(matches ? List.of("q") : List.of());
    }

    @Test
    void directRoutesByExactKeyAndFanoutToEveryone() {
        queues("a", "b", "c");
        bind("amq.direct", "a", "k1");
        bind("amq.direct", "b", "k1");
        bind("amq.direct", "c", "k2");
        assertThat(route("amq.direct", "k1")).containsExactly("a", "b");
        assertThat(route("amq.direct", "k3")).isEmpty();
        bind("amq.fanout", "a", "ignored");
        bind("amq.fanout", "c", "");
        assertThat(route("amq.fanout", "anything")).containsExactly("a", "c");
    }

    @Test
    void defaultExchangeRoutesByQueueNameAndCannotBeBound() {
        queues("orders");
        assertThat(route("", "orders")).containsExactly("orders");
        assertThat(route("", "missing")).isEmpty();
        assertThatThrownBy(() -> bind("", "orders", "x"))
            .isInstanceOfSatisfying(BrokerException.class, e -> assertThat(e.kind()).isEqualTo(BrokerException.Kind.ACCESS_REFUSED));
    }

    @Test
    void headersMatchEachMode() {
        queues("all", "any", "allx", "anyx", "present");
        bind("amq.headers", "all", "", Map.of("x-match", "all", "a", "1", "b", 2L));
        bind("amq.headers", "any", "", Map.of("x-match", "any", "a", "1", "b", 2L));
        bind("amq.headers", "allx", "", Map.of("x-match", "all-with-x", "x-k", "v", "a", "1"));
        bind("amq.headers", "anyx", "", Map.of("x-match", "any-with-x", "x-k", "v"));
        Map<String, Object> presence = new HashMap<>();
        presence.put("c", null);
        bind("amq.headers", "present", "", presence);

        assertThat(route("amq.headers", "", Map.of("a", "1", "b", 2L))).containsExactlyInAnyOrder("all", "any");
        assertThat(route("amq.headers", "", Map.of("a", "1"))).containsExactly("any");
        assertThat(route("amq.headers", "", Map.of("a", "1", "b", 2))).as("an int 2 is not a long 2")
            .containsExactly("any");
        assertThat(route("amq.headers", "", Map.of("a", "1", "x-k", "v"))).containsExactlyInAnyOrder("any", "allx", "anyx");
        assertThat(route("amq.headers", "", Map.of("c", "whatever"))).containsExactly("present");
        assertThat(route("amq.headers", "", Map.of())).isEmpty();
    }

    @Test
    void aHeadersBindingWithAnXMatchRabbitMqRefusesIsRefused() {
        queues("q");
        Map<String, String> refused = new java.util.LinkedHashMap<>();
        refused.put("some", "Invalid x-match field value <<\"some\">>; expected all, any, all-with-x, or any-with-x");
        refused.put("\u00e9t\u00e9", "Invalid x-match field value <<\"\u00e9t\u00e9\"/utf8>>; expected all, any, "
            + "all-with-x, or any-with-x");
        refused.forEach((mode, text) -> assertThatThrownBy(() -> bind("amq.headers", "q", "", Map.of("x-match", mode)))
            .isInstanceOfSatisfying(BrokerException.class, e -> {
                assertThat(e.kind()).isEqualTo(BrokerException.Kind.PRECONDITION_FAILED);
                assertThat(e.getMessage()).isEqualTo(text);
            }));
        Map<String, Object> voidMode = new HashMap<>();
        voidMode.put("x-match", null);
        assertThatThrownBy(() -> bind("amq.headers", "q", "", voidMode)).hasMessage(
            "Invalid x-match field type void (value undefined); expected longstr");
        assertThatThrownBy(() -> bind("amq.headers", "q", "", Map.of("x-match", 5L))).hasMessage(
            "Invalid x-match field type long (value 5); expected longstr");
        assertThat(vhost.bindings().bindingsFrom("amq.headers")).isEmpty();
        // an AMQP 1.0 symbol is a string; other exchange types do not read x-match
        bind("amq.headers", "q", "", Map.of("x-match", Symbol.valueOf("any"), "a", "1"));
        bind("amq.direct", "q", "k", Map.of("x-match", "some"));
    }

    @Test
    void aRecoveredHeadersBindingWithABadXMatchRoutesAsAll() {
        queues("q");
        Map<String, Object> arguments = new HashMap<>();
        arguments.put("x-match", null);
        arguments.put("a", "1");
        vhost.recoverBinding(new Binding("amq.headers", Destination.queue("q"), "", arguments));
        assertThat(route("amq.headers", "", Map.of("a", "1"))).containsExactly("q");
        assertThat(route("amq.headers", "", Map.of("b", "1"))).isEmpty();
    }

    @Test
    void headersMatchOnNeutralValuesWhateverTheProtocol() throws Exception {
        queues("uint", "symbol", "binary", "int");
        // binding arguments as the management node decodes them: proton-j types
        bind("amq.headers", "uint", "", Map.of("n", UnsignedInteger.valueOf(5)));
        bind("amq.headers", "symbol", "", Map.of("s", Symbol.valueOf("v")));
        bind("amq.headers", "binary", "", Map.of("b", new Binary(new byte[] {1, 2})));
        bind("amq.headers", "int", "", Map.of("i", 7));

        Map<String, Object> amqp10 = new HashMap<>();
        amqp10.put("n", UnsignedInteger.valueOf(5));
        amqp10.put("s", "v");
        amqp10.put("b", new Binary(new byte[] {1, 2}));
        amqp10.put("i", 7L);
        ByteBuf bytes = Unpooled.buffer();
        ProtonCodec.current().encode(new ApplicationProperties(amqp10), bytes);
        ProtonCodec.current().encode(new Data(new Binary(new byte[0])), bytes);
        Message fromAmqp10 = Amqp10Message.of(bytes, MessageSections.scan(bytes), true, "amq.headers", "");

        Map<String, Object> table = new HashMap<>();
        table.put("n", 5L); // a 0-9-1 unsigned int decodes to a long, as an AMQP 1.0 uint does
        table.put("s", "v");
        table.put("b", Bytes.wrap(new byte[] {1, 2}));
        table.put("i", 7L);
        ByteBuf properties = Unpooled.buffer();
        new BasicProperties(null, null, table, null, null, null, null, null, null, null, null, null, null, null)
            .encode(properties);
        Message fromAmqp091 = Amqp091Message.of(properties, Unpooled.buffer(0), "amq.headers", "");
        try {
            for (Message m : List.of(fromAmqp10, fromAmqp091)) {
                List<String> routed = vhost.route(vhost.exchange("amq.headers"), "", m, router, new ArrayList<>())
                    .stream().map(Queue::name).toList();
                assertThat(routed).as("%s: a long 7 is not an int 7", m.format())
                    .containsExactlyInAnyOrder("uint", "symbol", "binary");
            }
        } finally {
            fromAmqp10.release();
            fromAmqp091.release();
        }
    }

    @Test
    void exchangeToExchangeCyclesEndAndAQueueGetsAMessageOnce() {
        queues("q");
        vhost.declareExchange(new Exchange("e1", Exchange.Type.FANOUT));
        vhost.declareExchange(new Exchange("e2", Exchange.Type.FANOUT));
        vhost.bind(new Binding("e1", Destination.exchange("e2"), "", Map.of()));
        vhost.bind(new Binding("e2", Destination.exchange("e1"), "", Map.of()));
        bind("e1", "q", "");
        bind("e2", "q", "");
        bind("amq.direct", "q", "k");
        vhost.bind(new Binding("amq.direct", Destination.exchange("e1"), "k", Map.of()));
        assertThat(route("e1", "")).containsExactly("q");
        assertThat(route("amq.direct", "k")).containsExactly("q");
    }

    @Test
    void alternateExchangeTakesWhatRoutesNowhere() {
        queues("main", "unrouted");
        vhost.declareExchange(new Exchange("ae", Exchange.Type.FANOUT));
        vhost.declareExchange(new Exchange("with-ae", Exchange.Type.DIRECT, true, false, false,
            Map.of("alternate-exchange", "ae")));
        bind("ae", "unrouted", "");
        bind("with-ae", "main", "k");
        assertThat(route("with-ae", "k")).containsExactly("main");
        assertThat(route("with-ae", "other")).containsExactly("unrouted");
    }

    @Test
    void bindingsDifferingOnlyInArgumentsAreTwoBindings() {
        queues("q");
        Binding one = new Binding("amq.direct", Destination.queue("q"), "k", Map.of("tag", 1L));
        Binding two = new Binding("amq.direct", Destination.queue("q"), "k", Map.of("tag", 2L));
        vhost.bind(one);
        vhost.bind(two);
        assertThat(vhost.bindings().bindingsFrom("amq.direct")).containsExactlyInAnyOrder(one, two);
        assertThat(vhost.unbind(one)).isTrue();
        assertThat(route("amq.direct", "k")).as("the other binding still routes").containsExactly("q");
        assertThat(vhost.unbind(one)).isFalse();
        assertThat(vhost.unbind(two)).isTrue();
        assertThat(route("amq.direct", "k")).isEmpty();
    }

    @Test
    void autoDeleteExchangesCascadeUntilNoneIsLeftWithoutItsLastBinding() {
        // b <- a -> c -> d, a and c and d auto-delete: deleting d empties c, whose going empties a; b stays
        for (String name : List.of("a", "c", "d")) {
            vhost.declareExchange(new Exchange(name, Exchange.Type.FANOUT, false, true, false, Map.of()));
        }
        vhost.declareExchange(new Exchange("b", Exchange.Type.FANOUT));
        queues("q");
        vhost.bind(new Binding("a", Destination.exchange("c"), "", Map.of()));
        vhost.bind(new Binding("c", Destination.exchange("d"), "", Map.of()));
        vhost.bind(new Binding("b", Destination.exchange("a"), "", Map.of()));
        bind("d", "q", "");
        vhost.deleteExchange("d");
        assertThat(vhost.exchange("c")).isNull();
        assertThat(vhost.exchange("a")).isNull();
        assertThat(vhost.exchange("b")).as("not auto-delete").isNotNull();
        assertThat(vhost.bindings().all()).isEmpty();
    }

    @Test
    void deletingAQueueOrExchangeRemovesItsBindingsAndAutoDeleteExchangesGoWithTheirLast() {
        queues("q1", "q2");
        vhost.declareExchange(new Exchange("auto", Exchange.Type.FANOUT, false, true, false, Map.of()));
        vhost.declareExchange(new Exchange("middle", Exchange.Type.FANOUT));
        bind("auto", "q1", "");
        bind("auto", "q2", "");
        vhost.bind(new Binding("amq.fanout", Destination.exchange("middle"), "", Map.of()));
        bind("middle", "q1", "");
        vhost.deleteQueue("q1");
        assertThat(vhost.bindings().all()).noneMatch(b -> b.destination().name().equals("q1"));
        assertThat(vhost.exchange("auto")).as("still bound to q2").isNotNull();
        vhost.deleteQueue("q2");
        assertThat(vhost.exchange("auto")).as("auto-delete after its last binding").isNull();
        vhost.deleteExchange("middle");
        assertThat(vhost.bindings().bindingsFrom("amq.fanout")).isEmpty();
    }

    private List<String> routeWith(String exchange, String key, List<String> moreKeys) {
        return vhost.route(vhost.exchange(exchange), key, moreKeys, Map::of, router, new ArrayList<>()).stream()
            .map(Queue::name).toList();
    }

    @Test
    void moreKeysRouteThroughTheSameExchangeToEachQueueOnce() {
        queues("q1", "q2", "q3");
        // the default exchange: each key names a queue
        assertThat(routeWith("", "q1", List.of("q2", "q1", "missing", "q2"))).containsExactly("q1", "q2");
        assertThat(routeWith("", "q1", List.of())).containsExactly("q1");
        // direct and topic: each key is matched
        bind("amq.direct", "q1", "a");
        bind("amq.direct", "q2", "b");
        assertThat(routeWith("amq.direct", "none", List.of("b", "a", "b"))).containsExactly("q2", "q1");
        bind("amq.topic", "q3", "t.*");
        assertThat(routeWith("amq.topic", "", List.of("t.x", "t.y"))).containsExactly("q3");
        // fanout ignores keys
        bind("amq.fanout", "q1", "");
        assertThat(routeWith("amq.fanout", "a", List.of("b"))).containsExactly("q1");
    }

    @Test
    void anExchangeReachedByOneKeyMatchesAllOfThem() {
        // RabbitMQ's CcRoutes.boundExchanges: direct -(k1)-> topic -(k2)-> q2, published with k1 and CC k2
        queues("q2");
        vhost.declareExchange(new Exchange("d", Exchange.Type.DIRECT));
        vhost.declareExchange(new Exchange("t", Exchange.Type.TOPIC));
        vhost.bind(new Binding("d", Destination.exchange("t"), "k1", Map.of()));
        bind("t", "q2", "k2");
        assertThat(routeWith("d", "", List.of("k1", "k2"))).containsExactly("q2");
        assertThat(routeWith("d", "k1", null)).as("without the second key").isEmpty();
    }

    @Test
    void aLocalRandomExchangeRoutesEachMessageToOneBoundQueueWhateverItsKey() {
        queues("r1", "r2", "r3");
        vhost.declareExchange(new Exchange("random", Exchange.Type.LOCAL_RANDOM));
        assertThat(route("random", "k")).as("no binding, nowhere").isEmpty();
        for (String q : List.of("r1", "r2", "r3")) {
            bind("random", q, "");
        }
        Map<String, Integer> counts = new HashMap<>();
        for (int i = 0; i < 300; i++) {
            List<String> routed = route("random", i % 2 == 0 ? "" : "any.key");
            assertThat(routed).hasSize(1);
            counts.merge(routed.get(0), 1, Integer::sum);
        }
        assertThat(counts).containsOnlyKeys("r1", "r2", "r3");
    }

    @Test
    void aLocalRandomExchangeTakesOnlyEmptyKeyedBindingsToQueues() {
        queues("r1");
        vhost.declareExchange(new Exchange("random", Exchange.Type.LOCAL_RANDOM));
        vhost.declareExchange(new Exchange("other", Exchange.Type.FANOUT));
        assertThatThrownBy(() -> bind("random", "r1", "k"))
            .isInstanceOfSatisfying(BrokerException.class, e -> {
                assertThat(e.kind()).isEqualTo(BrokerException.Kind.INVALID);
                assertThat(e).hasMessage("Non empty binding 'k' key not permitted");
            });
        assertThatThrownBy(() -> vhost.bind(new Binding("random", Destination.exchange("other"), "", Map.of())))
            .isInstanceOfSatisfying(BrokerException.class, e -> assertThat(e).hasMessage("Destination not found"));
        assertThatThrownBy(() -> bind("random", "missing", ""))
            .isInstanceOfSatisfying(BrokerException.class,
                e -> assertThat(e.kind()).isEqualTo(BrokerException.Kind.NOT_FOUND));
        // another exchange may lead to it
        vhost.bind(new Binding("other", Destination.exchange("random"), "", Map.of()));
        bind("random", "r1", "");
        assertThat(route("other", "k")).containsExactly("r1");
        assertThat(Exchange.Type.of("x-local-random")).isEqualTo(Exchange.Type.LOCAL_RANDOM);
    }

    @Test
    void declarationsAreCheckedForEquivalenceAndReservedNames() {
        vhost.declareExchange(new Exchange("x", Exchange.Type.TOPIC));
        assertThat(vhost.declareExchange(new Exchange("x", Exchange.Type.TOPIC))).isNotNull();
        assertThatThrownBy(() -> vhost.declareExchange(new Exchange("x", Exchange.Type.FANOUT)))
            .isInstanceOfSatisfying(BrokerException.class,
                e -> assertThat(e.kind()).isEqualTo(BrokerException.Kind.PRECONDITION_FAILED));
        assertThatThrownBy(() -> vhost.declareExchange(new Exchange("amq.mine", Exchange.Type.TOPIC)))
            .isInstanceOfSatisfying(BrokerException.class,
                e -> assertThat(e.kind()).isEqualTo(BrokerException.Kind.ACCESS_REFUSED));
        assertThatThrownBy(() -> vhost.deleteExchange("amq.topic")).isInstanceOf(BrokerException.class);
        assertThatThrownBy(() -> bind("x", "missing", "k"))
            .isInstanceOfSatisfying(BrokerException.class, e -> assertThat(e.kind()).isEqualTo(BrokerException.Kind.NOT_FOUND));
    }
}
