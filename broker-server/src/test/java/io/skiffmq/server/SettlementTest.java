package io.skiffmq.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.skiffmq.codec.testing.LeakDetection;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.zip.CRC32;
import org.apache.qpid.proton.amqp.Binary;
import org.apache.qpid.proton.amqp.Symbol;
import org.apache.qpid.proton.amqp.UnsignedInteger;
import org.apache.qpid.proton.amqp.messaging.ApplicationProperties;
import org.apache.qpid.proton.amqp.messaging.Data;
import org.apache.qpid.proton.amqp.messaging.DeliveryAnnotations;
import org.apache.qpid.proton.amqp.messaging.Footer;
import org.apache.qpid.proton.amqp.messaging.Header;
import org.apache.qpid.proton.amqp.messaging.MessageAnnotations;
import org.apache.qpid.proton.amqp.messaging.Modified;
import org.apache.qpid.proton.amqp.messaging.Properties;
import org.apache.qpid.proton.amqp.messaging.Source;
import org.apache.qpid.proton.amqp.transport.Detach;
import org.apache.qpid.proton.amqp.transport.Disposition;
import org.apache.qpid.proton.amqp.transport.End;
import org.apache.qpid.proton.amqp.transport.Role;
import org.apache.qpid.proton.amqp.transport.Transfer;
import org.apache.qpid.proton.message.Message;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Outcomes, requeue on detach and on a session's end, and the consumer's bytes. */
@ExtendWith(LeakDetection.class)
class SettlementTest {
    private static RunningBroker broker;

    @BeforeAll
    static void start() throws Exception {
        broker = RunningBroker.start();
    }

    @AfterAll
    static void stop() {
        broker.close();
    }

    @ParameterizedTest(name = "detach closed={0}, default-outcome modified={1}")
    @CsvSource({"true, false", "false, false", "true, true", "false, true"})
    void unsettledDeliveriesAreRequeuedOnDetach(boolean closed, boolean modifiedDefault) throws Exception {
        String queue = "requeue-" + closed + "-" + modifiedDefault;
        CreditTest.publish(broker.port(), queue, 10);
        try (RawClient first = RawClient.openSession(broker.port())) {
            Source source = RawClient.source(queue);
            if (modifiedDefault) {
                Modified outcome = new Modified();
                outcome.setDeliveryFailed(true);
                source.setDefaultOutcome(outcome);
            }
            first.attachReceiver(0, source, false);
            first.flow(0, 0, 10, false, false);
            for (int i = 0; i < 10; i++) {
                first.read().as(Transfer.class);
            }
            first.write(0, RawClient.detach(0, closed));
            first.readUntil(Detach.class);
        }
        try (RawClient second = RawClient.openSession(broker.port())) {
            second.attachReceiver(0, RawClient.source(queue), false);
            second.flow(0, 0, 20, false, false);
            for (int i = 0; i < 10; i++) {
                RawClient.Frame frame = second.read();
                frame.as(Transfer.class);
                Message m = Messages.decode(frame.payload());
                assertThat(Messages.body(frame.payload())).isEqualTo("payload-12b");
                assertThat(Boolean.TRUE.equals(m.getHeader().getFirstAcquirer())).as("first-acquirer").isFalse();
                assertThat(m.getDeliveryCount()).isEqualTo(modifiedDefault ? 1 : 0);
            }
            assertThat(second.silentFor(200)).isTrue();
        }
    }

    /**
     * Two consumer links of one session on one queue hold every other message; when the session ends (or its
     * connection closes), the queue takes all of them back at once, so a consumer waiting elsewhere gets them in their
     * original order, each once, with the delivery-count the links' default outcome gives (modified(delivery-failed)
     * raises it, as Qpid JMS asks; released leaves it, RabbitMQ 4's default). Returned link by link, the first link's
     * messages would reach it before the second's.
     */
    @ParameterizedTest(name = "the {0} ends, default-outcome modified={1}")
    @CsvSource({"session, false", "session, true", "connection, false", "connection, true"})
    void aSessionsLinksOnOneQueueGiveTheirDeliveriesBackTogetherInOrder(String ends, boolean modifiedDefault)
            throws Exception {
        String queue = "requeue-together-" + ends + "-" + modifiedDefault;
        CreditTest.publish(broker.port(), queue, 10, i -> Messages.data("m" + i, null));
        try (RawClient holder = RawClient.openSession(broker.port());
             RawClient waiting = RawClient.openSession(broker.port())) {
            Source source = RawClient.source(queue);
            if (modifiedDefault) {
                Modified outcome = new Modified();
                outcome.setDeliveryFailed(true);
                source.setDefaultOutcome(outcome);
            }
            holder.attachReceiver(0, source, false);
            holder.attachReceiver(1, source, false);
            // one credit at a time, turn by turn: link 0 holds m0, m2, m4, ...; link 1 holds m1, m3, m5, ...
            for (int i = 0; i < 10; i++) {
                holder.flow(i % 2, i / 2, 1, false, false);
                Transfer transfer = holder.readUntil(Transfer.class);
                assertThat(transfer.getHandle().intValue()).isEqualTo(i % 2);
            }
            waiting.attachReceiver(0, RawClient.source(queue), false);
            waiting.flow(0, 0, 20, false, false);
            assertThat(waiting.silentFor(100)).as("every message is held").isTrue();
            if (ends.equals("session")) {
                holder.write(0, new End());
                holder.readUntil(End.class);
            } else {
                holder.close(true);
            }
            for (int i = 0; i < 10; i++) {
                RawClient.Frame frame = waiting.read();
                frame.as(Transfer.class);
                Message m = Messages.decode(frame.payload());
                assertThat(Messages.body(frame.payload())).isEqualTo("m" + i);
                assertThat(Boolean.TRUE.equals(m.getHeader().getFirstAcquirer())).as("first-acquirer").isFalse();
                assertThat(m.getDeliveryCount()).isEqualTo(modifiedDefault ? 1 : 0);
            }
            assertThat(waiting.silentFor(200)).isTrue();
        }
    }

