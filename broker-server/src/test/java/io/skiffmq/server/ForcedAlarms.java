package io.skiffmq.server;

import io.skiffmq.core.alarm.ResourceAlarms.Resource;
import io.skiffmq.core.alarm.ResourceMonitor;
import io.skiffmq.core.alarm.ResourceReadings;

/**
 * A test's hand on a running broker's resource monitor: the readings are the test's (memory 0, the disk empty
 * until told otherwise), and each {@link #raise} or {@link #clear} feeds one past the level and has the monitor
 * check at once, so the alarm has changed (and every connection been told) when it returns.
 */
final class ForcedAlarms implements ResourceReadings {
    private final ResourceMonitor monitor;
    private volatile long memory;
    private volatile long disk = Long.MAX_VALUE;

    ForcedAlarms(ResourceMonitor monitor) {
        this.monitor = monitor;
        monitor.readings(this);
    }

    void raise(Resource resource) {
        if (resource == Resource.MEMORY) {
            memory = monitor.memoryLimit() + 1;
            monitor.checkMemory();
        } else {
            disk = monitor.diskFreeLimit() - 1;
            monitor.checkDisk();
        }
    }

    void clear(Resource resource) {
        if (resource == Resource.MEMORY) {
            memory = 0;
            monitor.checkMemory();
        } else {
            disk = Long.MAX_VALUE;
            monitor.checkDisk();
        }
    }

    @Override
    public long memoryUsed() {
        return memory;
    }

    @Override
    public long diskFree() {
        return disk;
    }
}
