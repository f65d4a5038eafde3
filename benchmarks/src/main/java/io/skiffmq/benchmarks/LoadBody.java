package io.skiffmq.benchmarks;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;

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
    /** The padding's period: byte {@code i} is {@code id * 31 + i}, modulo 256. */
    private static final int RUN = 256;
    /** 0, 1, … 255, 0, 1, … 255: any run of the padding, from any start below 256. */
    private static final byte[] RAMP = new byte[2 * RUN];
    private static final ByteBuf RAMP_BUF = Unpooled.unreleasableBuffer(Unpooled.wrappedBuffer(RAMP));

    static {
        for (int i = 0; i < RAMP.length; i++) {
            RAMP[i] = (byte) i;
        }
    }

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
        // the padding repeats every 256 bytes: copied from the ramp in runs, not byte by byte (a 1 MiB body a byte
        // at a time cost the tool 10 ms, its ceiling near 70 msg/s)
        int start = padding(id, HEADER) & 0xff;
        for (int left = size - HEADER; left > 0; left -= RUN) {
            out.writeBytes(RAMP, start, Math.min(RUN, left));
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
        int start = padding(id, HEADER) & 0xff;
        for (int i = HEADER; i < size; i += RUN) {
            if (!ByteBufUtil.equals(buf, index + i, RAMP_BUF, start, Math.min(RUN, size - i))) {
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
