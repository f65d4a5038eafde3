package io.skiffmq.store.stream;

import io.netty.buffer.ByteBuf;
import java.nio.ByteBuffer;

/**
 * The Bloom filter of a chunk's filter values. Internal to the server (clients never read it: they get chunks
 * without it and filter again themselves), so the hash is ours, not osiris' {@code erlang:phash2}:
 *
 * <ul>
 *   <li>a value's hash is FNV-1a 64 over its UTF-8 bytes, then Murmur3's 64-bit finaliser to spread the bits;</li>
 *   <li>a value sets two bits, {@code 1 + (low 32 bits mod (bits - 1))} and {@code 1 + (high 32 bits mod (bits -
 *       1))}, where {@code bits} is 8 times the filter's size;</li>
 *   <li>bit 0 is reserved, as in osiris: set when the chunk also holds messages without a filter value;</li>
 *   <li>bit {@code n} is in byte {@code n / 8}, mask {@code 0x80 >>> (n % 8)} (osiris numbers bits the same way);</li>
 *   <li>a chunk where no message has a filter value has no filter at all (Bloom size 0), as in osiris.</li>
 * </ul>
 *
 * An empty filter value counts as no value (osiris hashes {@code <<>>} to bit 0). Stateless; any thread.
 */
final class Bloom {
    private static final long FNV_OFFSET = 0xcbf29ce484222325L;
    private static final long FNV_PRIME = 0x100000001b3L;

    private Bloom() {
    }

    static long hash(ByteBuf value, int index, int length) {
        long h = FNV_OFFSET;
        for (int i = index, end = index + length; i < end; i++) {
            h = (h ^ (value.getByte(i) & 0xff)) * FNV_PRIME;
        }
        return mix(h);
    }

    static long hash(byte[] value) {
        long h = FNV_OFFSET;
        for (byte b : value) {
            h = (h ^ (b & 0xff)) * FNV_PRIME;
        }
        return mix(h);
    }

    /** Murmur3's fmix64. */
    private static long mix(long h) {
        h ^= h >>> 33;
        h *= 0xff51afd7ed558ccdL;
        h ^= h >>> 33;
        h *= 0xc4ceb9fe1a85ec53L;
        h ^= h >>> 33;
        return h;
    }

    static int firstBit(long hash, int bits) {
        return 1 + (int) Long.remainderUnsigned(hash & 0xffff_ffffL, bits - 1);
    }

    static int secondBit(long hash, int bits) {
        return 1 + (int) Long.remainderUnsigned(hash >>> 32, bits - 1);
    }

    /** Sets a value's two bits in {@code filter} (of {@code size} bytes from {@code index}). */
    static void add(ByteBuf filter, int index, int size, long hash) {
        set(filter, index, firstBit(hash, size * 8));
        set(filter, index, secondBit(hash, size * 8));
    }

    static void set(ByteBuf filter, int index, int bit) {
        int at = index + (bit >>> 3);
        filter.setByte(at, filter.getByte(at) | (0x80 >>> (bit & 7)));
    }

    static boolean isSet(ByteBuffer filter, int index, int bit) {
        return (filter.get(index + (bit >>> 3)) & (0x80 >>> (bit & 7))) != 0;
    }

    /** True when the filter of {@code size} bytes at {@code index} may hold the value of {@code hash}. */
    static boolean mayContain(ByteBuffer filter, int index, int size, long hash) {
        int bits = size * 8;
        return isSet(filter, index, firstBit(hash, bits)) && isSet(filter, index, secondBit(hash, bits));
    }
}
