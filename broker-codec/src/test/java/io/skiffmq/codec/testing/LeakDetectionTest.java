package io.skiffmq.codec.testing;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import org.junit.jupiter.api.Test;

/** The leak check the whole suite relies on must itself be able to fail. */
class LeakDetectionTest {

    @Test
    void aLeakedBufferIsReported() {
        LeakDetection.collectLeaks();
        leak();
        assertThat(LeakDetection.collectLeaks()).anySatisfy(leak -> assertThat(leak).contains("LEAK"));
    }

    @Test
    void aReleasedBufferIsNot() {
        LeakDetection.collectLeaks();
        ByteBuf buf = PooledByteBufAllocator.DEFAULT.buffer(16).writeLong(1);
        buf.release();
        assertThat(LeakDetection.collectLeaks()).isEmpty();
    }

    private static void leak() {
        ByteBuf buf = PooledByteBufAllocator.DEFAULT.buffer(16);
        buf.writeLong(42);
    }
}
