package io.skiffmq.core.alarm;

import io.skiffmq.core.alarm.ResourceAlarms.Resource;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;

/**
 * Raises and clears the memory and disk alarms of a {@link ResourceAlarms} from periodic readings
 * ({@link ResourceReadings}), each with hysteresis ({@link Hysteresis}), and logs every rise (WARNING) and clear
 * (INFO) once, with the figures, in RabbitMQ's words ("memory resource limit alarm set on node ...").
 *
 * <table>
 *   <caption>Levels and periods</caption>
 *   <tr><th>what</th><th>value</th><th>why</th></tr>
 *   <tr><td>memory rises</td><td>used &gt; {@code memory-high-watermark}</td><td>RabbitMQ's rule</td></tr>
 *   <tr><td>memory clears</td><td>used &lt; {@value #MEMORY_CLEAR_FRACTION} × watermark</td><td>a backlog being
 *       drained frees memory a GC at a time; 10% below the watermark keeps a reading hovering at it from
 *       blocking and releasing every publisher on each check</td></tr>
 *   <tr><td>disk rises</td><td>free &lt; {@code disk-free-limit}</td><td>RabbitMQ's rule</td></tr>
 *   <tr><td>disk clears</td><td>free &gt; limit + limit / {@value #DISK_CLEAR_MARGIN_DIVISOR}</td><td>the same
 *       reasoning; free space comes back a journal segment at a time, far more than 10% of the default 50 MB</td></tr>
 *   <tr><td>memory checked</td><td>every {@value #MEMORY_CHECK_MILLIS} ms, and at once when connections have
 *       read 1/{@value #ARRIVALS_PER_CHECK_DIVISOR} of the watermark since the last check</td><td>the readings are
 *       cheap (a figure the last GC left, and Netty's direct-memory counter). On the clock alone, a publisher on
 *       loopback (200 MB/s and more) filled a 96 MiB direct-memory limit before the next check; counting what
 *       arrives bounds the overshoot by bytes, whatever the rate</td></tr>
 *   <tr><td>disk checked</td><td>every {@value #DISK_CHECK_MILLIS} ms</td><td>one {@code statvfs}; a disk fills
 *       no faster than the journal writes, and RabbitMQ checks every 10 s at most</td></tr>
 *   <tr><td>GC asked for</td><td>every {@value #RECLAIM_INTERVAL_MILLIS} ms while the memory alarm is up</td>
 *       <td>see {@link ResourceReadings#reclaimMemory}: without it, garbage in the old generation could hold the
 *       alarm up until the JVM next collects it, which an idle, blocked broker may never do</td></tr>
 * </table>
 *
 * <p>Threads: checks run on the monitor's own daemon thread ({@code skiffmq-resource-monitor}), started by
 * {@link #start}; {@link #checkMemory} and {@link #checkDisk} are also public so a test can step the monitor
 * itself, and the limits can be changed at run time from any thread. All are {@code synchronized}: the hysteresis
 * state, the limits and the readings are guarded by {@code this}. {@link #arrived} is called by every event loop
 * and takes no lock: it adds to an atomic counter and, past the threshold, hands one check to the monitor's thread.
 */
