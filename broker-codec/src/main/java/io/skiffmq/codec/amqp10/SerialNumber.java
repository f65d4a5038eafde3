package io.skiffmq.codec.amqp10;

/**
 * RFC 1982 serial-number arithmetic on 32 bits [2.6.7], for every AMQP sequence number (delivery-id, transfer-id,
 * delivery-count). Values are held in the low 32 bits of a {@code long}; all results are masked back to them.
 */
public final class SerialNumber {
    private static final long MASK = 0xffffffffL;

    private SerialNumber() {
    }

    /** {@code a + n}, wrapping at 2^32. */
    public static long add(long a, long n) {
        return (a + n) & MASK;
    }

    /** {@code a - b} as a signed distance in (-2^31, 2^31]: positive when {@code a} follows {@code b}. */
    public static long diff(long a, long b) {
        return (int) ((a - b) & MASK);
    }

    /** True when {@code a} precedes {@code b} (undefined when they are 2^31 apart, as RFC 1982 says). */
    public static boolean lessThan(long a, long b) {
        return diff(a, b) < 0;
    }
}
