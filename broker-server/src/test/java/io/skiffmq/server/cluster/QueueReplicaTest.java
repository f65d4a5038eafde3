package io.skiffmq.server.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.skiffmq.codec.testing.Allocations;
import io.skiffmq.core.queue.DeadLetters;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/**
 * A replica ({@link QueueReplica}) keeps a message as published as its bytes in a slab and no object of its own; every
 * message's bytes and counts read back as applied, and from a snapshot as written, through settles anywhere,
 * returns, replacements and the slabs' compactions; what {@link QueueReplica#held} returned stays as it was while the
 * replica goes on; and the slabs stay within twice the live bytes and some slack.
 */
class QueueReplicaTest {
    private static final int ROUNDS = 20_000;
    private static final int WINDOW = 1_000;
    private static final byte[] STORED = "twenty bytes stored.".getBytes();

    /** An enqueue's fields after the key, with {@code stored}: sequence, counts, expiry, then the stored form. */
    private static ByteBuffer enqueue(long sequence, long deliveryCount, long expiresAt, byte[] stored) {
        return ByteBuffer.allocate(32 + stored.length).putLong(sequence).putLong(deliveryCount).putLong(0)
            .putLong(expiresAt).put(stored).flip();
    }

    private static ByteBuffer sequence(long sequence) {
        return ByteBuffer.allocate(8).putLong(0, sequence);
    }

    @Test
    void aMessageAsPublishedCostsItsBytesAndALengthAndNoObject() throws Exception {
        QueueReplica replica = new QueueReplica();
        ByteBuffer enqueue = enqueue(0, 0, Long.MAX_VALUE, STORED);
        ByteBuffer settle = sequence(0);
        long[] next = {1};
        Allocations.Work step = () -> {
            long sequence = next[0]++;
            enqueue.putLong(0, sequence).clear();
            replica.apply(QueueCommands.ENQUEUE, enqueue);
            if (sequence > WINDOW) {
                settle.putLong(0, sequence - WINDOW).clear();
                replica.apply(QueueCommands.SETTLE, settle);
            }
            return null;
        };
        // an entry object and an array per message, as before, would be 24 + 40 bytes
        assertThat(Allocations.perCall(ROUNDS, step)).isLessThanOrEqualTo(STORED.length + 4 + 8);
        assertThat(replica.size()).isEqualTo(WINDOW);
    }

    @Test
    void eachFormReadsBackFromASnapshotAsWritten() throws Exception {
        QueueReplica replica = new QueueReplica();
        for (long sequence = 1; sequence <= 5; sequence++) {
            byte[] stored = ("message " + sequence).getBytes();
            replica.apply(QueueCommands.ENQUEUE, enqueue(sequence, 0, sequence == 4 ? 1_000 : Long.MAX_VALUE, stored));
        }
        replica.apply(QueueCommands.RETURN, ByteBuffer.allocate(24).putLong(2).putLong(3).putLong(0).flip());
        replica.apply(QueueCommands.RETURN, ByteBuffer.allocate(24).putLong(3).putLong(0).putLong(2).flip());
        replica.apply(QueueCommands.DEAD_LETTERING,
            ByteBuffer.allocate(9).putLong(5).put((byte) DeadLetters.Reason.REJECTED.ordinal()).flip());

        HeldMessages read = QueueReplica.read(new DataInputStream(new ByteArrayInputStream(written(replica.held()))),
            5).held();
        long never = Long.MAX_VALUE;
        assertThat(described(read)).isEqualTo(described(replica.held())).containsExactly(
            describe(1, 0, 0, never, null, "message 1".getBytes()),
            describe(2, 3, 0, never, null, "message 2".getBytes()),
            describe(3, 0, 2, never, null, "message 3".getBytes()),
            describe(4, 0, 0, 1_000, null, "message 4".getBytes()),
            describe(5, 0, 0, never, DeadLetters.Reason.REJECTED, "message 5".getBytes()));
    }

    /** What the model holds of a message. */
    private record Held(long deliveryCount, byte[] stored) {
    }

