package io.skiffmq.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.skiffmq.codec.testing.LeakDetection;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.qpid.proton.amqp.transport.Flow;
import org.apache.qpid.proton.amqp.transport.Transfer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A consumer whose socket takes no more (the client stopped reading): its deliveries wait in the broker as queued
 * messages, not as frames in the channel's outbound buffer, and go out in order once the socket is writable again.
 */
@ExtendWith(LeakDetection.class)
class SlowConsumerTest {
    @Test
    void deliveriesWaitWhileTheSocketIsFullAndResumeInOrder() throws Exception {
        try (EmbeddedConnection c = EmbeddedConnection.withQueuesInline().handshake()) {
            c.vhost().declareQueue("slow", false, Map.of());
            c.attachSender(0, "slow");
            c.readUntil(Flow.class);
            c.attachReceiver(1, "slow");
            c.grant(1, 0, 100);
            c.drain();

            c.socketWritable(false);
            for (int i = 0; i < 20; i++) {
                c.transfer(0, i, Messages.data("m" + i, null));
            }
            assertThat(deliveryIds(c.drain())).as("nothing written for the consumer while the socket is full").isEmpty();
            assertThat(c.vhost().queue("slow").readyCount()).as("taken by the link, within its credit").isZero();

            c.socketWritable(true);
            assertThat(deliveryIds(c.drain())).containsExactly(0L, 1L, 2L, 3L, 4L, 5L, 6L, 7L, 8L, 9L, 10L, 11L, 12L,
                13L, 14L, 15L, 16L, 17L, 18L, 19L);
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
