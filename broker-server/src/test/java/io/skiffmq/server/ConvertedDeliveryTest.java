package io.skiffmq.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.skiffmq.codec.amqp091.BasicProperties;
import io.skiffmq.codec.testing.LeakDetection;
import io.skiffmq.core.message.Amqp091Message;
import io.skiffmq.core.queue.Queue;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Instant;
import java.util.Date;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.qpid.proton.amqp.Binary;
import org.apache.qpid.proton.amqp.Symbol;
import org.apache.qpid.proton.amqp.messaging.Data;
import org.apache.qpid.proton.message.Message;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * An AMQP 0-9-1 message in a durable queue is stored in its own format, survives a restart, and reaches an AMQP 1.0
 * consumer converted (there is no 0-9-1 listener yet, so the test puts the message in the queue itself).
 */
@ExtendWith(LeakDetection.class)
class ConvertedDeliveryTest {

    @TempDir
    Path dir;

    @Test
    void aDurableAmqp091MessageSurvivesARestartAndIsDeliveredToAnAmqp10ConsumerConverted() throws Exception {
        String id = "urn:uuid:" + UUID.nameUUIDFromBytes(new byte[] {1});
        ByteBuf properties = Unpooled.buffer();
        new BasicProperties("application/json", null, Map.of("region", "eu", "x-trace", 9L), 2, 5, "corr",
            "replies", null, id, Instant.ofEpochSecond(1_700_000_000L), "order.created", null, "shop", null)
            .encode(properties);
        byte[] body = "{\"n\":1}".getBytes(StandardCharsets.UTF_8);
        String[] settings = {"data-dir=" + dir.resolve("data")};
        try (RunningBroker broker = RunningBroker.start(settings)) {
            Queue queue = broker.vhost("/").declareQueue("from-091", true, Map.of());
            Amqp091Message message = Amqp091Message.of(properties, Unpooled.wrappedBuffer(body), "amq.direct", "k");
            CountDownLatch confirmed = new CountDownLatch(1);
            queue.publish(message, confirmed::countDown);
            assertThat(confirmed.await(10, TimeUnit.SECONDS)).as("in the journal").isTrue();
        }
        // recovered from its 0-9-1 record, converted for this consumer
        try (RunningBroker broker = RunningBroker.start(settings);
                RawClient consumer = RawClient.openSession(broker.port())) {
            consumer.attachReceiver(0, RawClient.source("from-091"), false);
            consumer.flow(0, 0, 1, false, false);
            Message got = Messages.decode(consumer.read().payload());
            assertThat(got.isDurable()).isTrue();
            assertThat(got.getPriority()).isEqualTo((short) 5);
            assertThat(got.getMessageId()).isEqualTo(UUID.fromString(id.substring(9)));
            assertThat(got.getCorrelationId()).isEqualTo("corr");
            assertThat(got.getReplyTo()).isEqualTo("replies");
            assertThat(got.getGroupId()).isEqualTo("shop");
            assertThat(got.getProperties().getCreationTime()).isEqualTo(new Date(1_700_000_000_000L));
            assertThat((Object) got.getProperties().getContentType()).isEqualTo(Symbol.valueOf("application/json"));
            assertThat(got.getApplicationProperties().getValue()).isEqualTo(Map.of("region", "eu"));
            assertThat(got.getMessageAnnotations().getValue())
                .containsEntry(Symbol.valueOf("x-basic-type"), "order.created")
                .containsEntry(Symbol.valueOf("x-trace"), 9L)
                .containsEntry(Symbol.valueOf("x-exchange"), "amq.direct")
                .containsEntry(Symbol.valueOf("x-routing-key"), "k");
            assertThat(((Data) got.getBody()).getValue()).isEqualTo(new Binary(body));
        }
    }
}
