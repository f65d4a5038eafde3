package io.skiffmq.core.message;

import static io.skiffmq.core.TestMessages.amqp091;
import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.skiffmq.codec.amqp091.BasicProperties;
import io.skiffmq.codec.testing.LeakDetection;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A 0-9-1 message through a stream: converted to AMQP 1.0 once when published (as RabbitMQ 4 stores it, with where it
 * was published in {@code x-exchange} and {@code x-routing-key}), read back from the stored bytes, and converted
 * again for a 0-9-1 consumer, with its offset as the header {@code x-stream-offset}.
 */
@ExtendWith(LeakDetection.class)
class StreamRoundTripTest {
    private static BasicProperties properties(Map<String, Object> headers, String type) {
        return new BasicProperties("text/plain", null, headers, 2, null, null, null, null, "id-1", null, type, null,
            null, null);
    }

    /** What a stream keeps: the converted message's bytes, copied. */
    private static Amqp10Message throughStream(Amqp091Message published, long offset, String stream)
            throws Exception {
        byte[] stored = ByteBufUtil.getBytes(published.toAmqp10().bytes());
        return Amqp10Message.fromStream(Unpooled.wrappedBuffer(stored), offset, stream);
    }

    @Test
    void whereItWasPublishedIsStoredAndReadBackNotAsHeaders() throws Exception {
        Map<String, Object> headers = new LinkedHashMap<>();
        headers.put("colour", "red");
        headers.put("x-stream-filter-value", "eu");
        headers.put("x-exchange", "forged"); // the broker's annotation wins, as in RabbitMQ
        Amqp091Message published = amqp091(properties(headers, "order"), "body".getBytes(StandardCharsets.UTF_8));
        Amqp10Message read = throughStream(published, 42, "s");
        try {
            assertThat(published.toAmqp10().sections().messageAnnotation(Message.X_EXCHANGE)).isEqualTo("amq.direct");
            assertThat(published.toAmqp10().sections().messageAnnotation(Message.X_ROUTING_KEY)).isEqualTo("rk");
            assertThat(read.exchange()).isEqualTo("amq.direct");
            assertThat(read.routingKey()).isEqualTo("rk");
            assertThat(read.streamOffset()).isEqualTo(42);
            BasicProperties delivered = read.toAmqp091().properties();
            assertThat(delivered.type()).as("type comes back from x-basic-type").isEqualTo("order");
            assertThat(delivered.headers()).containsExactly(Map.entry("x-stream-offset", 42L),
                Map.entry("x-stream-filter-value", "eu"), Map.entry("colour", "red"));
            assertThat(ByteBufUtil.getBytes(read.toAmqp091().body()))
                .isEqualTo("body".getBytes(StandardCharsets.UTF_8));
        } finally {
            read.release();
            published.release();
        }
    }

    @Test
    void aMessageWithoutRoutingAnnotationsIsFromTheDefaultExchangeWithTheStreamsName() throws Exception {
        // what an AMQP 1.0 or stream protocol publisher stores: its bytes, as sent
        Amqp10Message sent = io.skiffmq.core.TestMessages.amqp10(
            new org.apache.qpid.proton.amqp.messaging.Data(new org.apache.qpid.proton.amqp.Binary(new byte[] {1})));
        try {
            Amqp10Message read = Amqp10Message.fromStream(Unpooled.wrappedBuffer(ByteBufUtil.getBytes(sent.bytes())),
                0, "events");
            try {
                assertThat(read.exchange()).isEmpty();
                assertThat(read.routingKey()).isEqualTo("events");
                assertThat(read.toAmqp091().properties().headers()).containsExactly(Map.entry("x-stream-offset", 0L));
            } finally {
                read.release();
            }
        } finally {
            sent.release();
        }
    }
}
