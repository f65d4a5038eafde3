package io.skiffmq.core.message;

import static io.skiffmq.core.TestMessages.amqp091;
import static io.skiffmq.core.TestMessages.amqp10;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.skiffmq.codec.amqp091.BasicProperties;
import io.skiffmq.codec.testing.LeakDetection;
import io.skiffmq.core.BrokerException;
import java.lang.management.ManagementFactory;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.qpid.proton.amqp.Symbol;
import org.apache.qpid.proton.amqp.messaging.ApplicationProperties;
import org.apache.qpid.proton.amqp.messaging.Data;
import org.apache.qpid.proton.amqp.messaging.MessageAnnotations;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The routing keys a message names beside its own, as RabbitMQ reads them: CC and BCC headers (0-9-1), the
 * {@code x-cc} annotation (AMQP 1.0); BCC taken out before anyone sees the message; CC kept in a death's routing
 * keys; and nothing decoded or allocated for a message that names none.
 */
@ExtendWith(LeakDetection.class)
class HeaderRoutesTest {
    private static Amqp091Message withHeaders(Map<String, Object> headers) {
        return amqp091(new BasicProperties("text/plain", null, headers, 2, null, null, null, null, "id-1", null,
            null, null, null, null), "body".getBytes());
    }

    private static Map<String, Object> headers(Object... keysAndValues) {
        Map<String, Object> map = new LinkedHashMap<>();
        for (int i = 0; i < keysAndValues.length; i += 2) {
            map.put((String) keysAndValues[i], keysAndValues[i + 1]);
        }
        return map;
    }

    @Test
    void ccThenBccKeysAreReadAndEntriesThatAreNoStringsLeftOut() {
        Amqp091Message m = withHeaders(headers("BCC", List.of("b1"), "app", "x", "CC", List.of("c1", 5L, "c2")));
        try {
            assertThat(m.headerRoutes()).containsExactly("c1", "c2", "b1");
            assertThat(m.ccRoutes()).containsExactly("c1", "c2");
        } finally {
            m.release();
        }
        Amqp091Message none = withHeaders(headers("app", "x"));
        Amqp091Message empty = withHeaders(headers("CC", List.of()));
        try {
            assertThat(none.headerRoutes()).isNull();
            assertThat(empty.headerRoutes()).isEmpty();
        } finally {
            none.release();
            empty.release();
        }
    }

    @Test
    void aCcOrBccThatIsNoArrayIsRefusedInRabbitMqsWords() {
        for (Object bad : new Object[] {0, "c1", Map.of("q", "v")}) {
            Amqp091Message m = withHeaders(headers("CC", bad));
            try {
                assertThatThrownBy(m::headerRoutes).isInstanceOfSatisfying(BrokerException.class, e -> {
                    assertThat(e.kind()).isEqualTo(BrokerException.Kind.PRECONDITION_FAILED);
                    assertThat(e).hasMessageStartingWith("invalid message: {unacceptable_type_in_header,\"CC\",");
                });
                assertThat(m.ccRoutes()).as("dead-lettering does not refuse").isNull();
            } finally {
                m.release();
            }
        }
        Amqp091Message m = withHeaders(headers("BCC", 1));
        try {
            assertThatThrownBy(m::headerRoutes)
                .hasMessage("invalid message: {unacceptable_type_in_header,\"BCC\",signedint}");
        } finally {
            m.release();
        }
    }

    @Test
    void withoutBccGivesNewPropertiesWithoutItAndKeepsTheRest() {
        Amqp091Message m = withHeaders(headers("CC", List.of("c1"), "BCC", List.of("b1"), "app", "x"));
        Amqp091Message stripped = m.withoutBcc();
        try {
            assertThat(stripped).isNotSameAs(m);
            assertThat(stripped.headers()).containsOnlyKeys("CC", "app");
            assertThat(stripped.properties().messageId()).isEqualTo("id-1");
            assertThat(stripped.body()).isEqualTo(m.body());
            assertThat(stripped.routingKey()).isEqualTo(m.routingKey());
            assertThat(stripped.durable()).isTrue();
        } finally {
            stripped.release();
            m.release();
        }
        Amqp091Message noBcc = withHeaders(headers("CC", List.of("c1")));
        try {
            assertThat(noBcc.withoutBcc()).isSameAs(noBcc);
        } finally {
            noBcc.release();
        }
    }

