package io.skiffmq.server;

import static io.skiffmq.codec.testing.Amqp.hex;
import static org.assertj.core.api.Assertions.assertThat;

import io.skiffmq.codec.amqp10.AmqpError;
import io.skiffmq.codec.testing.LeakDetection;
import org.apache.qpid.proton.amqp.transport.Close;
import org.apache.qpid.proton.amqp.transport.Detach;
import org.apache.qpid.proton.amqp.transport.End;
import org.apache.qpid.proton.amqp.transport.Flow;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Misbehaving clients: each gets the condition its violation deserves, and only its own connection (or session,
 * or link) suffers. A well-behaved connection publishes and consumes before and after each case. Transfers beyond
 * credit are in {@link PublisherCreditTest}, where the queue's confirms can be held back to make it deterministic.
 */
@ExtendWith(LeakDetection.class)
class AbuseTest {
    private static RunningBroker broker;
    private RawClient bystander;
    private long bystanderSent;

    @BeforeAll
    static void start() throws Exception {
        broker = RunningBroker.start("max-frame-size=4096");
    }

    @AfterAll
    static void stop() {
        broker.close();
    }

    @BeforeEach
    void connectBystander() throws Exception {
        bystander = RawClient.openSession(broker.port());
        bystander.attachSender(0, "bystander");
        bystander.readUntil(Flow.class);
        bystander.attachReceiver(1, RawClient.source("bystander"), true);
        bystanderWorks();
    }

    @AfterEach
    void bystanderStillWorks() throws Exception {
        bystanderWorks();
        bystander.close();
    }

    /** One message through the bystander's own queue, round trip. */
    private void bystanderWorks() throws Exception {
        bystander.transfer(0, bystanderSent, Messages.data("alive", null), false);
        bystander.flow(1, bystanderSent, 1, false, false);
        bystanderSent++;
        assertThat(bystander.readUntil(org.apache.qpid.proton.amqp.transport.Transfer.class)).isNotNull();
    }

    private static void assertCondition(Object errorHolder, AmqpError expected) {
        org.apache.qpid.proton.amqp.transport.ErrorCondition error;
        if (errorHolder instanceof Close c) {
            error = c.getError();
        } else if (errorHolder instanceof End e) {
            error = e.getError();
        } else {
            error = ((Detach) errorHolder).getError();
        }
        assertThat((Object) error.getCondition()).isEqualTo(expected.symbol());
        assertThat(error.getDescription()).isNotBlank();
    }

    @Test
    void aFrameLargerThanMaxFrameSizeClosesTheConnection() throws Exception {
        try (RawClient client = RawClient.openSession(broker.port())) {
            client.writeRaw(hex("00 00 20 00 02 00 00 00"));
            assertCondition(client.readUntil(Close.class), AmqpError.FRAMING_ERROR);
            assertThat(client.closedByBroker()).isTrue();
        }
    }

    @Test
    void garbageAfterTheHeaderClosesTheConnection() throws Exception {
        try (RawClient client = RawClient.openSession(broker.port())) {
            client.writeRaw(hex("00 00 00 10 02 00 00 00 de ad be ef de ad be ef"));
            assertCondition(client.readUntil(Close.class), AmqpError.DECODE_ERROR);
            assertThat(client.closedByBroker()).isTrue();
        }
    }

    @Test
    void aTransferOnALinkNeverAttachedEndsTheSession() throws Exception {
        try (RawClient client = RawClient.openSession(broker.port())) {
            client.transfer(7, 0, Messages.data("x", null), false);
            assertCondition(client.readUntil(End.class), AmqpError.UNATTACHED_HANDLE);
        }
    }

    @Test
    void aSessionOnAChannelThatWasNeverBegunClosesTheConnection() throws Exception {
        try (RawClient client = RawClient.openSession(broker.port())) {
            client.write(3, RawClient.detach(0, true));
            assertCondition(client.readUntil(Close.class), AmqpError.NOT_ALLOWED);
        }
    }

    @Test
    void aDeliveryLargerThanMaxMessageSizeDetachesTheLink() throws Exception {
        try (RunningBroker small = RunningBroker.start("max-message-size=1000");
             RawClient client = RawClient.openSession(small.port())) {
            client.attachSender(0, "big");
            client.readUntil(Flow.class);
            client.transfer(0, 0, Messages.data("x".repeat(2000), null), false);
            assertCondition(client.readUntil(Detach.class), AmqpError.MESSAGE_SIZE_EXCEEDED);
        }
    }
}
