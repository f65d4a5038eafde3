package io.skiffmq.core.stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.BitSet;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** A stream consumer's unsettled tags: ranges settled in any order count each tag once, however wide the window. */
class UnsettledTagsTest {
    @Test
    void settlingARangeCountsTheTagsThatWereUnsettled() {
        UnsettledTags tags = new UnsettledTags();
        for (long t = 0; t < 10; t++) {
            tags.add(t);
        }
        assertThat(tags.remove(3, 3)).isEqualTo(1);
        assertThat(tags.remove(2, 5)).as("3 was settled already").isEqualTo(3);
        assertThat(tags.remove(8, 20)).as("tags never handed out are skipped").isEqualTo(2);
        assertThat(tags.count()).isEqualTo(4);
        assertThat(tags.clear()).isEqualTo(4);
        assertThat(tags.count()).isZero();
        tags.add(10);
        assertThat(tags.remove(0, 10)).isEqualTo(1);
    }

    @Test
    void anOldTagLeftUnsettledKeepsTheWindowOpenAsItGrows() {
        UnsettledTags tags = new UnsettledTags();
        for (long t = 0; t < 5_000; t++) {
            tags.add(t);
            if (t > 0) {
                assertThat(tags.remove(t, t)).isEqualTo(1);
            }
        }
        assertThat(tags.count()).isEqualTo(1);
        assertThat(tags.remove(0, 0)).isEqualTo(1);
        assertThat(tags.count()).isZero();
    }

    @Test
    void tagsComeInOrder() {
        UnsettledTags tags = new UnsettledTags();
        tags.add(0);
        assertThatThrownBy(() -> tags.add(2)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void randomSettlementsAgreeWithABitSet() {
        Random random = new Random(7);
        UnsettledTags tags = new UnsettledTags();
        BitSet model = new BitSet();
        long next = 0;
        for (int step = 0; step < 20_000; step++) {
            if (random.nextInt(3) > 0) {
                tags.add(next);
                model.set((int) next);
                next++;
            } else if (next > 0) {
                long first = Math.max(0, next - 1 - random.nextInt(300));
                long last = first + random.nextInt(40);
                int expected = model.get((int) first, (int) Math.min(last, next - 1) + 1).cardinality();
                model.clear((int) first, (int) Math.min(last, next - 1) + 1);
                assertThat(tags.remove(first, last)).isEqualTo(expected);
            }
            assertThat(tags.count()).isEqualTo(model.cardinality());
        }
    }
}