public final class ResourceMonitor implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(ResourceMonitor.class.getName());

    public static final double MEMORY_CLEAR_FRACTION = 0.9;
    public static final long DISK_CLEAR_MARGIN_DIVISOR = 10;
    static final long MEMORY_CHECK_MILLIS = 200;
    static final long DISK_CHECK_MILLIS = 1000;
    static final long RECLAIM_INTERVAL_MILLIS = 5000;
    static final long ARRIVALS_PER_CHECK_DIVISOR = 32;
    /** So that a tiny watermark (a test's) does not mean a check per read. */
    static final long MIN_ARRIVALS_PER_CHECK = 1 << 20;

    private final ResourceAlarms alarms;
    private final String node;
    private final String dataDir;
    private Hysteresis memory;
    private Hysteresis disk;
    private final LongSupplier nanoClock;
    private ResourceReadings readings;
    private long lastReclaim;
    private boolean diskUnreadable;
    private volatile ScheduledExecutorService scheduler;
    private final AtomicLong arrivedSinceCheck = new AtomicLong();
    private final AtomicBoolean checkQueued = new AtomicBoolean();
    private volatile long arrivalsPerCheck;

    /**
     * @param memoryLimit bytes of memory in use above which the memory alarm rises
     * @param diskFreeLimit bytes of free disk below which the disk alarm rises (0: never)
     * @param node the node name, for the log
     * @param dataDir what the disk reading is about, for the log
     * @param nanoClock {@link System#nanoTime} but in tests
     */
    public ResourceMonitor(ResourceAlarms alarms, ResourceReadings readings, long memoryLimit, long diskFreeLimit,
            String node, String dataDir, LongSupplier nanoClock) {
        this.alarms = alarms;
        this.readings = readings;
        this.node = node;
        this.dataDir = dataDir;
        this.nanoClock = nanoClock;
        this.memory = Hysteresis.above(memoryLimit, (long) (memoryLimit * MEMORY_CLEAR_FRACTION));
        this.arrivalsPerCheck = arrivalsPerCheck(memoryLimit);
        this.disk = Hysteresis.below(diskFreeLimit, diskFreeLimit + diskFreeLimit / DISK_CLEAR_MARGIN_DIVISOR);
    }

    public synchronized long memoryLimit() {
        return memory.raiseLevel();
    }

    public synchronized long diskFreeLimit() {
        return disk.raiseLevel();
    }

    /** Memory in use now, as the memory alarm measures it (for the metrics; one reading). */
    public synchronized long memoryUsed() {
        return readings.memoryUsed();
    }

    /** Free disk now, as the disk alarm measures it; negative when it cannot be read. */
    public synchronized long diskFree() {
        return readings.diskFree();
    }

    /**
     * A new memory limit at run time (rabbitmqctl's {@code set_vm_memory_high_watermark}), checked at once: the
     * alarm rises or clears by the new level before this returns. Not kept across a restart, as in RabbitMQ.
     */
    public synchronized void memoryLimit(long limit) {
        if (limit < 0) {
            throw new IllegalArgumentException("the memory limit must be >= 0");
        }
        memory = memory.withLevels(limit, (long) (limit * MEMORY_CLEAR_FRACTION));
        arrivalsPerCheck = arrivalsPerCheck(limit);
        LOG.log(System.Logger.Level.INFO, "memory-high-watermark on node {0} set to {1}", node, bytes(limit));
        checkMemory();
    }

    /** A new free disk limit at run time (rabbitmqctl's {@code set_disk_free_limit}), checked at once. */
    public synchronized void diskFreeLimit(long limit) {
        if (limit < 0) {
            throw new IllegalArgumentException("the free disk limit must be >= 0");
        }
        disk = disk.withLevels(limit, limit + limit / DISK_CLEAR_MARGIN_DIVISOR);
        LOG.log(System.Logger.Level.INFO, "disk-free-limit on node {0} set to {1}", node, bytes(limit));
        checkDisk();
    }

    /**
     * Replaces where readings come from: a test's own, to raise and clear alarms at will. The old readings are
     * closed.
     */
    public synchronized void readings(ResourceReadings replacement) {
        readings.close();
        readings = replacement;
    }

    /** Starts checking on a daemon thread of the monitor's own. */
    public void start() {
        start(MEMORY_CHECK_MILLIS);
    }

    /** {@link #start} with the clock's memory checks this far apart (a test's, to see the arrivals' alone). */
    synchronized void start(long memoryCheckMillis) {
        if (scheduler != null) {
            return;
        }
        scheduler = Executors.newSingleThreadScheduledExecutor(runnable -> {
            Thread thread = new Thread(runnable, "skiffmq-resource-monitor");
            thread.setDaemon(true);
            return thread;
        });
        scheduler.scheduleWithFixedDelay(guarded(this::checkMemory), 0, memoryCheckMillis, TimeUnit.MILLISECONDS);
        scheduler.scheduleWithFixedDelay(guarded(this::checkDisk), 0, DISK_CHECK_MILLIS, TimeUnit.MILLISECONDS);
    }

    private static long arrivalsPerCheck(long memoryLimit) {
        return Math.max(memoryLimit / ARRIVALS_PER_CHECK_DIVISOR, MIN_ARRIVALS_PER_CHECK);
    }

    /**
     * {@code bytes} read from a client or another node: past the threshold since the last check, a memory check
     * runs at once on the monitor's thread (one at a time, however many event loops cross it). Before {@link #start}
     * and after {@link #close} only the clock's checks count, and there are none.
     */
    public void arrived(long bytes) {
        if (arrivedSinceCheck.addAndGet(bytes) >= arrivalsPerCheck && checkQueued.compareAndSet(false, true)) {
            ScheduledExecutorService running = scheduler;
            try {
                if (running != null) {
                    running.execute(guarded(this::checkMemory));
                    return;
                }
            } catch (RejectedExecutionException closing) {
                // closed in between: nothing checks any more
            }
            checkQueued.set(false);
        }
    }

    /** A failing check is logged and the next one runs (an exception would cancel the schedule). */
    private static Runnable guarded(Runnable check) {
        return () -> {
            try {
                check.run();
            } catch (RuntimeException | Error e) {
                LOG.log(System.Logger.Level.ERROR, "resource check failed", e);
            }
        };
    }

    /** One memory check: raises or clears the memory alarm, or asks for a GC while it stays up. */
    public synchronized void checkMemory() {
        arrivedSinceCheck.set(0);
        checkQueued.set(false);
        long used = readings.memoryUsed();
        switch (memory.check(used)) {
            case RAISED -> {
                LOG.log(System.Logger.Level.WARNING, "memory resource limit alarm set on node {0}: {1} in use ({2}), "
                    + "above memory-high-watermark {3}; publishers are blocked until it clears", node, bytes(used),
                    readings.memoryDetail(), bytes(memory.raiseLevel()));
                lastReclaim = nanoClock.getAsLong();
                alarms.raise(Resource.MEMORY);
            }
            case CLEARED -> {
                LOG.log(System.Logger.Level.INFO, "memory resource limit alarm cleared on node {0}: {1} in use ({2}), "
                    + "below the clear level {3} ({4} x memory-high-watermark)", node, bytes(used),
                    readings.memoryDetail(), bytes(memory.clearLevel()), MEMORY_CLEAR_FRACTION);
                alarms.clear(Resource.MEMORY);
            }
            case NONE -> {
                long now = nanoClock.getAsLong();
                if (memory.raised() && now - lastReclaim >= TimeUnit.MILLISECONDS.toNanos(RECLAIM_INTERVAL_MILLIS)) {
                    lastReclaim = now;
                    LOG.log(System.Logger.Level.DEBUG, "memory alarm still up: {0} in use ({1}); asking for a GC",
                        bytes(used), readings.memoryDetail());
                    readings.reclaimMemory();
                }
            }
        }
    }

    /** One disk check: raises or clears the disk alarm. */
    public synchronized void checkDisk() {
        long free = readings.diskFree();
        if (free < 0) {
            if (!diskUnreadable) {
                diskUnreadable = true;
                LOG.log(System.Logger.Level.WARNING, "cannot read the free disk space of {0}; the disk alarm stays as "
                    + "it is until it can", dataDir);
            }
            return;
        }
        diskUnreadable = false;
        switch (disk.check(free)) {
            case RAISED -> {
                LOG.log(System.Logger.Level.WARNING, "disk resource limit alarm set on node {0}: {1} free for {2}, "
                    + "below disk-free-limit {3}; publishers are blocked until it clears", node, bytes(free), dataDir,
                    bytes(disk.raiseLevel()));
                alarms.raise(Resource.DISK);
            }
            case CLEARED -> {
                LOG.log(System.Logger.Level.INFO, "disk resource limit alarm cleared on node {0}: {1} free for {2}, "
                    + "above the clear level {3} (disk-free-limit + 1/{4})", node, bytes(free), dataDir,
                    bytes(disk.clearLevel()), DISK_CLEAR_MARGIN_DIVISOR);
                alarms.clear(Resource.DISK);
            }
            case NONE -> {
            }
        }
    }

    /** Stops the checks; the alarms stay as they are. */
    @Override
    public synchronized void close() {
        if (scheduler != null) {
            scheduler.shutdownNow();
            scheduler = null;
        }
        readings.close();
    }

    /** "123456789 bytes (117.7 MiB)": exact for the record, readable at a glance. */
    static String bytes(long n) {
        return String.format(java.util.Locale.ROOT, "%d bytes (%.1f MiB)", n, n / (1024.0 * 1024.0));
    }
}
