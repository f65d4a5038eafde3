package io.skiffmq.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.skiffmq.codec.testing.LeakDetection;
import java.util.LinkedHashMap;
import java.util.Map;
import org.apache.qpid.proton.amqp.DescribedType;
import org.apache.qpid.proton.amqp.Symbol;
import org.apache.qpid.proton.amqp.UnsignedLong;
import org.apache.qpid.proton.amqp.messaging.Source;
import org.apache.qpid.proton.amqp.messaging.Target;
import org.apache.qpid.proton.amqp.transport.Attach;
import org.apache.qpid.proton.amqp.transport.Detach;
import org.apache.qpid.proton.amqp.transport.ErrorCondition;
import org.apache.qpid.proton.amqp.transport.Role;
import org.apache.qpid.proton.amqp.transport.SenderSettleMode;
import org.apache.qpid.proton.amqp.UnsignedInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** The consumer's filter-set in raw frames: what we honour is echoed as sent, anything else is left out [3.5.3]. */
@ExtendWith(LeakDetection.class)
class LinkFiltersRawTest {
    private static RunningBroker broker;

    @BeforeAll
    static void start() throws Exception {
        broker = RunningBroker.start();
    }

    @AfterAll
    static void stop() {
        broker.close();
    }


    private static Source source(String address, Map<Symbol, Object> filters, String... capabilities) {
        Source source = RawClient.source(address);
        source.setFilter(filters);
        if (capabilities.length > 0) {
            Symbol[] symbols = new Symbol[capabilities.length];
            for (int i = 0; i < symbols.length; i++) {
                symbols[i] = Symbol.valueOf(capabilities[i]);
            }
            source.setCapabilities(symbols);
        }
        return source;
    }

    @Test
    void honouredFiltersAreEchoedAndUnknownOnesAreNot() throws Exception {
        broker.vhost("/").declareQueue(io.skiffmq.core.queue.QueueDeclaration.of("filters-raw", false, Map.of()),
            null);
        try (RawClient client = RawClient.openSession(broker.port())) {
            Map<Symbol, Object> filters = new LinkedHashMap<>();
            filters.put(Symbol.valueOf("jms-selector"),
                new DescribedFilter(UnsignedLong.valueOf(0x0000468C00000004L), "color = 'red'"));
            filters.put(Symbol.valueOf("my-selector"),
                new DescribedFilter(Symbol.valueOf("apache.org:selector-filter:string"), "size > 1"));
            filters.put(Symbol.valueOf("no-local"), new DescribedFilter(UnsignedLong.valueOf(0x0000468C00000003L),
                "NoLocalFilter{}"));
            filters.put(Symbol.valueOf("rabbitmq:stream-filter"), "x");
            @SuppressWarnings({"unchecked", "rawtypes"})
            Map<Object, Object> loose = (Map) filters;
            loose.put("a string key", new DescribedFilter(UnsignedLong.valueOf(0x0000468C00000004L), "size > 2"));
            filters.put(Symbol.valueOf("apache.org:selector-filter:string"),
                new DescribedFilter(Symbol.valueOf("example:unknown-filter"), "anything"));
            Attach reply = client.attachReceiver(0, source("/queues/filters-raw", filters), false);
            Map<Symbol, Object> echoed = ((Source) reply.getSource()).getFilter();
            assertThat(echoed).as("the first selector only; no-local is for topics; unknown ones are left out")
                .containsOnlyKeys(Symbol.valueOf("jms-selector"));
            DescribedType selector = (DescribedType) echoed.get(Symbol.valueOf("jms-selector"));
            assertThat(selector.getDescriptor()).isEqualTo(UnsignedLong.valueOf(0x0000468C00000004L));
            assertThat(selector.getDescribed()).isEqualTo("color = 'red'");

            Map<Symbol, Object> topicFilters = new LinkedHashMap<>();
            topicFilters.put(Symbol.valueOf("nl"), new DescribedFilter(Symbol.valueOf("apache.org:no-local-filter:list"),
                java.util.List.of()));
            topicFilters.put(Symbol.valueOf("other"), new DescribedFilter(UnsignedLong.valueOf(0x77), "x"));
            Attach topic = client.attachReceiver(1, source("filters.raw", topicFilters, "topic"), false);
            assertThat(((Source) topic.getSource()).getFilter().keySet()).containsOnly(Symbol.valueOf("nl"));

            Attach none = client.attachReceiver(2, source("/queues/filters-raw",
                Map.of(Symbol.valueOf("other"), new DescribedFilter(UnsignedLong.valueOf(0x77), "x"))), false);
            assertThat(((Source) none.getSource()).getFilter()).as("nothing honoured: no filter-set").isNull();

            Map<Object, Object> stringKeys = new LinkedHashMap<>();
            stringKeys.put("jms-selector", new DescribedFilter(UnsignedLong.valueOf(0x0000468C00000004L), "size > 2"));
            @SuppressWarnings({"unchecked", "rawtypes"})
            Attach malformedKey = client.attachReceiver(3, source("/queues/filters-raw", (Map) stringKeys), false);
            assertThat(((Source) malformedKey.getSource()).getFilter()).as("a filter-set's keys are symbols [3.5.8]")
                .isNull();
        }
    }

    @Test
    void aMalformedSelectorDetachesWithInvalidField() throws Exception {
        broker.vhost("/").declareQueue(io.skiffmq.core.queue.QueueDeclaration.of("filters-raw-bad", false,
            Map.of()), null);
        try (RawClient client = RawClient.openSession(broker.port())) {
            Attach attach = new Attach();
            attach.setName("bad-selector");
            attach.setHandle(UnsignedInteger.ZERO);
            attach.setRole(Role.RECEIVER);
            attach.setSndSettleMode(SenderSettleMode.UNSETTLED);
            attach.setSource(source("/queues/filters-raw-bad", Map.of(Symbol.valueOf("jms-selector"),
                new DescribedFilter(Symbol.valueOf("apache.org:selector-filter:string"), "a IN ('x', 1)"))));
            attach.setTarget(new Target());
            client.write(0, attach);
            Attach refusal = client.read().as(Attach.class);
            assertThat(refusal.getSource()).as("no terminus: the link is refused").isNull();
            Detach detach = client.read().as(Detach.class);
            ErrorCondition error = detach.getError();
            assertThat((Object) error.getCondition()).isEqualTo(Symbol.valueOf("amqp:invalid-field"));
            assertThat((Object) error.getDescription()).isEqualTo("invalid selector \"a IN ('x', 1)\": position 12: expected a "
                + "string literal in the IN list, found '1'");
        }
    }
}