    @Test
    void itHoldsWhatAMapWouldAndWhatItGaveAwayStaysAsItWas() throws Exception {
        Random random = new Random(28);
        QueueReplica replica = new QueueReplica();
        TreeMap<Long, Held> model = new TreeMap<>();
        List<Map.Entry<HeldMessages, List<String>>> taken = new ArrayList<>();
        long next = 1;
        for (int step = 0; step < 30_000; step++) {
            int op = random.nextInt(100);
            if (op < 48) {
                int length = random.nextInt(200) == 0 ? 70_000 + random.nextInt(80_000) : random.nextInt(300);
                byte[] stored = new byte[length];
                random.nextBytes(stored);
                long sequence = next++;
                replica.apply(QueueCommands.ENQUEUE, enqueue(sequence, 0, Long.MAX_VALUE, stored));
                model.put(sequence, new Held(0, stored));
            } else if (op < 95 && !model.isEmpty()) {
                // settles at the head, and now and then anywhere: slabs left sparse, then compacted
                Long anywhere = model.ceilingKey(model.firstKey() + random.nextInt((int) (next - model.firstKey())));
                long settled = random.nextInt(3) > 0 || anywhere == null ? model.firstKey() : anywhere;
                replica.apply(QueueCommands.SETTLE, sequence(settled));
                model.remove(settled);
            } else if (op < 98 && !model.isEmpty()) {
                long returned = model.lastKey();
                replica.apply(QueueCommands.RETURN, ByteBuffer.allocate(24).putLong(returned).putLong(1).putLong(0)
                    .flip());
                model.put(returned, new Held(1, model.get(returned).stored()));
            } else if (op < 99) {
                taken.add(Map.entry(replica.held(), shortened(described(model))));
            } else if (!model.isEmpty()) {
                // an adoption's part again: the same message in place of itself
                long again = model.firstKey();
                HeldMessages held = replica.held();
                ByteArrayOutputStream bytes = new ByteArrayOutputStream();
                try (DataOutputStream out = new DataOutputStream(bytes)) {
                    out.writeInt(1);
                    held.write(0, out);
                }
                replica.marks(0, 7, false);
                replica.adopt(7, new DataInputStream(new ByteArrayInputStream(bytes.toByteArray())));
                replica.marks(0, 0, false);
                assertThat(described(replica.held()).get(0)).isEqualTo(described(model).get(0));
            }
            // a settle compacts past twice the live bytes and four slabs; an enqueue since may have added a slab
            assertThat(replica.slabBytes()).as("slab bytes at step " + step)
                .isLessThanOrEqualTo(2 * live(model) + 5L * ReplicaSlabs.MAX_SLAB);
            if (step % 3_001 == 0) {
                assertThat(shortened(described(replica.held()))).isEqualTo(shortened(described(model)));
            }
        }
        assertThat(shortened(described(replica.held()))).isEqualTo(shortened(described(model)));
        for (Map.Entry<HeldMessages, List<String>> held : taken) {
            assertThat(shortened(described(held.getKey()))).as("what was taken, after all that changed since")
                .isEqualTo(held.getValue());
        }
        assertThat(taken).hasSizeGreaterThan(100);
    }

    /** The live bytes of the model's messages: each stored form and its length. */
    private static long live(TreeMap<Long, Held> model) {
        return model.values().stream().mapToLong(held -> 4 + held.stored().length).sum();
    }

    private static List<String> described(TreeMap<Long, Held> model) {
        return model.entrySet().stream().map(held -> describe(held.getKey(), held.getValue().deliveryCount(), 0,
            Long.MAX_VALUE, null, held.getValue().stored())).toList();
    }

    private static String describe(long sequence, long deliveryCount, long returns, long expiresAt,
            DeadLetters.Reason reason, byte[] stored) {
        StringBuilder hex = new StringBuilder();
        for (byte b : stored) {
            hex.append(Character.forDigit((b >> 4) & 0xf, 16)).append(Character.forDigit(b & 0xf, 16));
        }
        return sequence + " " + deliveryCount + " " + returns + " " + expiresAt + " " + reason + " " + hex;
    }

    /** Long descriptions (large messages) cut, with their hash. */
    private static List<String> shortened(List<String> described) {
        return described.stream().map(s -> s.length() > 200 ? s.substring(0, 100) + s.hashCode() : s).toList();
    }

    private static List<String> described(HeldMessages held) throws IOException {
        DataInputStream in = new DataInputStream(new ByteArrayInputStream(written(held)));
        List<String> out = new ArrayList<>();
        for (int i = 0; i < held.size(); i++) {
            long sequence = in.readLong();
            long deliveryCount = in.readLong();
            long returns = in.readLong();
            long expiresAt = in.readLong();
            int reason = in.readByte();
            byte[] stored = new byte[in.readInt()];
            in.readFully(stored);
            assertThat(stored.length).isEqualTo(held.storedLength(i));
            out.add(describe(sequence, deliveryCount, returns, expiresAt,
                reason < 0 ? null : DeadLetters.Reason.values()[reason], stored));
        }
        assertThat(in.read()).isEqualTo(-1);
        return out;
    }

    private static byte[] written(HeldMessages held) throws IOException {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (DataOutputStream out = new DataOutputStream(bytes)) {
            for (int i = 0; i < held.size(); i++) {
                held.write(i, out);
            }
        }
        return bytes.toByteArray();
    }
}
