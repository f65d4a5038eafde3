package io.skiffmq.server;

import static io.skiffmq.server.Amqp091Support.unique;
import static org.assertj.core.api.Assertions.assertThat;

import com.rabbitmq.client.GetResponse;
import com.rabbitmq.client.amqp.Management;
import com.rabbitmq.client.amqp.Message;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.qpid.proton.amqp.Binary;
import org.apache.qpid.proton.amqp.Symbol;
import org.apache.qpid.proton.amqp.UnsignedInteger;
import org.apache.qpid.proton.amqp.messaging.ApplicationProperties;
import org.apache.qpid.proton.amqp.messaging.Data;
import org.apache.qpid.proton.amqp.messaging.Footer;
import org.apache.qpid.proton.amqp.messaging.Modified;
import org.apache.qpid.proton.amqp.messaging.Properties;
import org.apache.qpid.proton.amqp.transport.Disposition;
import org.apache.qpid.proton.amqp.transport.End;
import org.apache.qpid.proton.amqp.transport.Role;
import org.junit.jupiter.api.Test;

/**
 * A quorum queue settles a {@code modified} outcome as RabbitMQ 4.0's {@code rabbit_fifo} does: its
 * message-annotations are merged into the message, requeued or dead-lettered, outside the bare message, which stays
 * byte for byte; a discard counts as a failed delivery, and the dead-lettered copy keeps its delivery count. With
 * the RabbitMQ AMQP 1.0 client ({@code requeue(annotations)}, {@code discard(annotations)}) and a raw client.
 */
class QuorumQueueOutcomeTest extends Amqp10ClientTestBase {
    private static final Map<String, Object> ANNOTATIONS = Map.of("x-opt-string", "bar",
        "x-opt-list", List.of("one", "two"), "x-opt-number", 7L);

    private static String quorum(String prefix) {
        String q = unique(prefix);
        management().queue().name(q).type(Management.QueueType.QUORUM).declare();
        return q;
    }

    /** A quorum queue dead-lettering to a classic queue; returns both names. */
    private static String[] quorumWithDeadLetterQueue(String prefix) {
        String dlq = unique(prefix + "-dead");
        management().queue().name(dlq).declare();
        String q = unique(prefix);
        management().queue().name(q).type(Management.QueueType.QUORUM).deadLetterExchange("")
            .deadLetterRoutingKey(dlq).declare();
        return new String[] {q, dlq};
    }

    @Test
    void aRequeueWithAnnotationsRedeliversThemWithTheCountOfReturns() throws Exception {
        String q = quorum("qq-requeue-annotated");
        published(publisher(q), "annotated");
        BlockingQueue<Message> seen = requeuedOnceWithAnnotations(q);
        Message first = seen.poll(10, TimeUnit.SECONDS);
        Message again = seen.poll(10, TimeUnit.SECONDS);
        assertThat(first.hasAnnotation("x-opt-string")).isFalse();
        assertThat(again.annotation("x-opt-string")).isEqualTo("bar");
        assertThat(again.annotation("x-opt-list")).isEqualTo(List.of("one", "two"));
        assertThat(again.annotation("x-opt-number")).isEqualTo(7L);
        assertThat(again.annotation("x-delivery-count")).isEqualTo(1L);
        assertThat(again.deliveryCount()).as("released, not failed").isZero();
        assertThat(text(again)).isEqualTo("annotated");
    }

    @Test
    void anAmqp091ConsumerSeesTheAnnotationsAsHeaders() throws Exception {
        String q = quorum("qq-annotated-091");
        published(publisher(q), "to 0-9-1");
        Map<Symbol, Object> annotations = new LinkedHashMap<>();
        annotations.put(Symbol.valueOf("x-opt-string"), "bar");
        annotations.put(Symbol.valueOf("x-opt-number"), 7L);
        try (RawClient client = RawClient.openSession(broker.port())) {
            client.attachReceiver(0, RawClient.source("/queues/" + q), false);
            client.flow(0, 0, 1, false, false);
            transfer(client);
            client.write(0, modified(0, annotations));
            client.close(true); // the disposition, then the close, in that order
        }
        com.rabbitmq.client.Channel channel = amqp091.createChannel();
        GetResponse got = awaitGet(channel, q);
        Map<String, Object> headers = got.getProps().getHeaders();
        assertThat(headers.get("x-opt-string").toString()).isEqualTo("bar");
        assertThat(headers).containsEntry("x-opt-number", 7L);
        channel.basicAck(got.getEnvelope().getDeliveryTag(), false);
        channel.close();
    }

    @Test
    void aDiscardDeadLettersWithTheAnnotationsAndAFailedDelivery() throws Exception {
        String[] queues = quorumWithDeadLetterQueue("qq-discard-annotated");
        published(publisher(queues[0]), "discarded");
        consumer(queues[0], new LinkedBlockingQueue<>(), (context, message) -> context.discard(ANNOTATIONS));
        Message dead = next(queues[1]);
        assertThat(text(dead)).isEqualTo("discarded");
        assertThat(dead.annotation("x-opt-string")).isEqualTo("bar");
        assertThat(dead.annotation("x-opt-list")).isEqualTo(List.of("one", "two"));
        assertThat(dead.deliveryCount()).as("modified(delivery-failed) counts").isEqualTo(1);
    }

