package io.skiffmq.core.alarm;

import com.sun.management.GarbageCollectionNotificationInfo;
import io.netty.util.internal.PlatformDependent;
import java.io.IOException;
import java.lang.management.BufferPoolMXBean;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.lang.management.MemoryUsage;
import java.nio.file.FileStore;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import javax.management.ListenerNotFoundException;
import javax.management.Notification;
import javax.management.NotificationEmitter;
import javax.management.NotificationListener;
import javax.management.openmbean.CompositeData;

/**
 * The running JVM's readings: memory in use is <em>heap used after the last GC plus direct buffers</em>; disk free
 * is the usable space of the data directory's file store.
 *
 * <p><b>Heap after GC, from GC notifications.</b> The heap in use right now is mostly young garbage that the next
 * collection frees (G1's eden alone may be more than half the heap), so comparing it with a watermark of 0.4 would
 * block publishers for nothing. What a GC leaves is what the broker really holds. Each collector's JMX
 * notification ({@link GarbageCollectionNotificationInfo}) carries the usage of every pool after it; their heap
 * pools' sum is kept in a volatile field, and the monitor's periodic check reads that field: no polling of the
 * heap, no work between collections. Chosen over pool usage thresholds because those fire on one pool crossing
 * one level, where the watermark is about the whole heap, and its clear level needs a second threshold anyway.
 * After a young collection the figure still holds old-generation garbage (consumed messages that were promoted),
 * so it can only overstate: the alarm may rise a little early, and {@link #reclaimMemory} (a {@link System#gc},
 * asked for every few seconds while the memory alarm is up) settles it. A JVM run with
 * {@code -XX:+DisableExplicitGC} ignores that, and the alarm then clears when the JVM next collects the old
 * generation; {@code -XX:+ExplicitGCInvokesConcurrent} makes it a concurrent cycle instead of a full GC. Should no
 * collector send notifications, the heap pools' collection usage is summed instead.
 *
 * <p><b>Direct memory counts.</b> Message payloads are slices of the buffers Netty read them into (nothing is
 * copied), and those buffers are direct: a backlog of transient messages lives mostly outside the heap, and a
 * retained slice pins its whole read buffer. So direct memory is added: the JDK's {@code direct} buffer pool,
 * which holds Netty's buffers too unless Netty allocates them without the JDK's cleaner
 * ({@link PlatformDependent#useDirectBufferNoCleaner}); then Netty's own counter
 * ({@link PlatformDependent#usedDirectMemory}) is added to it. Netty keeps that counter in the other case as well,
 * for the same buffers the JDK counts, so adding both then would count them twice. Memory-mapped journal files
 * are not counted: the OS pages them out as it needs.
 *
 * <p>Threads: GC notifications arrive on the JVM's notification thread and only write {@link #heapAfterGc}; the
 * other methods run on the monitor's thread.
 */
public final class JvmReadings implements ResourceReadings {
    private static final System.Logger LOG = System.getLogger(JvmReadings.class.getName());

    private final FileStore store;
    private final Set<String> heapPools;
    private final List<MemoryPoolMXBean> heapPoolBeans;
    private final BufferPoolMXBean directPool;
    private final List<NotificationEmitter> emitters = new ArrayList<>();
    private final NotificationListener onGc = this::onGc;
    private volatile long heapAfterGc;

    /** Starts listening for GC notifications; {@link #close} stops. */
    public JvmReadings(Path dataDir) throws IOException {
        this.store = Files.getFileStore(dataDir);
        this.heapPoolBeans = ManagementFactory.getMemoryPoolMXBeans().stream()
            .filter(pool -> pool.getType() == MemoryType.HEAP).toList();
        this.heapPools = heapPoolBeans.stream().map(MemoryPoolMXBean::getName).collect(Collectors.toSet());
        this.directPool = ManagementFactory.getPlatformMXBeans(BufferPoolMXBean.class).stream()
            .filter(pool -> pool.getName().equals("direct")).findFirst().orElse(null);
        this.heapAfterGc = collectionUsage();
        for (GarbageCollectorMXBean gc : ManagementFactory.getGarbageCollectorMXBeans()) {
            if (gc instanceof NotificationEmitter emitter) {
                emitter.addNotificationListener(onGc, null, null);
                emitters.add(emitter);
            }
        }
        if (emitters.isEmpty()) {
            LOG.log(System.Logger.Level.INFO, "no GC notifications: heap after GC is read from the memory pools");
        }
    }

    private void onGc(Notification notification, Object handback) {
        if (!GarbageCollectionNotificationInfo.GARBAGE_COLLECTION_NOTIFICATION.equals(notification.getType())) {
            return;
        }
        GarbageCollectionNotificationInfo info =
            GarbageCollectionNotificationInfo.from((CompositeData) notification.getUserData());
        long used = 0;
        for (Map.Entry<String, MemoryUsage> pool : info.getGcInfo().getMemoryUsageAfterGc().entrySet()) {
            if (heapPools.contains(pool.getKey())) {
                used += pool.getValue().getUsed();
            }
        }
        heapAfterGc = used;
    }

    /** The heap pools' usage after their last collection (0 for a pool never collected). */
    private long collectionUsage() {
        long used = 0;
        for (MemoryPoolMXBean pool : heapPoolBeans) {
            MemoryUsage usage = pool.getCollectionUsage();
            if (usage != null) {
                used += usage.getUsed();
            }
        }
        return used;
    }

    /**
     * What a relative watermark is a fraction of: the maximum heap plus the direct-memory limit (which defaults to
     * the maximum heap). Both are counted in {@link #memoryUsed}, so both limits are; against the heap alone, a few
     * large messages in Netty's direct buffers (16 MiB each, 8 in flight each way) pass 0.4 of a 1 GiB heap and flap
     * the alarm while heap and direct memory are each well within their limits (docs/benchmarks.md, issue 30).
     */
    public static long memoryCeiling() {
        return Runtime.getRuntime().maxMemory() + PlatformDependent.maxDirectMemory();
    }

    @Override
    public long memoryUsed() {
        long heap = emitters.isEmpty() ? collectionUsage() : heapAfterGc;
        return heap + directMemoryUsed();
    }

    @Override
    public String memoryDetail() {
        long heap = emitters.isEmpty() ? collectionUsage() : heapAfterGc;
        return String.format(java.util.Locale.ROOT, "heap after GC %.1f MiB + direct buffers %.1f MiB",
            heap / (1024.0 * 1024.0), directMemoryUsed() / (1024.0 * 1024.0));
    }

    /** The JDK's direct buffers, and Netty's when they are not among them (see the class comment). */
    long directMemoryUsed() {
        long netty = Math.max(0, PlatformDependent.usedDirectMemory());
        long jdk = directPool == null ? 0 : Math.max(0, directPool.getMemoryUsed());
        return PlatformDependent.useDirectBufferNoCleaner() ? netty + jdk : Math.max(netty, jdk);
    }

    @Override
    public long diskFree() {
        try {
            return store.getUsableSpace();
        } catch (IOException e) {
            return -1;
        }
    }

    @Override
    public void reclaimMemory() {
        System.gc();
    }

    @Override
    public void close() {
        for (NotificationEmitter emitter : emitters) {
            try {
                emitter.removeNotificationListener(onGc);
            } catch (ListenerNotFoundException e) {
                // gone already
            }
        }
        emitters.clear();
    }
}