    @Test
    void aDeathRecordsTheRoutingKeyAndTheCcKeysButNotTheBccKeys() {
        Amqp091Message m = withHeaders(headers("CC", List.of("c1", "c2"), "BCC", List.of("b1")));
        Amqp091Message dead = m.deadLettered("rejected", "q", Instant.ofEpochSecond(1_700_000_000L), "dlx", "rk");
        try {
            assertThat(dead.deaths().get(0).routingKeys()).containsExactly("rk", "c1", "c2");
        } finally {
            dead.release();
            m.release();
        }
        Amqp10Message amqp10 = amqp10(new MessageAnnotations(Map.of(Symbol.valueOf("x-cc"), List.of("c1"))),
            new Data(new org.apache.qpid.proton.amqp.Binary("b".getBytes())));
        Amqp10Message dead10 = amqp10.deadLettered("expired", "q", Instant.ofEpochSecond(1_700_000_000L), "dlx",
            "rk");
        try {
            assertThat(dead10.deaths().get(0).routingKeys()).containsExactly("rk", "c1");
        } finally {
            dead10.release();
            amqp10.release();
        }
    }

    @Test
    void anAmqp10MessageNamesItsKeysInTheXccAnnotationAListOfStrings() {
        Amqp10Message cc = amqp10(new MessageAnnotations(Map.of(Symbol.valueOf("x-cc"), List.of("c1", "c2"))),
            new ApplicationProperties(Map.of("CC", "not read")));
        Amqp10Message none = amqp10(new ApplicationProperties(Map.of("CC", "application properties are not read")));
        Amqp10Message array = amqp10(new MessageAnnotations(Map.of(Symbol.valueOf("x-cc"), new String[] {"c1"})));
        Amqp10Message string = amqp10(new MessageAnnotations(Map.of(Symbol.valueOf("x-cc"), "c1")));
        try {
            assertThat(cc.headerRoutes()).containsExactly("c1", "c2");
            assertThat(cc.withoutBcc()).isSameAs(cc);
            assertThat(none.headerRoutes()).isNull();
            for (Amqp10Message bad : List.of(array, string)) {
                assertThatThrownBy(bad::headerRoutes).isInstanceOfSatisfying(BrokerException.class, e -> {
                    assertThat(e.kind()).isEqualTo(BrokerException.Kind.INVALID);
                    assertThat(e).hasMessageStartingWith("bad value for 'x-cc' message-annotation: ");
                });
            }
        } finally {
            List.of(cc, none, array, string).forEach(Message::release);
        }
    }

    @Test
    void aCcHeaderBecomesTheXccAnnotationInAConversionAndBack() {
        Amqp091Message m = withHeaders(headers("CC", List.of("c1", "c2")));
        try {
            Amqp10Message converted = m.toAmqp10();
            assertThat(converted.headerRoutes()).containsExactly("c1", "c2");
            assertThat(converted.headers()).doesNotContainKey("CC");
            assertThat(converted.toAmqp091().headers()).containsEntry("CC", List.of("c1", "c2"));
        } finally {
            m.release();
        }
    }

    @Test
    void aMessageThatNamesNoKeysCostsNoAllocation() {
        Amqp091Message headers = withHeaders(headers("app", "x", "trace", List.of("a", "b"), "n", 7L));
        Amqp10Message annotated = amqp10(new MessageAnnotations(Map.of(Symbol.valueOf("x-opt-jms-msg-type"),
            (byte) 5, Symbol.valueOf("x-opt-jms-dest"), (byte) 0)), new Data(new org.apache.qpid.proton.amqp.Binary(
                "b".getBytes())));
        try {
            assertThat(allocatedPerCall(() -> {
                headers.headerRoutes();
                headers.withoutBcc();
                annotated.headerRoutes();
                annotated.withoutBcc();
            })).isZero();
        } finally {
            headers.release();
            annotated.release();
        }
    }

    private static long allocatedPerCall(Runnable call) {
        int rounds = 20_000;
        for (int i = 0; i < rounds; i++) {
            call.run();
        }
        com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        long before = threads.getCurrentThreadAllocatedBytes();
        for (int i = 0; i < rounds; i++) {
            call.run();
        }
        return (threads.getCurrentThreadAllocatedBytes() - before) / rounds;
    }
}
