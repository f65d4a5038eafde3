package io.skiffmq.store.stream;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * What a filtering consumer asks for: the filter values it wants ({@code filter.N} subscription properties,
 * {@code x-stream-filter}) and whether it also takes messages without a value ({@code match-unfiltered}). A
 * {@link StreamReader} given one skips the chunks whose Bloom filter rules them out; a chunk without a Bloom
 * filter holds only unfiltered messages, so it is taken only with {@code matchUnfiltered}. The filter has false
 * positives: the consumer filters the messages again. Immutable; any thread.
 */
public final class StreamFilter {
    private final long[] hashes;
    private final boolean matchUnfiltered;

    private StreamFilter(long[] hashes, boolean matchUnfiltered) {
        this.hashes = hashes;
        this.matchUnfiltered = matchUnfiltered;
    }

    /**
     * @param values at least one filter value; an empty one counts as "no value"
     * @param matchUnfiltered also take chunks holding messages without a filter value
     */
    public static StreamFilter of(List<String> values, boolean matchUnfiltered) {
        if (values.isEmpty()) {
            throw new IllegalArgumentException("a stream filter needs at least one value");
        }
        boolean unfiltered = matchUnfiltered;
        long[] hashes = new long[values.size()];
        int n = 0;
        for (String value : values) {
            byte[] bytes = value.getBytes(StandardCharsets.UTF_8);
            if (bytes.length == 0) {
                unfiltered = true;
            } else {
                hashes[n++] = Bloom.hash(bytes);
            }
        }
        return new StreamFilter(java.util.Arrays.copyOf(hashes, n), unfiltered);
    }

    public boolean matchUnfiltered() {
        return matchUnfiltered;
    }

    /** True when a chunk with this Bloom filter ({@code size} bytes at {@code index}, 0 for none) may match. */
    boolean matches(ByteBuffer chunk, int index, int size) {
        if (size == 0) {
            return matchUnfiltered;
        }
        if (matchUnfiltered && Bloom.isSet(chunk, index, 0)) {
            return true;
        }
        for (long hash : hashes) {
            if (Bloom.mayContain(chunk, index, size, hash)) {
                return true;
            }
        }
        return false;
    }
}
