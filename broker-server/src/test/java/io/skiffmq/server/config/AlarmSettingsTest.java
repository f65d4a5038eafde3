package io.skiffmq.server.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/** {@code memory-high-watermark} and {@code disk-free-limit} as written on the command line. */
class AlarmSettingsTest {

    @Test
    void defaultsAreRabbitMqs() {
        BrokerConfig defaults = BrokerConfig.defaults();
        assertThat(defaults.memoryHighWatermark()).isEqualTo(new MemoryWatermark(0.4, -1));
        assertThat(defaults.memoryHighWatermark().limit(1000)).isEqualTo(400);
        assertThat(defaults.diskFreeLimit()).isEqualTo(50_000_000);
    }

    @Test
    void aWatermarkIsAFractionOfTheHeapOrBytes() {
        assertThat(watermark("0.6").limit(1000)).isEqualTo(600);
        assertThat(watermark("1").limit(1000)).as("a plain number up to 1 is a fraction").isEqualTo(1000);
        assertThat(watermark("0").limit(1000)).as("0 blocks publishers at once, as in RabbitMQ").isZero();
        assertThat(watermark("512MB").limit(1000)).isEqualTo(512_000_000);
        assertThat(watermark("1GiB").limit(1000)).isEqualTo(1L << 30);
        assertThat(watermark("268435456").limit(1000)).as("a whole number above 1 is bytes").isEqualTo(268_435_456);
        for (String bad : new String[] {"1.5", "-0.1", "lots", "12XB"}) {
            assertThatThrownBy(() -> watermark(bad)).as(bad).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("memory-high-watermark");
        }
    }

    @Test
    void theDiskLimitTakesRabbitMqsUnits() {
        assertThat(disk("50MB")).isEqualTo(50_000_000);
        assertThat(disk("50mb")).isEqualTo(50_000_000);
        assertThat(disk("2kB")).isEqualTo(2000);
        assertThat(disk("2k")).isEqualTo(2048);
        assertThat(disk("1.5GB")).isEqualTo(1_500_000_000);
        assertThat(disk("3MiB")).isEqualTo(3L << 20);
        assertThat(disk("1G")).isEqualTo(1L << 30);
        assertThat(disk("123")).isEqualTo(123);
        assertThat(disk("0")).isZero();
        for (String bad : new String[] {"-1", "50 furlongs", "1.5", "99999999999TB"}) {
            assertThatThrownBy(() -> disk(bad)).as(bad).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("disk-free-limit");
        }
    }

    private static MemoryWatermark watermark(String value) {
        return BrokerConfig.defaults().with("memory-high-watermark", value).memoryHighWatermark();
    }

    private static long disk(String value) {
        return BrokerConfig.defaults().with("disk-free-limit", value).diskFreeLimit();
    }
}
