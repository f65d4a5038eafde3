package io.skiffmq.benchmarks;

import io.netty.buffer.ByteBuf;

/**
 * The bodies the load tool sends, and their checks. Stateless; the {@link Order} of one receiver is owned by the
 * thread that receives for it.
 *
 * <pre>
 * 0         8                    9                 12              size
 * | sentAt  | sender (8 bits)    | sequence (24)   | padding…      |
 * </pre>
 *
 * {@code sentAt} is the sender's {@link System#nanoTime()} (senders and receivers share one JVM); the padding byte
 * at index {@code i} is derived from the sender, the sequence and {@code i}, so a body cut, shifted or mixed with
 * another shows as damaged.
 */
final class LoadBody {
    /** Bytes every body starts with: the send time, then the sender and its sequence. */
    static final int HEADER = 12;
    /** Senders one run can tell apart: the id's top 8 bits. */
    static final int MAX_SENDERS = 256;
    private static final int SEQUENCE_BITS = 24;
    private static final int SEQUENCE_MASK = (1 << SEQUENCE_BITS) - 1;

    private LoadBody() {
    }

    /** The id a body carries: the sender in the top 8 bits, the sequence modulo 2^24 below. */
    static int id(int sender, long sequence) {
        return sender << SEQUENCE_BITS | (int) (sequence & SEQUENCE_MASK);
    }

    static int sender(int id) {
        return id >>> SEQUENCE_BITS;
    }

    static int sequence(int id) {
        return id & SEQUENCE_MASK;
    }

    /** Appends a body of {@code size} bytes ({@code size >= HEADER}) to {@code out}. */
    static void write(ByteBuf out, long sentAt, int id, int size) {
        out.writeLong(sentAt);
        out.writeInt(id);
        for (int i = HEADER; i < size; i++) {
            out.writeByte(padding(id, i));
        }
    }

    /**
     * Checks the {@code length} bytes at {@code index} of {@code buf} as a body of {@code size} bytes.
     *
     * @return its id, or -1 when it is damaged (wrong length or padding)
     */
    static long check(ByteBuf buf, int index, int length, int size) {
        if (length != size) {
            return -1;
        }
        int id = buf.getInt(index + 8);
        for (int i = HEADER; i < size; i++) {
            if (buf.getByte(index + i) != padding(id, i)) {
                return -1;
            }
        }
        return id & 0xffff_ffffL;
    }

    /** The send time of the body at {@code index}, already {@link #check checked}. */
    static long sentAt(ByteBuf buf, int index) {
        return buf.getLong(index);
    }

    private static byte padding(int id, int index) {
        return (byte) (id * 31 + index);
    }

    /**
     * Per-sender order as one receiver sees it: each sender's sequence must move forward, by exactly one when this
     * receiver gets every message of its queue (one receiver per queue, or a topic subscription), by at least one
     * when it competes with other receivers for one queue. Sequences are compared modulo 2^24 (RFC 1982), so a
     * run may wrap them. Owned by the receiver's thread.
     */
    static final class Order {
        private final boolean consecutive;
        /** The next sequence expected from each sender, -1 before its first. */
        private final int[] next = new int[MAX_SENDERS];

        Order(boolean consecutive) {
            this.consecutive = consecutive;
            java.util.Arrays.fill(next, -1);
        }

        /** True when the message with this id is in order; it then becomes the last one seen from its sender. */
        boolean accept(int id) {
            int sender = sender(id);
            int sequence = sequence(id);
            int expected = next[sender];
            boolean ok = expected < 0 || (consecutive ? sequence == expected : !before(sequence, expected));
            next[sender] = (sequence + 1) & SEQUENCE_MASK;
            return ok;
        }

        /** {@code a} comes before {@code b} in 24-bit serial-number arithmetic. */
        private static boolean before(int a, int b) {
            int difference = (a - b) & SEQUENCE_MASK;
            return difference != 0 && difference > 1 << (SEQUENCE_BITS - 1);
        }
    }
}
