package io.skiffmq.core.alarm;

/**
 * Where {@link ResourceMonitor} reads the figures its alarms compare with their limits: {@link JvmReadings} in a
 * running broker; a test feeds its own to raise and clear alarms without filling the heap or the disk. Called on
 * the monitor's thread only (or a test's, under the monitor's lock).
 */
public interface ResourceReadings {
    /** Bytes of memory in use that count against {@code memory-high-watermark}. */
    long memoryUsed();

    /** What {@link #memoryUsed} was made of, for the log ("heap after GC 12 MiB + direct 30 MiB"); "" by default. */
    default String memoryDetail() {
        return "";
    }

    /** Bytes free on the file system of the data directory, or -1 when it cannot be read now. */
    long diskFree();

    /**
     * Asked, now and then, while the memory alarm is up: make {@link #memoryUsed} current (a garbage collection),
     * so garbage that no collection has looked at yet cannot hold the alarm up. Does nothing by default.
     */
    default void reclaimMemory() {
    }

    /** The monitor stops: let go of what the readings hold (listeners). Does nothing by default. */
    default void close() {
    }
}
