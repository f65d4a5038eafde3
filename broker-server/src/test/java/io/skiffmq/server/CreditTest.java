package io.skiffmq.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.skiffmq.codec.testing.LeakDetection;
import org.apache.qpid.proton.amqp.transport.Disposition;
import org.apache.qpid.proton.amqp.transport.Flow;
import org.apache.qpid.proton.amqp.transport.Transfer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Consumer credit, owned by the queue: never more transfers than granted, drain, echo, and no credit from
 * settlement. The raw client counts every transfer against what it granted.
 */
@ExtendWith(LeakDetection.class)
class CreditTest {
    private static RunningBroker broker;

    @BeforeAll
    static void start() throws Exception {
        broker = RunningBroker.start();
    }

    @AfterAll
    static void stop() {
        broker.close();
    }

    /** Publishes {@code count} messages to {@code queue} and waits for every confirm. */
    static void publish(int port, String queue, int count) throws Exception {
        byte[] message = Messages.data("payload-12b", null);
        publish(port, queue, count, i -> message);
    }

    /** Publishes the messages {@code message} makes of 0 to {@code count - 1}, in order, and waits for the confirms. */
    static void publish(int port, String queue, int count, java.util.function.IntFunction<byte[]> message)
            throws Exception {
        try (RawClient publisher = RawClient.openSession(port)) {
            publisher.attachSender(0, queue);
            long credit = publisher.readUntil(Flow.class).getLinkCredit().longValue();
            int sent = 0;
            int confirmed = 0;
            while (confirmed < count) {
                while (sent < count && credit > 0) {
                    publisher.transfer(0, sent, message.apply(sent), false);
                    sent++;
                    credit--;
                }
                RawClient.Frame frame = publisher.read();
                if (frame.body() instanceof Disposition d) {
                    long last = d.getLast() == null ? d.getFirst().longValue() : d.getLast().longValue();
                    confirmed += (int) (last - d.getFirst().longValue() + 1);
                } else if (frame.body() instanceof Flow f && f.getHandle() != null) {
                    // [2.6.7] the grant counts from the flow's delivery-count, which may trail what we sent
                    credit = f.getDeliveryCount().longValue() + f.getLinkCredit().longValue() - sent;
                }
            }
        }
    }

    @ParameterizedTest(name = "credit {0}")
    @ValueSource(ints = {1, 2})
    void manyMessagesWithTinyCreditNeverStallAndNeverExceedTheGrant(int credit) throws Exception {
        String queue = "tiny-credit-" + credit;
        int total = 5_000; // in 2,500 or 5,000 grants, one round trip each: a stall shows long before the end
        publish(broker.port(), queue, total);
        try (RawClient consumer = RawClient.openSession(broker.port())) {
            consumer.attachReceiver(0, RawClient.source(queue), true);
            long received = 0;
            long deliveryCount = 0;
            while (received < total) {
                consumer.flow(0, deliveryCount, credit, false, false);
                for (int i = 0; i < credit; i++) {
                    consumer.read().as(Transfer.class);
                    received++;
                    deliveryCount++;
                }
            }
            // every grant was used exactly: one more read finds nothing, so nothing beyond the grant was sent
            assertThat(consumer.silentFor(300)).isTrue();
            assertThat(received).isEqualTo(total);
        }
    }

    @Test
    void drainWithThreeAvailableGivesThreeTransfersThenCreditZero() throws Exception {
        publish(broker.port(), "drain-3", 3);
        try (RawClient consumer = RawClient.openSession(broker.port())) {
            consumer.attachReceiver(0, RawClient.source("drain-3"), false);
            consumer.flow(0, 0, 10, true, false);
            for (int i = 0; i < 3; i++) {
                consumer.read().as(Transfer.class);
            }
            Flow flow = consumer.read().as(Flow.class);
            assertThat(flow.getLinkCredit().longValue()).isZero();
            assertThat(flow.getDeliveryCount().longValue()).isEqualTo(10);
            assertThat(flow.getDrain()).isTrue();
        }
    }

    @Test
    void drainOnAnEmptyQueueAnswersAtOnce() throws Exception {
        try (RawClient consumer = RawClient.openSession(broker.port())) {
            consumer.attachReceiver(0, RawClient.source("drain-empty"), false);
            consumer.flow(0, 0, 5, true, false);
            Flow flow = consumer.read().as(Flow.class);
            assertThat(flow.getLinkCredit().longValue()).isZero();
            assertThat(flow.getDeliveryCount().longValue()).isEqualTo(5);
        }
    }

    @Test
    void echoIsAnsweredAfterTheDeliveriesItAllowed() throws Exception {
        publish(broker.port(), "echo", 2);
        try (RawClient consumer = RawClient.openSession(broker.port())) {
            consumer.attachReceiver(0, RawClient.source("echo"), false);
            consumer.flow(0, 0, 5, false, true);
            consumer.read().as(Transfer.class);
            consumer.read().as(Transfer.class);
            Flow flow = consumer.read().as(Flow.class);
            assertThat(flow.getDeliveryCount().longValue()).isEqualTo(2);
            assertThat(flow.getLinkCredit().longValue()).isEqualTo(3);
            assertThat(flow.getAvailable().longValue()).isZero();
        }
    }

    @Test
    void noEchoNoDrainNoReply() throws Exception {
        try (RawClient consumer = RawClient.openSession(broker.port())) {
            consumer.attachReceiver(0, RawClient.source("quiet"), false);
            consumer.flow(0, 0, 5, false, false);
            assertThat(consumer.silentFor(300)).isTrue();
        }
    }

    @Test
    void settlementAddsNoCredit() throws Exception {
        publish(broker.port(), "settle-no-credit", 8);
        try (RawClient consumer = RawClient.openSession(broker.port())) {
            consumer.attachReceiver(0, RawClient.source("settle-no-credit"), false);
            consumer.flow(0, 0, 5, false, false);
            for (int i = 0; i < 5; i++) {
                consumer.read().as(Transfer.class);
            }
            consumer.write(0, RawClient.accept(0, 4));
            assertThat(consumer.silentFor(300)).as("no sixth transfer without a flow").isTrue();
            consumer.flow(0, 5, 1, false, false);
            assertThat(consumer.read().as(Transfer.class).getDeliveryId().longValue()).isEqualTo(5);
        }
    }

    @Test
    void creditFollowsTheNewestFlowWhenLoweredAndRaised() throws Exception {
        publish(broker.port(), "dynamic-credit", 20);
        try (RawClient consumer = RawClient.openSession(broker.port())) {
            consumer.attachReceiver(0, RawClient.source("dynamic-credit"), false);
            consumer.flow(0, 0, 3, false, false);
            for (int i = 0; i < 3; i++) {
                consumer.read().as(Transfer.class);
            }
            // the receiver lowers credit to 1 (from its delivery-count 3), then raises it to 6
            consumer.flow(0, 3, 1, false, false);
            consumer.read().as(Transfer.class);
            assertThat(consumer.silentFor(200)).isTrue();
            consumer.flow(0, 4, 6, false, true);
            for (int i = 0; i < 6; i++) {
                consumer.read().as(Transfer.class);
            }
            Flow flow = consumer.read().as(Flow.class);
            assertThat(flow.getDeliveryCount().longValue()).isEqualTo(10);
            assertThat(flow.getLinkCredit().longValue()).isZero();
        }
    }
}
