package io.skiffmq.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.skiffmq.codec.amqp10.AmqpFrame;
import io.skiffmq.codec.testing.LeakDetection;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.qpid.proton.amqp.UnsignedInteger;
import org.apache.qpid.proton.amqp.transport.Flow;
import org.apache.qpid.proton.amqp.transport.Transfer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The peer's incoming window [2.5.6] holds back what the broker sends: a delivery that fits one frame waits whole,
 * one split over several frames pauses between them, and both go on, in order, when a flow opens the window.
 */
@ExtendWith(LeakDetection.class)
class OutgoingWindowTest {
    private static final int MAX_FRAME = 512;

    @Test
    void aClosedWindowHoldsWholeDeliveriesAndTheRestOfASplitOne() throws Exception {
        try (EmbeddedConnection c = EmbeddedConnection.withQueuesInline()
                .handshake(UnsignedInteger.valueOf(MAX_FRAME))) {
            c.vhost().declareQueue("windowed", false, Map.of());
            c.attachSender(0, "windowed");
            c.readUntil(Flow.class);
            c.transfer(0, 0, Messages.data("small-0", null));
            c.transfer(0, 1, Messages.data("x".repeat(3 * MAX_FRAME), null));
            c.transfer(0, 2, Messages.data("small-2", null));
            c.attachReceiver(1, "windowed");

            window(c, 0, 2);
            List<Transfer> first = transfers(c.drain());
            assertThat(first).hasSize(2);
            assertThat(first.get(0).getDeliveryId().longValue()).isZero();
            assertThat(first.get(0).getMore()).isFalse();
            assertThat(first.get(1).getDeliveryId().longValue()).isOne();
            assertThat(first.get(1).getMore()).as("the big one, split").isTrue();

            window(c, 2, 100);
            List<Transfer> rest = transfers(c.drain());
            assertThat(rest.size()).as("the rest of the big one, then the last").isGreaterThanOrEqualTo(3);
            Transfer last = rest.get(rest.size() - 1);
            assertThat(last.getDeliveryId().longValue()).isEqualTo(2);
            assertThat(last.getMore()).isFalse();
            List<Transfer> continuations = rest.subList(0, rest.size() - 1);
            assertThat(continuations).allMatch(t -> t.getDeliveryId() == null);
            assertThat(continuations.get(continuations.size() - 1).getMore()).isFalse();
            assertThat(continuations.subList(0, continuations.size() - 1)).allMatch(Transfer::getMore);
            assertThat(c.vhost().queue("windowed").readyCount()).isZero();
        }
    }

    /** Our incoming window: {@code window} transfers after the {@code received} first; link 1 gets credit too. */
    private static void window(EmbeddedConnection c, long received, long window) {
        Flow flow = new Flow();
        flow.setNextIncomingId(UnsignedInteger.valueOf(received));
        flow.setIncomingWindow(UnsignedInteger.valueOf(window));
        flow.setNextOutgoingId(UnsignedInteger.valueOf(3));
        flow.setOutgoingWindow(UnsignedInteger.valueOf(1000));
        flow.setHandle(UnsignedInteger.ONE);
        flow.setDeliveryCount(UnsignedInteger.ZERO);
        flow.setLinkCredit(UnsignedInteger.valueOf(100));
        c.write(AmqpFrame.TYPE_AMQP, flow, null);
    }

    private static List<Transfer> transfers(List<Object> frames) {
        List<Transfer> transfers = new ArrayList<>();
        for (Object frame : frames) {
            if (frame instanceof Transfer t && t.getHandle().intValue() == 1) {
                transfers.add(t);
            }
        }
        return transfers;
    }
}
