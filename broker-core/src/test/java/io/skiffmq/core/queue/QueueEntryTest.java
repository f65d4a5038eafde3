package io.skiffmq.core.queue;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.management.ManagementFactory;
import org.junit.jupiter.api.Test;

/** One entry per queued message: 56 bytes (with compressed references), its lane and count kept in what they need. */
class QueueEntryTest {
    private static final int ROUNDS = 20_000;

    @Test
    void anEntryIsFiftySixBytes() {
        com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        long allocated = 0;
        QueueEntry entry = null;
        for (int round = 0; round < 2; round++) {
            long before = threads.getCurrentThreadAllocatedBytes();
            for (int i = 0; i < ROUNDS; i++) {
                entry = new QueueEntry(i, null, 255, 12, Long.MAX_VALUE);
            }
            allocated = (threads.getCurrentThreadAllocatedBytes() - before) / ROUNDS;
        }
        assertThat(entry.priority()).as("lane 255, unsigned").isEqualTo(255);
        assertThat(allocated).isLessThanOrEqualTo(56);
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
