package io.skiffmq.core.queue;

import static org.assertj.core.api.Assertions.assertThat;

import io.skiffmq.codec.testing.Allocations;
import org.junit.jupiter.api.Test;

/**
 * One record per delivery: a first push from a queue that does not count returns is the message and its tag, 24 bytes
 * (with compressed references); any other 40, its counts in 32 bits each, read back exactly.
 */
class QueueDeliveryTest {
    private static final int ROUNDS = 20_000;

    @Test
    void aFirstPushIsTwentyFourBytesAndAnyOtherForty() throws Exception {
        assertThat(Allocations.perCall(ROUNDS, () -> QueueDelivery.of(null, 7, 0, -1, true, 0)))
            .isLessThanOrEqualTo(24);
        assertThat(Allocations.perCall(ROUNDS, () -> QueueDelivery.of(null, 7, 3, -1, true, 12)))
            .isLessThanOrEqualTo(40);
    }

    @Test
    void itsCountsComeBackAsGiven() {
        QueueDelivery delivery = QueueDelivery.of(null, Long.MAX_VALUE, 0xFFFF_FFFFL, Integer.MAX_VALUE, false, 5);
        assertThat(delivery.tag()).isEqualTo(Long.MAX_VALUE);
        assertThat(delivery.deliveryCount()).as("the largest AMQP 1.0 delivery-count, a uint").isEqualTo(0xFFFF_FFFFL);
        assertThat(delivery.returns()).isEqualTo(Integer.MAX_VALUE);
        assertThat(delivery.firstAcquirer()).isFalse();
        assertThat(delivery.remaining()).isEqualTo(5);
        QueueDelivery first = QueueDelivery.of(null, 9, 0, -1, true, 0);
        assertThat(first.tag()).isEqualTo(9);
        assertThat(first.deliveryCount()).isZero();
        assertThat(first.returns()).as("not told").isEqualTo(-1);
        assertThat(first.firstAcquirer()).isTrue();
        assertThat(first.remaining()).isZero();
        assertThat(QueueDelivery.of(null, 9, 1, -1, true, 0).deliveryCount()).isEqualTo(1);
        assertThat(QueueDelivery.of(null, 9, 0, 0, true, 0).returns()).as("a quorum queue's").isZero();
        assertThat(QueueDelivery.of(null, 9, 0, -1, false, 0).firstAcquirer()).isFalse();
        assertThat(QueueDelivery.of(null, 9, 0, -1, true, 1).remaining()).isEqualTo(1);
        assertThat(QueueDelivery.of(null, 0, 0, 1L << 40, true, 0).returns()).as("stops at the queue's largest")
            .isEqualTo(Integer.MAX_VALUE);
    }
}
