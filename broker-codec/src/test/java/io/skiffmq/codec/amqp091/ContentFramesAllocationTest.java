package io.skiffmq.codec.amqp091;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.AdaptiveByteBufAllocator;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import org.junit.jupiter.api.Test;
import io.skiffmq.codec.testing.Allocations;

/**
 * What a small message's content frames cost a delivery: the content header with the properties as published and
 * the body frame, copied from the publisher's pooled buffer into a buffer of the allocator the broker's channels use
 * (Netty 4.2's adaptive one), allocate nothing; that buffer's {@code writeBytes(ByteBuf…)} allocates two NIO views on
 * every call. Measured per thread over many writes after a warm-up, the leak detector's wrapper bypassed.
 */
class ContentFramesAllocationTest {
    private static final int ROUNDS = 20_000;

    @Test
    void writingASmallMessagesContentFramesAllocatesNothing() throws Exception {
        // as received: properties and body are slices of the publisher's frames
        ByteBuf received = PooledByteBufAllocator.DEFAULT.directBuffer(64);
        BasicProperties.EMPTY.encode(received);
        int propertiesLength = received.readableBytes();
        received.writeInt(0x01020304).writeLong(0x05060708090a0b0cL);
        ByteBuf unwrapped = received.unwrap() != null ? received.unwrap() : received; // no leak records read
        ByteBuf properties = unwrapped.slice(0, propertiesLength);
        ByteBuf body = unwrapped.slice(propertiesLength, 12);

        ByteBuf wrapper = new AdaptiveByteBufAllocator().directBuffer(256);
        ByteBuf out = wrapper.unwrap() != null ? wrapper.unwrap() : wrapper;
        long allocated;
        try {
            allocated = Allocations.perCall(ROUNDS, () -> {
                out.clear();
                Amqp091FrameWriter.writeContentHeader(out, 1, BasicMethod.CLASS_ID, 12, properties);
                Amqp091FrameWriter.writeBody(out, 1, body, 131072);
                return null;
            });
            // header frame (7 + 12 + properties + 1), body frame (7 + 12 + 1)
            assertThat(out.readableBytes()).isEqualTo(20 + propertiesLength + 20);
            assertThat(out.getLong(out.writerIndex() - 9)).isEqualTo(0x05060708090a0b0cL);
        } finally {
            wrapper.release();
            received.release();
        }
        assertThat(allocated).isZero();
    }
}
