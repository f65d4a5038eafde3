package io.skiffmq.server.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/**
 * A replica's entries ({@link ReplicaEntries}) hold exactly what a sorted map of them would, in the same order,
 * through appends, settles mostly near the head and anywhere else, returns (replacing an entry), puts below the last
 * (an adoption's parts), and the compactions and growth they cause.
 */
class ReplicaEntriesTest {
    private static QueueReplica.Entry entry(long sequence, long deliveryCount) {
        return QueueReplica.Entry.of(sequence, new byte[] {(byte) sequence}, deliveryCount, 0, -1, null);
    }

    @Test
    void itHoldsWhatASortedMapWouldThroughEveryKindOfChange() {
        Random random = new Random(28);
        for (int round = 0; round < 20; round++) {
            ReplicaEntries entries = new ReplicaEntries();
            TreeMap<Long, QueueReplica.Entry> model = new TreeMap<>();
            long next = 1 + random.nextInt(1000);
            for (int step = 0; step < 20_000; step++) {
                int op = random.nextInt(100);
                if (op < 45) {
                    QueueReplica.Entry e = entry(next, 0);
                    next += 1 + (random.nextInt(10) == 0 ? random.nextInt(50) : 0);
                    entries.put(e);
                    model.put(e.sequence(), e);
                } else if (op < 75 && !model.isEmpty()) {
                    long settled = random.nextInt(4) > 0 ? model.firstKey() : pick(model, random);
                    entries.remove(settled);
                    model.remove(settled);
                } else if (op < 85 && !model.isEmpty()) {
                    long returned = pick(model, random);
                    QueueReplica.Entry e = entry(returned, model.get(returned).deliveryCount() + 1);
                    entries.put(e);
                    model.put(returned, e);
                } else if (op < 90 && next > 2) {
                    long below = 1 + random.nextInt((int) Math.min(Integer.MAX_VALUE, next - 1));
                    QueueReplica.Entry e = entry(below, 7);
                    entries.put(e);
                    model.put(below, e);
                } else {
                    long asked = random.nextInt((int) Math.min(Integer.MAX_VALUE, next + 5));
                    assertThat(entries.get(asked)).isSameAs(model.get(asked));
                    entries.remove(-asked - 1); // never held: nothing changes
                }
                if (step % 997 == 0) {
                    assertSame(entries, model);
                }
            }
            assertSame(entries, model);
            while (!model.isEmpty()) {
                long settled = model.lastKey();
                entries.remove(settled);
                model.remove(settled);
            }
            assertSame(entries, model);
        }
    }

    private static long pick(TreeMap<Long, QueueReplica.Entry> model, Random random) {
        Long key = model.ceilingKey(model.firstKey() + random.nextInt((int) Math.min(Integer.MAX_VALUE,
            model.lastKey() - model.firstKey() + 1)));
        return key == null ? model.lastKey() : key;
    }

    private static void assertSame(ReplicaEntries entries, TreeMap<Long, QueueReplica.Entry> model) {
        assertThat(entries.size()).isEqualTo(model.size());
        List<QueueReplica.Entry> seen = new ArrayList<>();
        entries.forEach(seen::add);
        assertThat(seen).containsExactlyElementsOf(model.values());
        assertThat(entries.toArray()).containsExactlyElementsOf(model.values());
    }
}
