package io.skiffmq.core.alarm;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.skiffmq.core.alarm.ResourceAlarms.Resource;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * The alarms' state machine with readings fed by the test and a stepped clock: levels, hysteresis, listeners, and
 * the GC asked for while the memory alarm stays up.
 */
class ResourceMonitorTest {
    private static final long MEMORY_LIMIT = 1000;
    private static final long DISK_LIMIT = 50_000;

    /** Readings the test sets. */
    static final class FakeReadings implements ResourceReadings {
        long memory;
        long disk = 1_000_000;
        int reclaims;

        @Override
        public long memoryUsed() {
            return memory;
        }

        @Override
        public long diskFree() {
            return disk;
        }

        @Override
        public void reclaimMemory() {
            reclaims++;
        }
    }

    private final ResourceAlarms alarms = new ResourceAlarms();
    private final FakeReadings readings = new FakeReadings();
    private final List<Set<Resource>> changes = new ArrayList<>();
    private long now;
    private final ResourceMonitor monitor = new ResourceMonitor(alarms, readings, MEMORY_LIMIT, DISK_LIMIT, "test@host",
        "/data", () -> now);

    {
        alarms.onChange(changes::add);
    }

    @Test
    void memoryRisesAboveTheWatermarkAndClearsOnlyBelowNinetyPercentOfIt() {
        readings.memory = MEMORY_LIMIT;
        monitor.checkMemory();
        assertThat(alarms.any()).as("at the watermark: not above it").isFalse();

        readings.memory = MEMORY_LIMIT + 1;
        monitor.checkMemory();
        assertThat(alarms.active()).containsExactly(Resource.MEMORY);

        for (long used : new long[] {MEMORY_LIMIT, 950, 900}) {
            readings.memory = used;
            monitor.checkMemory();
            assertThat(alarms.active()).as("%d is not below the clear level 900", used).containsExactly(Resource.MEMORY);
        }
        readings.memory = 899;
        monitor.checkMemory();
        assertThat(alarms.any()).isFalse();

        readings.memory = 950;
        monitor.checkMemory();
        assertThat(alarms.any()).as("between the levels after a clear: stays clear").isFalse();
        assertThat(changes).as("one call per change, with the alarms up after it")
            .containsExactly(Set.of(Resource.MEMORY), Set.of());
    }

    @Test
    void bytesArrivingPastAThirtySecondOfTheWatermarkCheckMemoryAtOnceWithoutWaitingForTheClock() throws Exception {
        long limit = 64L << 20;
        AtomicLong used = new AtomicLong();
        AtomicInteger checks = new AtomicInteger();
        ResourceMonitor started = new ResourceMonitor(alarms, new ResourceReadings() {
            @Override
            public long memoryUsed() {
                checks.incrementAndGet();
                return used.get();
            }

            @Override
            public long diskFree() {
                return Long.MAX_VALUE;
            }

            @Override
            public void reclaimMemory() {
            }
        }, limit, 0, "test@host", "/data", System::nanoTime);
        try {
            started.start(TimeUnit.HOURS.toMillis(1)); // one check at start, then none from the clock
            await().until(() -> checks.get() == 1);
            used.set(limit + 1);
            started.arrived(limit / 32 - 1);
            started.arrived(1);
            await().until(alarms::any);
            assertThat(checks).hasValue(2);

            started.arrived(limit / 64);
            used.set(0);
            started.arrived(limit / 32 - limit / 64);
            await().until(() -> !alarms.any());
            assertThat(checks).as("the count starts again from each check").hasValue(3);
        } finally {
            started.close();
        }
    }

    @Test
    void limitsChangedAtRunTimeRaiseAndClearAtOnceAndKeepTheirHysteresis() {
        readings.memory = 500;
        monitor.checkMemory();
        monitor.memoryLimit(0); // rabbitmqctl set_vm_memory_high_watermark 0: every publisher blocked
        assertThat(alarms.active()).containsExactly(Resource.MEMORY);
        assertThat(monitor.memoryLimit()).isZero();

        monitor.memoryLimit(540);
        assertThat(alarms.active()).as("500 is above 540's clear level, 486").containsExactly(Resource.MEMORY);
        monitor.memoryLimit(MEMORY_LIMIT);
        assertThat(alarms.any()).isFalse();

        monitor.diskFreeLimit(readings.disk * 2);
        assertThat(alarms.active()).containsExactly(Resource.DISK);
        monitor.diskFreeLimit(DISK_LIMIT);
        assertThat(alarms.any()).isFalse();
        assertThat(changes).containsExactly(Set.of(Resource.MEMORY), Set.of(), Set.of(Resource.DISK), Set.of());
    }

