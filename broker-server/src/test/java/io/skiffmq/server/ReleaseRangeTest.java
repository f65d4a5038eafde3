package io.skiffmq.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.skiffmq.codec.testing.LeakDetection;
import io.skiffmq.codec.amqp10.AmqpFrame;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.qpid.proton.amqp.UnsignedInteger;
import org.apache.qpid.proton.amqp.messaging.Released;
import org.apache.qpid.proton.amqp.transport.Close;
import org.apache.qpid.proton.amqp.transport.Disposition;
import org.apache.qpid.proton.amqp.transport.Flow;
import org.apache.qpid.proton.amqp.transport.Role;
import org.apache.qpid.proton.amqp.transport.Transfer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Regression: a consumer releasing a range of deliveries while its queue runs on the consumer's own thread. The
 * requeued messages are redelivered at once, while the session is still settling the range; this used to insert
 * into the map being walked and close the connection with amqp:internal-error.
 */
@ExtendWith(LeakDetection.class)
class ReleaseRangeTest {
    @Test
    void aReleasedRangeIsRedeliveredAtOnceAndTheConnectionLives() throws Exception {
        try (EmbeddedConnection c = EmbeddedConnection.withQueuesInline().handshake()) {
            c.vhost().declareQueue("ranged", false, Map.of());
            c.attachSender(0, "ranged");
            c.readUntil(Flow.class);
            for (int i = 0; i < 5; i++) {
                c.transfer(0, i, Messages.data("m" + i, null));
            }
            c.attachReceiver(1, "ranged");
            Flow credit = new Flow();
            credit.setHandle(UnsignedInteger.ONE);
            credit.setNextIncomingId(UnsignedInteger.ZERO);
            credit.setIncomingWindow(UnsignedInteger.valueOf(1000));
            credit.setNextOutgoingId(UnsignedInteger.valueOf(5));
            credit.setOutgoingWindow(UnsignedInteger.valueOf(1000));
            credit.setDeliveryCount(UnsignedInteger.ZERO);
            credit.setLinkCredit(UnsignedInteger.valueOf(100));
            c.write(AmqpFrame.TYPE_AMQP, credit, null);
            assertThat(deliveryIds(c.drain())).containsExactly(0L, 1L, 2L, 3L, 4L);

            // a range wider than what is unsettled: every delivery in it goes back and comes straight out again
            Disposition release = new Disposition();
            release.setRole(Role.RECEIVER);
            release.setFirst(UnsignedInteger.ZERO);
            release.setLast(UnsignedInteger.valueOf(1000));
            release.setSettled(true);
            release.setState(Released.getInstance());
            c.write(AmqpFrame.TYPE_AMQP, release, null);
            List<Object> after = c.drain();
            assertThat(after).noneMatch(Close.class::isInstance);
            assertThat(deliveryIds(after)).containsExactly(5L, 6L, 7L, 8L, 9L);
            assertThat(c.vhost().queue("ranged").readyCount()).isZero();
        }
    }

    private static List<Long> deliveryIds(List<Object> frames) {
        List<Long> ids = new ArrayList<>();
        for (Object frame : frames) {
            if (frame instanceof Transfer t && t.getHandle().intValue() == 1) {
                ids.add(t.getDeliveryId().longValue());
            }
        }
        return ids;
    }
}
