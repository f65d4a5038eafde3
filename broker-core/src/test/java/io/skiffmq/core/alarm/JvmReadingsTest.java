package io.skiffmq.core.alarm;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The real readings are sane: free space of the directory's disk, and direct buffers counted as memory. */
class JvmReadingsTest {
    @TempDir
    Path dir;

    @Test
    void diskFreeIsTheFileStoresUsableSpace() throws Exception {
        JvmReadings readings = new JvmReadings(dir);
        try {
            assertThat(readings.diskFree()).isPositive();
            assertThat(readings.memoryUsed()).isNotNegative();
        } finally {
            readings.close();
        }
    }

    @Test
    void directBuffersCountAsMemoryInUse() throws Exception {
        JvmReadings readings = new JvmReadings(dir);
        int size = 8 << 20;
        long before = readings.directMemoryUsed();
        ByteBuf direct = Unpooled.directBuffer(size, size);
        try {
            assertThat(readings.directMemoryUsed()).isGreaterThanOrEqualTo(before + size);
        } finally {
            direct.release();
            readings.close();
        }
        assertThat(readings.directMemoryUsed()).isLessThan(before + size);
    }
}
