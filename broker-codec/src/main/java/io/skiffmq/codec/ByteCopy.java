package io.skiffmq.codec;

import io.netty.buffer.ByteBuf;

/**
 * Appends a short run of one buffer to another without garbage. Netty 4.2's adaptive buffers allocate two NIO views
 * (about 110 bytes) for every {@code writeBytes(ByteBuf…)}; a run of up to {@link #SHORT} bytes is copied eight bytes
 * at a time instead, which is cheaper than those views. What a delivery copies per message is usually that short: a
 * delivery tag, annotations, 0-9-1 properties, a small body.
 */
public final class ByteCopy {
    /** Runs up to this many bytes are copied without {@code writeBytes}. */
    public static final int SHORT = 64;

    private ByteCopy() {
    }

    /** Appends {@code length} bytes of {@code src} from {@code index} to {@code out}; {@code src}'s indexes stay. */
    public static void copy(ByteBuf out, ByteBuf src, int index, int length) {
        if (length > SHORT) {
            out.writeBytes(src, index, length);
            return;
        }
        out.ensureWritable(length);
        int end = index + length;
        for (; index + Long.BYTES <= end; index += Long.BYTES) {
            out.writeLong(src.getLong(index));
        }
        for (; index < end; index++) {
            out.writeByte(src.getByte(index));
        }
    }
}