    @Test
    void diskRisesBelowTheLimitAndClearsOnlyAboveTheLimitAndATenthMore() {
        readings.disk = DISK_LIMIT;
        monitor.checkDisk();
        assertThat(alarms.any()).as("at the limit: not below it").isFalse();

        readings.disk = DISK_LIMIT - 1;
        monitor.checkDisk();
        assertThat(alarms.active()).containsExactly(Resource.DISK);

        readings.disk = DISK_LIMIT + DISK_LIMIT / 10;
        monitor.checkDisk();
        assertThat(alarms.active()).as("not above limit + 10%").containsExactly(Resource.DISK);

        readings.disk = DISK_LIMIT + DISK_LIMIT / 10 + 1;
        monitor.checkDisk();
        assertThat(alarms.any()).isFalse();
        assertThat(changes).containsExactly(Set.of(Resource.DISK), Set.of());
    }

    @Test
    void bothAlarmsAreHeldApartAndPublishersStayBlockedUntilBothClear() {
        readings.memory = MEMORY_LIMIT * 2;
        readings.disk = 0;
        monitor.checkMemory();
        monitor.checkDisk();
        assertThat(alarms.active()).containsExactlyInAnyOrder(Resource.MEMORY, Resource.DISK);
        assertThat(ResourceAlarms.blockedReason(alarms.active())).isEqualTo("low on memory & disk");

        readings.memory = 0;
        monitor.checkMemory();
        assertThat(alarms.active()).containsExactly(Resource.DISK);
        assertThat(alarms.any()).isTrue();
        assertThat(ResourceAlarms.blockedReason(alarms.active())).isEqualTo("low on disk");

        readings.disk = DISK_LIMIT * 2;
        monitor.checkDisk();
        assertThat(alarms.any()).isFalse();
    }

    @Test
    void aGcIsAskedForEveryFewSecondsWhileTheMemoryAlarmStaysUpAndNeverOtherwise() {
        long interval = TimeUnit.MILLISECONDS.toNanos(ResourceMonitor.RECLAIM_INTERVAL_MILLIS);
        readings.memory = 10;
        now += 10 * interval;
        monitor.checkMemory();
        assertThat(readings.reclaims).as("no alarm, no GC").isZero();

        readings.memory = MEMORY_LIMIT + 1;
        monitor.checkMemory();
        now += interval - 1;
        monitor.checkMemory();
        assertThat(readings.reclaims).as("not before the interval is over").isZero();
        now += 1;
        monitor.checkMemory();
        assertThat(readings.reclaims).isEqualTo(1);
        monitor.checkMemory();
        assertThat(readings.reclaims).isEqualTo(1);
        now += interval;
        monitor.checkMemory();
        assertThat(readings.reclaims).isEqualTo(2);

        readings.memory = 0;
        monitor.checkMemory();
        now += 10 * interval;
        monitor.checkMemory();
        assertThat(readings.reclaims).as("cleared: no more GCs").isEqualTo(2);
    }

    @Test
    void anUnreadableDiskLeavesTheDiskAlarmAsItIs() {
        readings.disk = 0;
        monitor.checkDisk();
        readings.disk = -1;
        monitor.checkDisk();
        assertThat(alarms.active()).containsExactly(Resource.DISK);
        readings.disk = DISK_LIMIT * 2;
        monitor.checkDisk();
        readings.disk = -1;
        monitor.checkDisk();
        assertThat(alarms.any()).isFalse();
    }

    @Test
    void aWatermarkOfZeroBlocksPublishersAtOnceAndADiskLimitOfZeroNever() {
        ResourceMonitor strict = new ResourceMonitor(alarms, readings, 0, 0, "test@host", "/data", () -> now);
        readings.memory = 1;
        readings.disk = 0;
        strict.checkMemory();
        strict.checkDisk();
        assertThat(alarms.active()).as("RabbitMQ: a watermark of 0 stops all publishing").containsExactly(Resource.MEMORY);
    }

    @Test
    void replacedReadingsAreUsedFromTheNextCheckAndTheOldOnesClosed() {
        boolean[] closed = {false};
        ResourceMonitor monitor = new ResourceMonitor(alarms, new ResourceReadings() {
            @Override
            public long memoryUsed() {
                return 0;
            }

            @Override
            public long diskFree() {
                return Long.MAX_VALUE;
            }

            @Override
            public void close() {
                closed[0] = true;
            }
        }, MEMORY_LIMIT, DISK_LIMIT, "test@host", "/data", () -> now);
        monitor.readings(readings);
        assertThat(closed[0]).isTrue();
        readings.memory = MEMORY_LIMIT + 1;
        monitor.checkMemory();
        assertThat(alarms.active()).containsExactly(Resource.MEMORY);
    }
}
