package io.skiffmq.core.queue;

import static org.assertj.core.api.Assertions.assertThat;

import io.skiffmq.codec.testing.Allocations;
import org.junit.jupiter.api.Test;

/** One record per delivery: 40 bytes (with compressed references), its counts in 32 bits each, read back exactly. */
class QueueDeliveryTest {
    private static final int ROUNDS = 20_000;

    @Test
    void aDeliveryIsFortyBytes() throws Exception {
        assertThat(Allocations.perCall(ROUNDS, () -> new QueueDelivery(null, 7, 3, -1, true, 12)))
            .isLessThanOrEqualTo(40);
    }

    @Test
    void itsCountsComeBackAsGiven() {
        QueueDelivery delivery = new QueueDelivery(null, Long.MAX_VALUE, 0xFFFF_FFFFL, Integer.MAX_VALUE, false, 5);
        assertThat(delivery.tag()).isEqualTo(Long.MAX_VALUE);
        assertThat(delivery.deliveryCount()).as("the largest AMQP 1.0 delivery-count, a uint").isEqualTo(0xFFFF_FFFFL);
        assertThat(delivery.returns()).isEqualTo(Integer.MAX_VALUE);
        assertThat(delivery.firstAcquirer()).isFalse();
        assertThat(delivery.remaining()).isEqualTo(5);
        assertThat(new QueueDelivery(null, 0, 0, -1, true, 0).returns()).as("not told").isEqualTo(-1);
        assertThat(new QueueDelivery(null, 0, 0, 1L << 40, true, 0).returns()).as("stops at the queue's largest")
            .isEqualTo(Integer.MAX_VALUE);
    }
}
