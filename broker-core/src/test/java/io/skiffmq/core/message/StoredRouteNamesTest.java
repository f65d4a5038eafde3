package io.skiffmq.core.message;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.skiffmq.codec.amqp10.ProtonCodec;
import io.skiffmq.codec.testing.LeakDetection;
import java.util.LinkedHashMap;
import java.util.Map;
import org.apache.qpid.proton.amqp.Binary;
import org.apache.qpid.proton.amqp.Symbol;
import org.apache.qpid.proton.amqp.messaging.Data;
import org.apache.qpid.proton.amqp.messaging.MessageAnnotations;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** A stream consumer's messages read with its {@link StoredRouteNames}: the same names, the same strings. */
@ExtendWith(LeakDetection.class)
class StoredRouteNamesTest {
    private static ByteBuf stored(Object exchange, Object routingKey) {
        Map<Symbol, Object> annotations = new LinkedHashMap<>();
        annotations.put(Symbol.valueOf("x-opt-other"), "o");
        if (exchange != null) {
            annotations.put(Symbol.valueOf(Message.X_EXCHANGE), exchange);
        }
        if (routingKey != null) {
            annotations.put(Symbol.valueOf(Message.X_ROUTING_KEY), routingKey);
        }
        ByteBuf bytes = Unpooled.buffer();
        ProtonCodec.current().encode(new MessageAnnotations(annotations), bytes);
        ProtonCodec.current().encode(new Data(new Binary(new byte[] {1})), bytes);
        return bytes;
    }

    private static String[] read(StoredRouteNames names, ByteBuf stored) throws Exception {
        Amqp10Message m = Amqp10Message.fromStream(stored, 0, "stream", names);
        try {
            return new String[] {m.exchange(), m.routingKey()};
        } finally {
            m.release();
        }
    }

    @Test
    void theSameNamesGiveTheSameStringsAndNewOnesTheirOwn() throws Exception {
        StoredRouteNames names = new StoredRouteNames();
        String[] first = read(names, stored("amq.topic", "orders.eu"));
        String[] second = read(names, stored("amq.topic", "orders.eu"));
        assertThat(first).containsExactly("amq.topic", "orders.eu");
        assertThat(second[0]).isSameAs(first[0]);
        assertThat(second[1]).isSameAs(first[1]);
        assertThat(read(names, stored("amq.topic", "orders.us"))).containsExactly("amq.topic", "orders.us");
        assertThat(read(names, stored("", "größe"))).containsExactly("", "größe");
    }

    @Test
    void withoutStringAnnotationsTheDefaultExchangeAndTheStreamsName() throws Exception {
        StoredRouteNames names = new StoredRouteNames();
        assertThat(read(names, stored(null, null))).containsExactly("", "stream");
        assertThat(read(names, stored(Symbol.valueOf("a symbol"), 5))).containsExactly("", "stream");
        assertThat(read(names, stored("e", null))).containsExactly("e", "stream");
    }
}
