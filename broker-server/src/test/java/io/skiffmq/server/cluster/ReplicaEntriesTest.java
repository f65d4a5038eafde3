package io.skiffmq.server.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/**
 * A replica's entries ({@link ReplicaEntries}) hold exactly what a sorted map of them would, in the same order,
 * through appends, settles mostly near the head and anywhere else, returns (new counts), puts below the last (an
 * adoption's parts), relocations, and the compactions and growth they cause.
 */
class ReplicaEntriesTest {
    /** What the model holds of a message: where it is and its counts. */
    private record Entry(long sequence, long location, QueueReplica.Counts counts) {
    }

    private static Entry entry(long sequence, long location, long deliveryCount) {
        return new Entry(sequence, location, QueueReplica.Counts.of(deliveryCount, 0, Long.MAX_VALUE, null));
    }

    @Test
    void itHoldsWhatASortedMapWouldThroughEveryKindOfChange() {
        Random random = new Random(28);
        for (int round = 0; round < 20; round++) {
            ReplicaEntries entries = new ReplicaEntries();
            TreeMap<Long, Entry> model = new TreeMap<>();
            long next = 1 + random.nextInt(1000);
            long location = 0;
            for (int step = 0; step < 20_000; step++) {
                int op = random.nextInt(100);
                if (op < 45) {
                    Entry e = entry(next, location++, random.nextInt(20) == 0 ? 1 : 0);
                    next += 1 + (random.nextInt(10) == 0 ? random.nextInt(50) : 0);
                    assertThat(entries.put(e.sequence(), e.location(), e.counts())).isEqualTo(ReplicaSlabs.NONE);
                    model.put(e.sequence(), e);
                } else if (op < 75 && !model.isEmpty()) {
                    long settled = random.nextInt(4) > 0 ? model.firstKey() : pick(model, random);
                    assertThat(entries.remove(settled)).isEqualTo(model.remove(settled).location());
                } else if (op < 85 && !model.isEmpty()) {
                    long returned = pick(model, random);
                    Entry was = model.get(returned);
                    Entry e = entry(returned, was.location(),
                        QueueReplica.Counts.deliveryCount(was.counts()) + 1);
                    entries.counts(entries.slot(returned), e.counts());
                    model.put(returned, e);
                } else if (op < 88 && next > 2) {
                    long below = 1 + random.nextInt((int) Math.min(Integer.MAX_VALUE, next - 1));
                    Entry e = entry(below, location++, 7);
                    Entry was = model.put(below, e);
                    assertThat(entries.put(below, e.location(), e.counts()))
                        .isEqualTo(was == null ? ReplicaSlabs.NONE : was.location());
                } else if (op < 90) {
                    long shift = random.nextInt(1000);
                    entries.relocate(at -> at + shift);
                    model.replaceAll((sequence, e) -> new Entry(sequence, e.location() + shift, e.counts()));
                } else {
                    long asked = random.nextInt((int) Math.min(Integer.MAX_VALUE, next + 5));
                    Entry held = model.get(asked);
                    int slot = entries.slot(asked);
                    assertThat(slot >= 0).isEqualTo(held != null);
                    if (held != null) {
                        assertThat(entries.location(slot)).isEqualTo(held.location());
                        assertThat(entries.counts(slot)).isSameAs(held.counts());
                    }
                    assertThat(entries.remove(-asked - 1)).isEqualTo(ReplicaSlabs.NONE); // never held
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

    @Test
    void appendsAloneGrowTheArraysWholeFromAnySize() {
        for (int capacity : new int[] {0, 5, 1000}) {
            ReplicaEntries entries = new ReplicaEntries(capacity);
            TreeMap<Long, Entry> model = new TreeMap<>();
            for (long sequence = 1; sequence <= 10_000; sequence++) {
                Entry e = entry(sequence * 2, sequence, sequence % 100 == 0 ? 1 : 0);
                entries.put(e.sequence(), e.location(), e.counts());
                model.put(e.sequence(), e);
                if (sequence % 2_000 == 0) { // one below the last, put in its place
                    Entry below = entry(sequence * 2 - 1, -sequence, 3);
                    entries.put(below.sequence(), below.location(), below.counts());
                    model.put(below.sequence(), below);
                }
            }
            assertSame(entries, model);
            entries.remove(2);
            model.remove(2L);
            for (long sequence = 20_001; sequence <= 30_000; sequence++) {
                Entry e = entry(sequence, sequence, 0);
                entries.put(e.sequence(), e.location(), e.counts());
                model.put(e.sequence(), e);
            }
            assertSame(entries, model);
        }
    }

    private static long pick(TreeMap<Long, Entry> model, Random random) {
        Long key = model.ceilingKey(model.firstKey() + random.nextInt((int) Math.min(Integer.MAX_VALUE,
            model.lastKey() - model.firstKey() + 1)));
        return key == null ? model.lastKey() : key;
    }

    private static void assertSame(ReplicaEntries entries, TreeMap<Long, Entry> model) {
        assertThat(entries.size()).isEqualTo(model.size());
        HeldMessages held = entries.held(new byte[0][]);
        List<Long> sequences = new ArrayList<>();
        List<Long> counts = new ArrayList<>();
        for (int i = 0; i < held.size(); i++) {
            sequences.add(held.sequence(i));
            counts.add(held.deliveryCount(i));
        }
        assertThat(sequences).containsExactlyElementsOf(model.keySet());
        assertThat(counts).containsExactlyElementsOf(
            model.values().stream().map(e -> QueueReplica.Counts.deliveryCount(e.counts())).toList());
        for (Entry e : model.values()) {
            assertThat(entries.location(entries.slot(e.sequence()))).isEqualTo(e.location());
        }
    }
}
