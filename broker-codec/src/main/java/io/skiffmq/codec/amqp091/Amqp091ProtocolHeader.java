package io.skiffmq.codec.amqp091;

import io.netty.buffer.ByteBuf;

/**
 * The 8 bytes a 0-9-1 client opens with, {@code AMQP 0 0 9 1} [4.2.2]. The server answers anything else by sending
 * these bytes and closing; deciding which protocol a connection speaks is the listener's business.
 */
public final class Amqp091ProtocolHeader {
    public static final int LENGTH = 8;

    private static final byte[] BYTES = {'A', 'M', 'Q', 'P', 0, 0, 9, 1};

    private Amqp091ProtocolHeader() {
    }

    /** A fresh copy of the header bytes. */
    public static byte[] bytes() {
        return BYTES.clone();
    }

    /** Appends the header at {@code out}'s writer index (what the server sends back for a header it refuses). */
    public static void write(ByteBuf out) {
        out.writeBytes(BYTES);
    }

    /**
     * True when the 8 bytes at {@code index} are the 0-9-1 header; false when they differ or fewer than 8 bytes
     * are there. Changes no index.
     */
    public static boolean matches(ByteBuf in, int index) {
        if (in.writerIndex() - index < LENGTH) {
            return false;
        }
        for (int i = 0; i < LENGTH; i++) {
            if (in.getByte(index + i) != BYTES[i]) {
                return false;
            }
        }
        return true;
    }
}
