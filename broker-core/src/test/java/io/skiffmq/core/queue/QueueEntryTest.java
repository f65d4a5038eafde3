package io.skiffmq.core.queue;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import io.skiffmq.codec.testing.Allocations;

/**
 * One entry per queued message: 56 bytes (with compressed references), its lane and counts kept in what they need,
 * and the confirm a queue with {@code x-confirm-after-consume} holds only in the entries that hold one.
 */
class QueueEntryTest {
    private static final int ROUNDS = 20_000;

    @Test
    void anEntryIsFiftySixBytes() throws Exception {
        assertThat(Allocations.perCall(ROUNDS, () -> new QueueEntry(1, null, 255, 12, Long.MAX_VALUE)))
            .isLessThanOrEqualTo(56);
        assertThat(new QueueEntry(1, null, 255, 12, Long.MAX_VALUE).priority()).as("lane 255, unsigned")
            .isEqualTo(255);
    }

    @Test
    void aHeldConfirmIsTakenOnce() {
        PublishConfirm confirm = () -> { };
        QueueEntry entry = new QueueEntry.ConfirmedWhenConsumed(1, null, 0, 0, Long.MAX_VALUE, confirm);
        assertThat(entry.takeConfirm()).isSameAs(confirm);
        assertThat(entry.takeConfirm()).as("run or refused once").isNull();
        assertThat(new QueueEntry(1, null, 0, 0, Long.MAX_VALUE).takeConfirm()).isNull();
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
