package io.skiffmq.core.queue;

import static org.assertj.core.api.Assertions.assertThat;

import io.skiffmq.codec.testing.Allocations;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** {@link Handoff}: batches in order, each of bounded size, each followed by its {@code batchEnd}. */
class HandoffTest {
    /** An owner whose tasks wait until the test runs them, one at a time. */
    private static final class QueuedOwner implements QueueExecutor {
        final ArrayDeque<Runnable> tasks = new ArrayDeque<>();

        @Override
        public boolean inExecutor() {
            return true;
        }

        @Override
        public void execute(Runnable task) {
            tasks.add(task);
        }
    }

    @Test
    void aLongBurstIsTakenInBoundedBatchesInOrderWithOneTaskEach() {
        QueuedOwner owner = new QueuedOwner();
        List<Integer> taken = new ArrayList<>();
        List<Integer> batchEnds = new ArrayList<>();
        Handoff<Integer> handoff = new Handoff<>(owner, taken::add, () -> batchEnds.add(taken.size()));
        int total = 2 * Handoff.BATCH_LIMIT + 10;
        for (int i = 0; i < total; i++) {
            handoff.offer(i);
        }
        assertThat(owner.tasks).as("one task for the burst").hasSize(1);
        owner.tasks.poll().run();
        assertThat(taken).hasSize(Handoff.BATCH_LIMIT);
        assertThat(owner.tasks).as("the rest behind the owner's other tasks").hasSize(1);
        while (!owner.tasks.isEmpty()) {
            owner.tasks.poll().run();
        }
        assertThat(batchEnds).containsExactly(Handoff.BATCH_LIMIT, 2 * Handoff.BATCH_LIMIT, total);
        for (int i = 0; i < total; i++) {
            assertThat(taken.get(i)).isEqualTo(i);
        }
    }

    @Test
    void aSteadyFlowReusesItsChunks() throws Exception {
        QueuedOwner owner = new QueuedOwner();
        long[] taken = {0};
        Handoff<Object> handoff = new Handoff<>(owner, item -> taken[0]++, null);
        Object item = new Object();
        // bursts of 100 items, each drained before the next: a queue that dropped its drained chunks would make a
        // 64-slot chunk (280 B) per 64 items, about 440 B a burst
        long perBurst = Allocations.perCall(2_000, () -> {
            for (int i = 0; i < 100; i++) {
                handoff.offer(item);
            }
            while (!owner.tasks.isEmpty()) {
                owner.tasks.poll().run();
            }
            return null;
        });
        assertThat(perBurst).isLessThan(64);
        assertThat(taken[0]).isEqualTo(2 * 2_000 * 100);
    }
}
