package io.skiffmq.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.skiffmq.codec.testing.LeakDetection;
import java.util.Arrays;
import org.apache.qpid.proton.amqp.Binary;
import org.apache.qpid.proton.amqp.UnsignedInteger;
import org.apache.qpid.proton.amqp.transport.Disposition;
import org.apache.qpid.proton.amqp.transport.Flow;
import org.apache.qpid.proton.amqp.transport.Open;
import org.apache.qpid.proton.amqp.transport.Transfer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** Deliveries of several frames both ways, aborted deliveries, pre-settled publishing, round-robin dispatch. */
@ExtendWith(LeakDetection.class)
class DeliveryShapesTest {
    private static RunningBroker broker;

    @BeforeAll
    static void start() throws Exception {
        broker = RunningBroker.start();
    }

    @AfterAll
    static void stop() {
        broker.close();
    }

    private static void frame(RawClient client, long deliveryId, byte[] chunk, boolean more, boolean aborted)
            throws Exception {
        Transfer t = new Transfer();
        t.setHandle(UnsignedInteger.ZERO);
        if (deliveryId >= 0) {
            t.setDeliveryId(UnsignedInteger.valueOf(deliveryId));
            t.setDeliveryTag(new Binary(new byte[] {(byte) deliveryId}));
            t.setMessageFormat(UnsignedInteger.ZERO);
        }
        t.setMore(more);
        t.setAborted(aborted);
        client.write(io.skiffmq.codec.amqp10.AmqpFrame.TYPE_AMQP, 0, t, chunk);
    }

    @Test
    void aDeliveryInSeveralFramesIsJoinedAndSentOnInFramesThePeerAccepts() throws Exception {
        byte[] message = Messages.data("x".repeat(3000), null);
        try (RawClient publisher = RawClient.openSession(broker.port())) {
            publisher.attachSender(0, "multi-frame");
            publisher.readUntil(Flow.class);
            int third = message.length / 3;
            frame(publisher, 0, Arrays.copyOfRange(message, 0, third), true, false);
            frame(publisher, -1, Arrays.copyOfRange(message, third, 2 * third), true, false);
            frame(publisher, -1, Arrays.copyOfRange(message, 2 * third, message.length), false, false);
            Disposition d = publisher.readUntil(Disposition.class);
            assertThat(d.getFirst().longValue()).as("one delivery-id for three frames").isZero();
            assertThat(d.getLast() == null || d.getLast().longValue() == 0).isTrue();
        }
        try (RawClient consumer = new RawClient(broker.port())) {
            consumer.sasl("guest", "guest");
            Open open = new Open();
            open.setContainerId("small-frames");
            open.setMaxFrameSize(UnsignedInteger.valueOf(1024));
            consumer.write(0, open);
            consumer.read().as(Open.class);
            consumer.begin();
            consumer.attachReceiver(0, RawClient.source("multi-frame"), true);
            consumer.flow(0, 0, 1, false, false);
            java.io.ByteArrayOutputStream payload = new java.io.ByteArrayOutputStream();
            int frames = 0;
            while (true) {
                RawClient.Frame frame = consumer.read();
                Transfer t = frame.as(Transfer.class);
                frames++;
                payload.writeBytes(frame.payload());
                if (!Boolean.TRUE.equals(t.getMore())) {
                    break;
                }
            }
            assertThat(frames).isGreaterThanOrEqualTo(3);
            assertThat(Messages.body(payload.toByteArray())).isEqualTo("x".repeat(3000));
        }
    }

    @Test
    void anAbortedDeliveryIsDiscarded() throws Exception {
        try (RawClient publisher = RawClient.openSession(broker.port())) {
            publisher.attachSender(0, "aborted");
            publisher.readUntil(Flow.class);
            byte[] message = Messages.data("never", null);
            frame(publisher, 0, Arrays.copyOfRange(message, 0, 5), true, false);
            frame(publisher, -1, new byte[0], false, true);
            publisher.transfer(0, 1, Messages.data("kept", null), false);
            assertThat(publisher.readUntil(Disposition.class).getFirst().longValue()).isEqualTo(1);
        }
        try (RawClient consumer = RawClient.openSession(broker.port())) {
            consumer.attachReceiver(0, RawClient.source("aborted"), true);
            consumer.flow(0, 0, 5, false, false);
            assertThat(Messages.body(consumer.read().payload())).isEqualTo("kept");
            assertThat(consumer.silentFor(200)).isTrue();
        }
    }

    @Test
    void preSettledPublishGetsNoDispositionAndIsStillRouted() throws Exception {
        try (RawClient publisher = RawClient.openSession(broker.port())) {
            publisher.attachSender(0, "pre-settled");
            publisher.readUntil(Flow.class);
            publisher.transfer(0, 0, Messages.data("fire-and-forget", null), true);
            assertThat(publisher.silentFor(200)).isTrue();
        }
        try (RawClient consumer = RawClient.openSession(broker.port())) {
            consumer.attachReceiver(0, RawClient.source("pre-settled"), true);
            consumer.flow(0, 0, 1, false, false);
            assertThat(Messages.body(consumer.read().payload())).isEqualTo("fire-and-forget");
        }
    }

    @Test
    void anInternalExchangeRefusesClientPublishers() throws Exception {
        broker.vhost("/").declareExchange(new io.skiffmq.core.Exchange("internal-only",
            io.skiffmq.core.Exchange.Type.FANOUT, true, false, true, java.util.Map.of()));
        try (RawClient publisher = RawClient.openSession(broker.port())) {
            publisher.attachSender(0, "/exchanges/internal-only");
            org.apache.qpid.proton.amqp.transport.Detach detach = publisher.readUntil(
                org.apache.qpid.proton.amqp.transport.Detach.class);
            assertThat((Object) detach.getError().getCondition())
                .isEqualTo(io.skiffmq.codec.amqp10.AmqpError.UNAUTHORIZED_ACCESS.symbol());
        }
    }

    @Test
    void consumersWithCreditAreServedInTurn() throws Exception {
        CreditTest.publish(broker.port(), "round-robin", 6);
        try (RawClient consumer = RawClient.openSession(broker.port())) {
            consumer.attachReceiver(0, RawClient.source("round-robin"), true);
            consumer.attachReceiver(1, RawClient.source("round-robin"), true);
            consumer.flow(0, 0, 3, false, false);
            consumer.flow(1, 0, 3, false, false);
            int[] perLink = new int[2];
            for (int i = 0; i < 6; i++) {
                perLink[consumer.read().as(Transfer.class).getHandle().intValue()]++;
            }
            assertThat(perLink).containsExactly(3, 3);
        }
    }
}
