package io.skiffmq.codec.testing;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The leak check the whole suite relies on must itself be able to fail. */
class LeakDetectionTest {

    @Test
    void aLeakedBufferIsReported() {
        LeakDetection.collectLeaks();
        leak();
        // the detector sees it once the reference handler has queued the collected buffer: at once on a quiet
        // machine, after a later collection on a busy one
        List<String> found = new ArrayList<>();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (found.isEmpty() && System.nanoTime() < deadline) {
            found.addAll(LeakDetection.collectLeaks());
        }
        assertThat(found).anySatisfy(leak -> assertThat(leak).contains("LEAK"));
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
