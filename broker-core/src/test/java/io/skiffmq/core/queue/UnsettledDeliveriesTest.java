package io.skiffmq.core.queue;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class UnsettledDeliveriesTest {
    private static QueueEntry entry(long sequence) {
        return QueueEntry.of(sequence, null, 0, 0, Long.MAX_VALUE, null, false, false);
    }

    private static List<Long> sequences(UnsettledDeliveries deliveries) {
        List<Long> seen = new ArrayList<>();
        deliveries.forEach(e -> seen.add(e.sequence));
        return seen;
    }

    @Test
    void settlesSinglesAndRangesAcrossHolesAndGrowth() {
        UnsettledDeliveries d = new UnsettledDeliveries();
        for (long tag = 0; tag < 100; tag++) {
            d.add(tag, entry(tag * 10));
        }
        assertThat(d.size()).isEqualTo(100);
        assertThat(d.remove(5).sequence).isEqualTo(50);
        assertThat(d.remove(5)).as("settled twice").isNull();
        assertThat(d.remove(100)).as("never delivered").isNull();

        List<Long> settled = new ArrayList<>();
        d.removeRange(3, 7, e -> settled.add(e.sequence));
        assertThat(settled).containsExactly(30L, 40L, 60L, 70L);
        d.removeRange(0, 2, e -> settled.add(e.sequence));
        assertThat(d.size()).isEqualTo(100 - 8);
        assertThat(sequences(d)).first().isEqualTo(80L);

        // the ring wraps: add after the head moved
        for (long tag = 100; tag < 140; tag++) {
            d.add(tag, entry(tag * 10));
        }
        List<Long> rest = new ArrayList<>();
        d.removeAll(e -> rest.add(e.sequence));
        assertThat(rest).hasSize(92 + 40).startsWith(80L, 90L).endsWith(1380L, 1390L).isSorted();
        assertThat(d.size()).isZero();
    }

    @Test
    void refusesTagsOutOfOrder() {
        UnsettledDeliveries d = new UnsettledDeliveries();
        d.add(7, entry(1));
        assertThatThrownBy(() -> d.add(9, entry(2))).isInstanceOf(IllegalArgumentException.class);
        d.add(8, entry(2));
        assertThat(d.remove(7).sequence).isEqualTo(1);
        assertThat(d.remove(8).sequence).isEqualTo(2);
        // empty again: the next delivery may carry any later tag
        d.add(20, entry(3));
        assertThat(d.remove(20).sequence).isEqualTo(3);
    }
}
