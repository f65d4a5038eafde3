package io.skiffmq.core.queue;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import io.skiffmq.codec.testing.Allocations;

/**
 * One entry per queued message: 48 bytes (with compressed references), its lane and counts kept in what they need,
 * and an expiry or the confirm a queue with {@code x-confirm-after-consume} holds only in the entries that have one.
 */
class QueueEntryTest {
    private static final int ROUNDS = 20_000;

    @Test
    void anEntryIsFortyEightBytes() throws Exception {
        assertThat(Allocations.perCall(ROUNDS, () -> QueueEntry.of(1, null, 255, 12, Long.MAX_VALUE, null)))
            .isLessThanOrEqualTo(48);
        assertThat(QueueEntry.of(1, null, 255, 12, Long.MAX_VALUE, null).priority()).as("lane 255, unsigned")
            .isEqualTo(255);
        assertThat(Allocations.perCall(ROUNDS, () -> QueueEntry.of(1, null, 0, 12, 1_000, null)))
            .as("one that expires").isLessThanOrEqualTo(64);
    }

    @Test
    void aHeldConfirmIsTakenOnce() {
        PublishConfirm confirm = () -> { };
        QueueEntry entry = QueueEntry.of(1, null, 0, 0, Long.MAX_VALUE, confirm);
        assertThat(entry.takeConfirm()).isSameAs(confirm);
        assertThat(entry.takeConfirm()).as("run or refused once").isNull();
        assertThat(entry.expiresAt()).isEqualTo(Long.MAX_VALUE);
        assertThat(QueueEntry.of(1, null, 0, 0, Long.MAX_VALUE, null).takeConfirm()).isNull();
    }

    @Test
    void anEntryKeepsItsExpiry() {
        assertThat(QueueEntry.of(1, null, 0, 0, 1_000, null).expiresAt()).isEqualTo(1_000);
        assertThat(QueueEntry.of(1, null, 0, 0, Long.MAX_VALUE, null).expiresAt()).isEqualTo(Long.MAX_VALUE);
        assertThat(QueueEntry.of(1, null, 0, 0, Long.MIN_VALUE, null).expiresAt()).isEqualTo(Long.MIN_VALUE);
    }

    @Test
    void theDeliveryCountStopsAtItsLargestValue() {
        QueueEntry entry = QueueEntry.of(1, null, 0, 0, Long.MAX_VALUE, null);
        entry.failedDelivery();
        assertThat(entry.deliveryCount).isEqualTo(1);
        entry.deliveryCount(1L << 40); // as a store may hold it
        assertThat(entry.deliveryCount).isEqualTo(Integer.MAX_VALUE);
        entry.failedDelivery();
        assertThat(entry.deliveryCount).isEqualTo(Integer.MAX_VALUE);
    }
}