    @Test
    void outcomesDecideWhatHappensToTheMessage() throws Exception {
        CreditTest.publish(broker.port(), "outcomes", 4);
        try (RawClient consumer = RawClient.openSession(broker.port())) {
            consumer.attachReceiver(0, RawClient.source("outcomes"), false);
            consumer.flow(0, 0, 4, false, false);
            for (int i = 0; i < 4; i++) {
                consumer.read().as(Transfer.class);
            }
            consumer.write(0, disposition(0, new org.apache.qpid.proton.amqp.messaging.Accepted()));
            consumer.write(0, disposition(1, new org.apache.qpid.proton.amqp.messaging.Rejected()));
            consumer.write(0, disposition(2, org.apache.qpid.proton.amqp.messaging.Released.getInstance()));
            Modified failed = new Modified();
            failed.setDeliveryFailed(true);
            consumer.write(0, disposition(3, failed));
            consumer.flow(0, 4, 10, false, false);
            // released comes back first (its original position), unchanged; modified next, with one failure counted
            RawClient.Frame released = consumer.read();
            assertThat(Messages.decode(released.payload()).getDeliveryCount()).isZero();
            assertThat(Boolean.TRUE.equals(Messages.decode(released.payload()).getHeader().getFirstAcquirer())).isFalse();
            RawClient.Frame modified = consumer.read();
            assertThat(Messages.decode(modified.payload()).getDeliveryCount()).isEqualTo(1);
            assertThat(consumer.silentFor(200)).as("accepted and rejected are gone").isTrue();
        }
    }

    private static Disposition disposition(long id, org.apache.qpid.proton.amqp.transport.DeliveryState state) {
        Disposition d = new Disposition();
        d.setRole(Role.RECEIVER);
        d.setFirst(UnsignedInteger.valueOf(id));
        d.setSettled(true);
        d.setState(state);
        return d;
    }

    @Test
    void theConsumerGetsThePublishersBareMessageByteForByte() throws Exception {
        Message message = Message.Factory.create();
        Header header = new Header();
        header.setDurable(true);
        header.setPriority(org.apache.qpid.proton.amqp.UnsignedByte.valueOf((byte) 6));
        message.setHeader(header);
        message.setDeliveryAnnotations(new DeliveryAnnotations(Map.of(Symbol.valueOf("x-opt-hop"), "1")));
        message.setMessageAnnotations(new MessageAnnotations(Map.of(Symbol.valueOf("x-opt-client"), "kept")));
        Properties properties = new Properties();
        properties.setMessageId("id-1");
        properties.setTo("bytes-queue");
        properties.setSubject("subject");
        properties.setContentType(Symbol.valueOf("application/octet-stream"));
        message.setProperties(properties);
        Map<String, Object> app = new LinkedHashMap<>();
        app.put("flag", true);
        app.put("n", 42L);
        message.setApplicationProperties(new ApplicationProperties(app));
        message.setBody(new Data(new Binary("checksummed body".getBytes(StandardCharsets.UTF_8))));
        byte[] withoutFooter = Messages.encode(message);
        int bareStart = indexOfProperties(withoutFooter);
        CRC32 crc = new CRC32();
        crc.update(withoutFooter, bareStart, withoutFooter.length - bareStart);
        message.setFooter(new Footer(Map.of(Symbol.valueOf("x-opt-crc-32"), UnsignedInteger.valueOf(crc.getValue()))));
        byte[] sent = Messages.encode(message);
        byte[] sentBareAndFooter = Arrays.copyOfRange(sent, bareStart, sent.length);

        try (RawClient publisher = RawClient.openSession(broker.port());
             RawClient consumer = RawClient.openSession(broker.port())) {
            publisher.attachSender(0, "bytes-queue");
            publisher.readUntil(org.apache.qpid.proton.amqp.transport.Flow.class); // credit, once the queue is saved
            publisher.transfer(0, 0, sent, false);
            assertThat(publisher.readUntil(Disposition.class).getState())
                .isInstanceOf(org.apache.qpid.proton.amqp.messaging.Accepted.class);
            consumer.attachReceiver(0, RawClient.source("bytes-queue"), false);
            consumer.flow(0, 0, 1, false, false);
            byte[] received = consumer.read().payload();
            byte[] tail = Arrays.copyOfRange(received, received.length - sentBareAndFooter.length, received.length);
            assertThat(tail).isEqualTo(sentBareAndFooter);
            CRC32 check = new CRC32();
            check.update(tail, 0, withoutFooter.length - bareStart);
            Message got = Messages.decode(received);
            assertThat(got.getFooter().getValue()).containsEntry(Symbol.valueOf("x-opt-crc-32"),
                UnsignedInteger.valueOf(check.getValue()));
            assertThat(got.getDeliveryAnnotations()).isNull();
            assertThat(got.getMessageAnnotations().getValue()).containsEntry(Symbol.valueOf("x-opt-client"), "kept");
            assertThat(got.getPriority()).isEqualTo((short) 6);
        }
    }

    /** Where the properties section (00 53 73) starts: the bare message. */
    private static int indexOfProperties(byte[] bytes) {
        for (int i = 0; i + 2 < bytes.length; i++) {
            if (bytes[i] == 0 && bytes[i + 1] == 0x53 && bytes[i + 2] == 0x73) {
                return i;
            }
        }
        throw new AssertionError("no properties section");
    }
}
