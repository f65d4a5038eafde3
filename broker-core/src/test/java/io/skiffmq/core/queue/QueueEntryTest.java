package io.skiffmq.core.queue;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;
import io.skiffmq.codec.testing.Allocations;

/**
 * One entry per queued message: 40 bytes (with compressed references), its lane and counts kept in what they need,
 * and an expiry, the confirm a queue with {@code x-confirm-after-consume} holds and a location in the queue's log only
 * in the entries that have one.
 */
class QueueEntryTest {
    private static final int ROUNDS = 20_000;

    @Test
    void anEntryIsFortyBytes() throws Exception {
        assertThat(Allocations.perCall(ROUNDS, () -> QueueEntry.of(1, null, 255, 12, Long.MAX_VALUE, null, false,
            false))).isLessThanOrEqualTo(40);
        assertThat(QueueEntry.of(1, null, 255, 12, Long.MAX_VALUE, null, false, false).priority())
            .as("lane 255, unsigned").isEqualTo(255);
        assertThat(Allocations.perCall(ROUNDS, () -> QueueEntry.of(1, null, 0, 12, 1_000, null, false, false)))
            .as("one that expires").isLessThanOrEqualTo(64);
        assertThat(Allocations.perCall(ROUNDS, () -> QueueEntry.of(1, null, 0, 12, Long.MAX_VALUE, null, true, false)))
            .as("one the log holds").isLessThanOrEqualTo(64);
        assertThat(Allocations.perCall(ROUNDS, () -> QueueEntry.of(1, null, 0, 12, Long.MAX_VALUE, null, true, true)))
            .as("one the log holds at its sequence").isLessThanOrEqualTo(40);
    }

    @Test
    void aHeldConfirmIsTakenOnce() {
        PublishConfirm confirm = () -> { };
        QueueEntry entry = QueueEntry.of(1, null, 0, 0, Long.MAX_VALUE, confirm, false, false);
        assertThat(entry.takeConfirm()).isSameAs(confirm);
        assertThat(entry.takeConfirm()).as("run or refused once").isNull();
        assertThat(entry.expiresAt()).isEqualTo(Long.MAX_VALUE);
        assertThat(QueueEntry.of(1, null, 0, 0, Long.MAX_VALUE, null, false, false).takeConfirm()).isNull();
    }

    @Test
    void anEntryKeepsItsExpiry() {
        assertThat(QueueEntry.of(1, null, 0, 0, 1_000, null, false, false).expiresAt()).isEqualTo(1_000);
        assertThat(QueueEntry.of(1, null, 0, 0, Long.MAX_VALUE, null, false, false).expiresAt())
            .isEqualTo(Long.MAX_VALUE);
        assertThat(QueueEntry.of(1, null, 0, 0, Long.MIN_VALUE, null, false, false).expiresAt())
            .isEqualTo(Long.MIN_VALUE);
    }

    @Test
    void onlyALoggedEntryKeepsALocation() {
        QueueEntry logged = QueueEntry.of(1, null, 0, 0, Long.MAX_VALUE, null, true, false);
        assertThat(logged.location()).as("until written").isEqualTo(-1);
        logged.location(1L << 40);
        assertThat(logged.location()).isEqualTo(1L << 40);
        QueueEntry transientOne = QueueEntry.of(2, null, 0, 0, Long.MAX_VALUE, null, false, false);
        transientOne.location(-1);
        assertThat(transientOne.location()).isEqualTo(-1);
        assertThatThrownBy(() -> transientOne.location(0)).isInstanceOf(IllegalStateException.class);

        QueueEntry atSequence = QueueEntry.of(7, null, 0, 0, Long.MAX_VALUE, null, true, true);
        assertThat(atSequence.location()).as("its sequence, kept nowhere else").isEqualTo(7);
        atSequence.location(7);
        assertThatThrownBy(() -> atSequence.location(8)).isInstanceOf(IllegalStateException.class);
        atSequence.location(-1);
        assertThat(atSequence.location()).as("no longer logged").isEqualTo(-1);
        assertThat(QueueEntry.of(7, null, 0, 0, 1_000, null, true, true).location())
            .as("one that expires keeps its location apart, set when written").isEqualTo(-1);
    }

    @Test
    void theDeliveryCountStopsAtItsLargestValue() {
        QueueEntry entry = QueueEntry.of(1, null, 0, 0, Long.MAX_VALUE, null, false, false);
        entry.failedDelivery();
        assertThat(entry.deliveryCount).isEqualTo(1);
        entry.deliveryCount(1L << 40); // as a store may hold it
        assertThat(entry.deliveryCount).isEqualTo(Integer.MAX_VALUE);
        entry.failedDelivery();
        assertThat(entry.deliveryCount).isEqualTo(Integer.MAX_VALUE);
    }
}
