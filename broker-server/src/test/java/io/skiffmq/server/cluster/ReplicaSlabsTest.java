package io.skiffmq.server.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/**
 * A replica's slabs ({@link ReplicaSlabs}), small here so that they compact often: every message reads back as put
 * through settles at the head and anywhere, replacements and messages larger than a slab; the slabs stay within twice
 * the live bytes and four slabs (which they would not without compactions, as half the settles are anywhere); and
 * what was taken ({@link ReplicaEntries#held}) reads as it was after everything since.
 */
class ReplicaSlabsTest {
    private static final int MIN = 64;
    private static final int MAX = 1024;

    @Test
    void messagesReadBackAsPutThroughCompactionsAndWhatWasTakenStays() throws Exception {
        Random random = new Random(28);
        ReplicaSlabs slabs = new ReplicaSlabs(MIN, MAX);
        ReplicaEntries entries = new ReplicaEntries();
        TreeMap<Long, byte[]> model = new TreeMap<>();
        List<Map.Entry<HeldMessages, TreeMap<Long, byte[]>>> taken = new ArrayList<>();
        long next = 1;
        long mostAllocated = 0;
        for (int round = 0; round < 40; round++) {
            // a fill, then most of it settled anywhere but at the head, then a mix of everything
            for (int i = random.nextInt(3_000); i > 0; i--) {
                next = put(random, slabs, entries, model, next);
            }
            taken.add(Map.entry(entries.held(slabs.arrays()), new TreeMap<>(model)));
            mostAllocated = Math.max(mostAllocated, slabs.allocatedBytes());
            for (Long sequence : List.copyOf(model.tailMap(model.isEmpty() ? 0 : model.firstKey() + 1).keySet())) {
                if (random.nextInt(5) > 0) {
                    settle(slabs, entries, model, sequence);
                }
            }
            taken.add(Map.entry(entries.held(slabs.arrays()), new TreeMap<>(model)));
            for (int step = 0; step < 2_000; step++) {
                int op = random.nextInt(100);
                if (op < 50) {
                    next = put(random, slabs, entries, model, next);
                } else if (op < 97 && !model.isEmpty()) {
                    Long anywhere = model.ceilingKey(model.firstKey()
                        + random.nextInt((int) (next - model.firstKey())));
                    settle(slabs, entries, model, random.nextBoolean() || anywhere == null ? model.firstKey()
                        : anywhere);
                } else if (op < 99 && !model.isEmpty()) {
                    // the same message put again in its place (an adoption's part sent twice)
                    long again = model.lastKey();
                    byte[] bytes = model.get(again);
                    slabs.free(entries.put(again, slabs.put(ByteBuffer.wrap(bytes), bytes.length), null));
                } else {
                    taken.add(Map.entry(entries.held(slabs.arrays()), new TreeMap<>(model)));
                }
            }
            assertHolds(entries.held(slabs.arrays()), model);
        }
        for (Map.Entry<HeldMessages, TreeMap<Long, byte[]>> held : taken) {
            assertHolds(held.getKey(), held.getValue());
        }
        assertThat(taken).hasSizeGreaterThan(500);
        assertThat(mostAllocated).as("enough held for compactions to matter").isGreaterThan(20L * MAX);

        while (!model.isEmpty()) {
            slabs.free(entries.remove(model.pollFirstEntry().getKey()));
            slabs.reclaim(entries);
        }
        assertThat(slabs.liveBytes()).isZero();
        assertThat(slabs.allocatedBytes()).as("only the slab being filled is left").isLessThanOrEqualTo(MAX);
    }

    @Test
    void aSmallQueueKeepsSmallSlabs() {
        ReplicaSlabs slabs = new ReplicaSlabs();
        ReplicaEntries entries = new ReplicaEntries();
        byte[] bytes = new byte[100];
        for (long sequence = 1; sequence <= 100_000; sequence++) {
            entries.put(sequence, slabs.put(ByteBuffer.wrap(bytes), bytes.length), null);
            if (sequence > 10) {
                slabs.free(entries.remove(sequence - 10));
                slabs.reclaim(entries);
            }
        }
        assertThat(slabs.allocatedBytes()).isLessThanOrEqualTo(2L * ReplicaSlabs.MIN_SLAB);
    }

    private static long put(Random random, ReplicaSlabs slabs, ReplicaEntries entries, TreeMap<Long, byte[]> model,
            long sequence) {
        byte[] bytes = new byte[random.nextInt(20) == 0 ? MAX / 4 + random.nextInt(2 * MAX) : random.nextInt(60)];
        random.nextBytes(bytes);
        assertThat(entries.put(sequence, slabs.put(ByteBuffer.wrap(bytes), bytes.length), null))
            .isEqualTo(ReplicaSlabs.NONE);
        model.put(sequence, bytes);
        assertBounded(slabs, model);
        return sequence + 1;
    }

    private static void settle(ReplicaSlabs slabs, ReplicaEntries entries, TreeMap<Long, byte[]> model,
            long sequence) {
        slabs.free(entries.remove(sequence));
        slabs.reclaim(entries);
        model.remove(sequence);
        assertBounded(slabs, model);
    }

    /** A settle compacts past twice the live bytes and four slabs; a put since may have added one. */
    private static void assertBounded(ReplicaSlabs slabs, TreeMap<Long, byte[]> model) {
        long live = live(model);
        assertThat(slabs.liveBytes()).isEqualTo(live);
        assertThat(slabs.allocatedBytes()).isLessThanOrEqualTo(2 * live + 5L * MAX);
    }

    private static long live(TreeMap<Long, byte[]> model) {
        return model.values().stream().mapToLong(bytes -> 4 + bytes.length).sum();
    }

    private static void assertHolds(HeldMessages held, TreeMap<Long, byte[]> model) throws IOException {
        assertThat(held.size()).isEqualTo(model.size());
        ByteArrayOutputStream written = new ByteArrayOutputStream();
        try (DataOutputStream out = new DataOutputStream(written)) {
            for (int i = 0; i < held.size(); i++) {
                held.write(i, out);
            }
        }
        DataInputStream in = new DataInputStream(new ByteArrayInputStream(written.toByteArray()));
        for (Map.Entry<Long, byte[]> message : model.entrySet()) {
            assertThat(in.readLong()).isEqualTo(message.getKey());
            in.skipBytes(25); // counts, expiry, mark
            byte[] bytes = new byte[in.readInt()];
            in.readFully(bytes);
            assertThat(Arrays.equals(bytes, message.getValue())).as("message " + message.getKey()).isTrue();
        }
    }
}
