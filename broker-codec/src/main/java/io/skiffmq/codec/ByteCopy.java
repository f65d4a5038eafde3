package io.skiffmq.codec;

import io.netty.buffer.ByteBuf;
import io.netty.util.internal.PlatformDependent;

/**
 * Appends a short run of one buffer to another without garbage. Netty 4.2's adaptive buffers allocate two NIO views
 * (about 110 bytes) for every {@code writeBytes(ByteBuf…)}; a run of up to {@link #SHORT} bytes is copied without
 * them. What a delivery copies per message is usually that short: a delivery tag, annotations, 0-9-1 properties, a
 * small body.
 *
 * <p>From a heap buffer the run is one {@code writeBytes} of its array. Between two buffers with memory addresses
 * (direct ones, as the broker's are) it is one memory copy, with the bounds checked here and each buffer's liveness
 * checked once by {@code memoryAddress()}. Otherwise it goes
 * eight bytes at a time through {@code getLong}/{@code writeLong}, each of which checks bounds and liveness again:
 * on the AMQP 1.0 durable path those checks were 5 % of the broker's CPU.
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
        if (index < 0 || length < 0 || index > src.capacity() - length) {
            throw new IndexOutOfBoundsException("index " + index + ", length " + length + " in a buffer of "
                + src.capacity());
        }
        if (src.hasArray()) {
            // from an array (the broker's own constant encodings): one copy, and no view of either buffer
            out.writeBytes(src.array(), src.arrayOffset() + index, length);
            return;
        }
        out.ensureWritable(length);
        int writerIndex = out.writerIndex();
        if (src.hasMemoryAddress() && out.hasMemoryAddress() && PlatformDependent.hasUnsafe()) {
            PlatformDependent.copyMemory(src.memoryAddress() + index, out.memoryAddress() + writerIndex, length);
            out.writerIndex(writerIndex + length);
            return;
        }
        int end = index + length;
        for (; index + Long.BYTES <= end; index += Long.BYTES) {
            out.writeLong(src.getLong(index));
        }
        for (; index < end; index++) {
            out.writeByte(src.getByte(index));
        }
    }
}