    @Test
    void aRejectedMessageKeepsItsDeliveryCountWhenDeadLettered() throws Exception {
        String[] queues = quorumWithDeadLetterQueue("qq-reject-count");
        published(publisher(queues[0]), "rejected");
        AtomicInteger deliveries = new AtomicInteger();
        consumer(queues[0], new LinkedBlockingQueue<>(), (context, message) -> {
            // released twice (no failed delivery), then rejected: a rejection counts as a failed delivery
            if (deliveries.incrementAndGet() <= 2) {
                context.requeue();
            } else {
                context.discard();
            }
        });
        Message dead = next(queues[1]);
        assertThat(text(dead)).isEqualTo("rejected");
        assertThat(dead.deliveryCount()).isEqualTo(1);
        assertThat(dead.hasAnnotation("x-delivery-count")).as("a first delivery from the dead-letter queue").isFalse();
    }

    @Test
    void aClassicQueueDoesNotMergeTheAnnotations() throws Exception {
        String q = unique("classic-requeue-annotated");
        management().queue().name(q).type(Management.QueueType.CLASSIC).declare();
        published(publisher(q), "classic");
        BlockingQueue<Message> seen = requeuedOnceWithAnnotations(q);
        assertThat(seen.poll(10, TimeUnit.SECONDS)).isNotNull();
        Message again = seen.poll(10, TimeUnit.SECONDS);
        assertThat(again.hasAnnotation("x-opt-string")).as("RabbitMQ's classic queue ignores them").isFalse();
    }

    @Test
    void theBareMessageAndFooterStayByteForByte() throws Exception {
        String q = quorum("qq-annotated-bytes");
        org.apache.qpid.proton.message.Message message = org.apache.qpid.proton.message.Message.Factory.create();
        Properties properties = new Properties();
        properties.setMessageId("id-1");
        message.setProperties(properties);
        message.setApplicationProperties(new ApplicationProperties(Map.of("kind", "refund")));
        message.setBody(new Data(new Binary("kept exactly".getBytes(StandardCharsets.UTF_8))));
        message.setFooter(new Footer(Map.of(Symbol.valueOf("x-opt-crc-32"), UnsignedInteger.valueOf(42))));
        byte[] sent = Messages.encode(message);
        try (RawClient client = RawClient.openSession(broker.port())) {
            client.attachSender(0, "/queues/" + q);
            client.readUntil(org.apache.qpid.proton.amqp.transport.Flow.class);
            client.transfer(0, 0, sent, false);
            client.readUntil(Disposition.class);
            client.attachReceiver(1, RawClient.source("/queues/" + q), false);
            client.flow(1, 0, 1, false, false);
            byte[] first = transfer(client);
            Map<Symbol, Object> annotations = new LinkedHashMap<>();
            annotations.put(Symbol.valueOf("x-opt-string"), "bar");
            client.write(0, modified(0, annotations));
            client.flow(1, 1, 1, false, false);
            byte[] again = transfer(client);
            assertThat(Arrays.copyOfRange(first, first.length - sent.length, first.length)).isEqualTo(sent);
            assertThat(Arrays.copyOfRange(again, again.length - sent.length, again.length)).isEqualTo(sent);
            org.apache.qpid.proton.message.Message decoded = Messages.decode(again);
            assertThat(decoded.getMessageAnnotations().getValue()).containsEntry(Symbol.valueOf("x-opt-string"), "bar")
                .containsEntry(Symbol.valueOf("x-delivery-count"), 1L);
        }
    }

    @Test
    void anAnnotationKeyNotStartingWithXEndsTheSession() throws Exception {
        String q = quorum("qq-annotated-reserved");
        published(publisher(q), "reserved");
        try (RawClient client = RawClient.openSession(broker.port())) {
            client.attachReceiver(0, RawClient.source("/queues/" + q), false);
            client.flow(0, 0, 1, false, false);
            transfer(client);
            client.write(0, modified(0, Map.of(Symbol.valueOf("reserved"), "no")));
            End end = client.readUntil(End.class);
            assertThat((Object) end.getError().getCondition()).isEqualTo(Symbol.valueOf("amqp:invalid-field"));
        }
        assertThat((Object) next(q)).as("back in the queue with its session").isNotNull();
    }

    /** A consumer that requeues the first delivery with {@link #ANNOTATIONS} and accepts the others. */
    private BlockingQueue<Message> requeuedOnceWithAnnotations(String queue) {
        BlockingQueue<Message> seen = new LinkedBlockingQueue<>();
        AtomicInteger deliveries = new AtomicInteger();
        consumer(queue, seen, (context, message) -> {
            if (deliveries.incrementAndGet() == 1) {
                context.requeue(ANNOTATIONS);
            } else {
                context.accept();
            }
        });
        return seen;
    }

    /** The payload of the next transfer. */
    private static byte[] transfer(RawClient client) throws Exception {
        while (true) {
            RawClient.Frame frame = client.read();
            if (frame.body() instanceof org.apache.qpid.proton.amqp.transport.Transfer) {
                return frame.payload();
            }
        }
    }

    private static Disposition modified(long id, Map<Symbol, Object> annotations) {
        Modified modified = new Modified();
        modified.setMessageAnnotations(annotations);
        Disposition d = new Disposition();
        d.setRole(Role.RECEIVER);
        d.setFirst(UnsignedInteger.valueOf(id));
        d.setLast(UnsignedInteger.valueOf(id));
        d.setSettled(true);
        d.setState(modified);
        return d;
    }
}
