package io.skiffmq.core.queue;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import io.skiffmq.codec.testing.Allocations;

/**
 * One entry per queued message: 64 bytes (with compressed references), its lane and counts kept in what they need
 * (56 before the quorum queues' count of returns).
 */
class QueueEntryTest {
    private static final int ROUNDS = 20_000;

    @Test
    void anEntryIsSixtyFourBytes() throws Exception {
        assertThat(Allocations.perCall(ROUNDS, () -> new QueueEntry(1, null, 255, 12, Long.MAX_VALUE)))
            .isLessThanOrEqualTo(64);
        assertThat(new QueueEntry(1, null, 255, 12, Long.MAX_VALUE).priority()).as("lane 255, unsigned")
            .isEqualTo(255);
    }

    @Test
    void theDeliveryCountStopsAtItsLargestValue() {
        QueueEntry entry = new QueueEntry(1, null, 0, 0, Long.MAX_VALUE);
        entry.failedDelivery();
        assertThat(entry.deliveryCount).isEqualTo(1);
        entry.deliveryCount(1L << 40); // as a store may hold it
        assertThat(entry.deliveryCount).isEqualTo(Integer.MAX_VALUE);
        entry.failedDelivery();
        assertThat(entry.deliveryCount).isEqualTo(Integer.MAX_VALUE);
    }
}
