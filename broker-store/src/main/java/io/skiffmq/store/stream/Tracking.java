package io.skiffmq.store.stream;

import io.netty.buffer.ByteBuf;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * What a stream tracks besides its messages, kept in the log itself as osiris keeps it ({@code osiris_tracking.erl}):
 * consumers' stored offsets (a name to an offset) and named producers' highest publishing ids (deduplication).
 *
 * <p>On disk, a tracking entry is {@code [u8 type][u8 id length][id][u64 value]} (osiris' "Tracking format"):
 *
 * <ul>
 *   <li>type 0, sequence: a producer's highest publishing id. In a user chunk's trailer and in a delta, the value is
 *       the id and the chunk is the one it arrived in; in a snapshot it is {@code [u64 chunk id][u64 id]}.</li>
 *   <li>type 1, offset: a consumer's stored offset.</li>
 * </ul>
 *
 * Where they go: a producer's ids ride in the trailer of the user chunk holding its messages, so deduplication
 * costs no chunk of its own; a stored offset is a {@link ChunkDescriptor#TYPE_TRACKING_DELTA} chunk; every
 * segment begins with a {@link ChunkDescriptor#TYPE_TRACKING_SNAPSHOT} of everything, so recovery reads from the
 * newest segment that has one. A delta or snapshot chunk holds one simple entry whose body is the entries.
 * A snapshot keeps, as osiris does, the {@value #MAX_PUBLISHERS} producers seen most recently and the offsets
 * not below the stream's first offset.
 *
 * <p>Threads: changed by the log's writer thread (and recovery before it); read from any thread.
 */
final class Tracking {
    static final int TYPE_SEQUENCE = 0;
    static final int TYPE_OFFSET = 1;
    /** An id's length is one byte. */
    static final int MAX_ID_LENGTH = 255;
    /** Producers a snapshot keeps (osiris' {@code max_sequences}). */
    static final int MAX_PUBLISHERS = 255;
    static final long NO_OFFSET = -1;

    private final ConcurrentHashMap<String, TrackedPublisher> publishers = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<String, Long> offsets = new ConcurrentHashMap<>();

    TrackedPublisher publisher(String reference) {
        return publishers.computeIfAbsent(reference, TrackedPublisher::new);
    }

    long sequence(String reference) {
        TrackedPublisher p = publishers.get(reference);
        return p == null ? 0 : p.sequence();
    }

    long offset(String name) {
        Long offset = offsets.get(name);
        return offset == null ? NO_OFFSET : offset;
    }

    void storeOffset(String name, long offset) {
        offsets.put(name, offset);
    }

    int publisherCount() {
        return publishers.size();
    }

    /** The stored offsets by consumer name, a copy. Any thread. */
    java.util.Map<String, Long> offsets() {
        return java.util.Map.copyOf(offsets);
    }

    /** The producers with a publishing id in the log. Any thread. */
    List<TrackedPublisher> sequences() {
        List<TrackedPublisher> all = new ArrayList<>();
        for (TrackedPublisher p : publishers.values()) {
            if (p.hasSequence()) {
                all.add(p);
            }
        }
        return all;
    }

    static byte[] id(String name) {
        byte[] id = name.getBytes(StandardCharsets.UTF_8);
        if (id.length == 0 || id.length > MAX_ID_LENGTH) {
            throw new IllegalArgumentException("a tracking name is 1 to " + MAX_ID_LENGTH + " UTF-8 bytes, not "
                + id.length);
        }
        return id;
    }

    static int sequenceEntryLength(TrackedPublisher p) {
        return 2 + p.id.length + 8;
    }

    static void writeEntry(ByteBuf out, int type, byte[] id, long value) {
        out.writeByte(type).writeByte(id.length).writeBytes(id).writeLong(value);
    }

    /**
     * Writes a snapshot of everything into {@code out}, dropping (here and in memory, as osiris does) the offsets
     * below {@code firstOffset} and all but the {@value #MAX_PUBLISHERS} producers seen most recently.
     */
    void writeSnapshot(ByteBuf out, long firstOffset) {
        offsets.values().removeIf(offset -> offset < firstOffset);
        if (publishers.size() > MAX_PUBLISHERS) {
            List<TrackedPublisher> all = new ArrayList<>(publishers.values());
            all.sort(Comparator.comparingLong((TrackedPublisher p) -> p.chunkId).reversed());
            for (TrackedPublisher old : all.subList(MAX_PUBLISHERS, all.size())) {
                publishers.remove(old.reference(), old);
            }
        }
        for (TrackedPublisher p : publishers.values()) {
            if (p.hasSequence()) {
                out.writeByte(TYPE_SEQUENCE).writeByte(p.id.length).writeBytes(p.id).writeLong(p.chunkId)
                    .writeLong(p.sequence());
            }
        }
        for (Map.Entry<String, Long> e : offsets.entrySet()) {
            writeEntry(out, TYPE_OFFSET, id(e.getKey()), e.getValue());
        }
    }

    /**
     * Checks that {@code length} bytes at {@code at} are whole tracking entries.
     *
     * @param snapshot sequences carry a chunk id too
     */
    static boolean valid(ByteBuffer b, int at, int length, boolean snapshot) {
        int end = at + length;
        while (at < end) {
            if (end - at < 2) {
                return false;
            }
            int type = b.get(at) & 0xff;
            int idLength = b.get(at + 1) & 0xff;
            int values = type == TYPE_SEQUENCE && snapshot ? 2 : 1;
            if ((type != TYPE_SEQUENCE && type != TYPE_OFFSET) || idLength == 0) {
                return false;
            }
            at += 2 + idLength + 8 * values;
            if (at > end) {
                return false;
            }
        }
        return true;
    }

    /**
     * Applies a trailer or a delta, already {@link #valid}.
     *
     * @param chunkId the chunk it is in: where its producers' ids were written
     */
    void applyDelta(ByteBuffer b, int at, int length, long chunkId) {
        int end = at + length;
        while (at < end) {
            int type = b.get(at);
            String name = name(b, at + 2, b.get(at + 1) & 0xff);
            at += 2 + (b.get(at + 1) & 0xff);
            long value = b.getLong(at);
            at += 8;
            if (type == TYPE_SEQUENCE) {
                publisher(name).written(value, chunkId);
            } else {
                offsets.put(name, value);
            }
        }
    }

    /** Replaces everything with a snapshot, already {@link #valid}. */
    void applySnapshot(ByteBuffer b, int at, int length) {
        publishers.clear();
        offsets.clear();
        int end = at + length;
        while (at < end) {
            int type = b.get(at);
            String name = name(b, at + 2, b.get(at + 1) & 0xff);
            at += 2 + (b.get(at + 1) & 0xff);
            if (type == TYPE_SEQUENCE) {
                publisher(name).written(b.getLong(at + 8), b.getLong(at));
                at += 16;
            } else {
                offsets.put(name, b.getLong(at));
                at += 8;
            }
        }
    }

    private static String name(ByteBuffer b, int at, int length) {
        byte[] bytes = new byte[length];
        b.get(at, bytes);
        return new String(bytes, StandardCharsets.UTF_8);
    }
}
