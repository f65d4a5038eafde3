package io.skiffmq.codec;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.util.IllegalReferenceCountException;
import java.util.function.IntFunction;
import org.junit.jupiter.api.Test;

/** Every length up to and past {@link ByteCopy#SHORT}, direct and heap buffers both ways, and the refusals. */
class ByteCopyTest {
    private static final IntFunction<ByteBuf> DIRECT = ByteBufAllocator.DEFAULT::directBuffer;
    private static final IntFunction<ByteBuf> HEAP = Unpooled::buffer;

    @Test
    void copiesEveryLengthExactlyAfterWhatTheTargetHeldWhicheverTheBuffersAre() {
        for (IntFunction<ByteBuf> from : java.util.List.of(DIRECT, HEAP)) {
            for (IntFunction<ByteBuf> to : java.util.List.of(DIRECT, HEAP)) {
                for (int length = 0; length <= ByteCopy.SHORT + 9; length++) {
                    ByteBuf src = from.apply(100);
                    ByteBuf out = to.apply(4); // grows
                    try {
                        for (int i = 0; i < 100; i++) {
                            src.writeByte(i);
                        }
                        src.readerIndex(7);
                        out.writeByte(0xee);
                        ByteCopy.copy(out, src, 3, length);
                        assertThat(src.readerIndex()).isEqualTo(7);
                        assertThat(out.readableBytes()).isEqualTo(1 + length);
                        assertThat(out.getUnsignedByte(0)).isEqualTo((short) 0xee);
                        for (int i = 0; i < length; i++) {
                            assertThat(out.getByte(1 + i)).as("byte %d of %d", i, length).isEqualTo((byte) (3 + i));
                        }
                    } finally {
                        src.release();
                        out.release();
                    }
                }
            }
        }
    }

    @Test
    void aRunPastTheSourceOrOfAReleasedBufferIsRefusedAndWritesNothing() {
        ByteBuf src = ByteBufAllocator.DEFAULT.directBuffer(16).writeZero(16);
        ByteBuf out = ByteBufAllocator.DEFAULT.directBuffer(16);
        try {
            assertThatThrownBy(() -> ByteCopy.copy(out, src, 10, 7)).isInstanceOf(IndexOutOfBoundsException.class);
            assertThatThrownBy(() -> ByteCopy.copy(out, src, -1, 2)).isInstanceOf(IndexOutOfBoundsException.class);
            assertThat(out.writerIndex()).isZero();
        } finally {
            src.release();
        }
        assertThatThrownBy(() -> ByteCopy.copy(out, src, 0, 8)).isInstanceOf(IllegalReferenceCountException.class);
        assertThat(out.writerIndex()).isZero();
        out.release();
    }
}
