package io.skiffmq.benchmarks;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.skiffmq.codec.amqp10.MessageSections;
import io.skiffmq.core.VirtualHost;
import io.skiffmq.core.message.Amqp10Message;
import io.skiffmq.core.message.Message;
import io.skiffmq.core.queue.ClassicQueue;
import io.skiffmq.core.queue.QueueExecutor;
import io.skiffmq.store.DiskStore;
import io.skiffmq.store.Journal;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Semaphore;

/**
 * Heap bytes per queued 12-byte AMQP 1.0 message, in process: a queue of a {@link DiskStore} is filled with
 * {@code messages} (1,000,000 by default) and the used heap after a full GC is compared with before.
 *
 * <ul>
 *   <li>{@code transient-memory}, {@code durable-memory}: a memory limit too high to reach, everything in memory
 *       (an entry and a message each: what a queue under its limit costs);</li>
 *   <li>{@code transient-paged}, {@code durable-paged}: the default 16 MiB limit, the rest in the page files;</li>
 *   <li>{@code durable-recovered}: the durable queue after a restart: recovery's entry per message.</li>
 * </ul>
 *
 * Messages are heap buffers, as a paged message read back is (one from the network is a slice of a direct buffer:
 * its bytes are off the heap). Run with a heap big enough for the in-memory cases:
 *
 * <pre>
 * java -Xmx2g $(cat broker-server/target/jvm.options) -cp benchmarks/target/benchmarks.jar \
 *     io.skiffmq.benchmarks.QueueMemory [messages] [case,…]
 * </pre>
 */
public final class QueueMemory {
    private static final long DEFAULT_LIMIT = 16L << 20;
    /** A header whose fields are all defaults: durable false. */
    private static final byte[] TRANSIENT_HEADER = {0x00, 0x53, 0x70, 0x45};

    private QueueMemory() {
    }

    public static void main(String[] args) throws Exception {
        int messages = args.length > 0 ? Integer.parseInt(args[0]) : 1_000_000;
        List<String> cases = args.length > 1 ? List.of(args[1].split(","))
            : List.of("transient-memory", "durable-memory", "transient-paged", "durable-paged", "durable-recovered");
        System.out.printf("%,d messages of 12 bytes; %s; max heap %d MB%n", messages,
            System.getProperty("java.vm.version"), Runtime.getRuntime().maxMemory() >> 20);
        for (String c : cases) {
            run(c, messages);
        }
        System.exit(0);
    }

    private static void run(String name, int messages) throws Exception {
        boolean durable = name.startsWith("durable");
        boolean paged = !name.endsWith("memory");
        Path dir = Files.createTempDirectory("skiffmq-queue-memory");
        ExecutorService thread = Executors.newSingleThreadExecutor(r -> new Thread(r, "queue"));
        Thread[] owner = new Thread[1];
        thread.submit(() -> owner[0] = Thread.currentThread()).get();
        QueueExecutor loop = new QueueExecutor() {
            @Override
            public boolean inExecutor() {
                return Thread.currentThread() == owner[0];
            }

            @Override
            public void execute(Runnable task) {
                thread.execute(task);
            }
        };
        long limit = paged ? DEFAULT_LIMIT : Long.MAX_VALUE / 4;
        try {
            DiskStore store = new DiskStore(dir, Journal.SyncPolicy.OS, Journal.DEFAULT_SEGMENT_BYTES, limit);
            VirtualHost vhost = new VirtualHost("/", () -> loop, store);
            store.recover(vhost);
            ClassicQueue queue = (ClassicQueue) vhost.declareQueue("q", durable, Map.of());
            thread.submit(() -> { }).get();
            long before = usedHeap();
            long started = System.nanoTime();
            Semaphore inFlight = new Semaphore(10_000);
            long half = 0;
            for (int n = 0; n < messages; n++) {
                inFlight.acquire();
                queue.publish(message(n, durable), inFlight::release);
                if (n == messages / 2 - 1) {
                    inFlight.acquire(10_000);
                    thread.submit(() -> { }).get();
                    half = usedHeap();
                    inFlight.release(10_000);
                }
            }
            inFlight.acquire(10_000);
            thread.submit(() -> { }).get();
            long publishMillis = (System.nanoTime() - started) / 1_000_000;
            long after = usedHeap();
            // what one more message costs: the second half's growth (a paged queue's head is in the first half)
            double marginal = (after - half) / (double) (messages - messages / 2);
            long peak = 0;
            if (name.equals("durable-recovered")) {
                store.close(); // the queue is dropped with its store, as at a crash: its messages stay live
                queue = null;
                vhost = null;
                before = usedHeap();
                store = new DiskStore(dir, Journal.SyncPolicy.OS, Journal.DEFAULT_SEGMENT_BYTES, limit);
                vhost = new VirtualHost("/", () -> loop, store);
                started = System.nanoTime();
                ManagementFactory.getMemoryPoolMXBeans().forEach(java.lang.management.MemoryPoolMXBean::resetPeakUsage);
                store.recover(vhost);
                thread.submit(() -> { }).get();
                publishMillis = (System.nanoTime() - started) / 1_000_000;
                for (var pool : ManagementFactory.getMemoryPoolMXBeans()) {
                    if (pool.getType() == java.lang.management.MemoryType.HEAP) {
                        peak += pool.getPeakUsage().getUsed();
                    }
                }
                after = usedHeap();
                marginal = Double.NaN;
                queue = (ClassicQueue) vhost.queue("q");
            }
            System.out.printf("%-18s %,10d ready  %6.1f heap bytes/message, %6.1f for one more  (%,d MB; %s took "
                + "%,d ms%s)%n", name, queue.readyCount(), (after - before) / (double) messages, marginal,
                (after - before) >> 20, name.equals("durable-recovered") ? "recovery" : "publishing", publishMillis,
                peak > 0 ? String.format("; heap used at its peak, garbage included: %,d MB", peak >> 20) : "");
            queue.delete().get();
            thread.submit(() -> { }).get();
            store.close();
        } finally {
            thread.shutdown();
            new ProcessBuilder("rm", "-rf", dir.toString()).inheritIO().start().waitFor();
        }
    }

    /** Used heap after collecting everything collectable. */
    static long usedHeap() throws InterruptedException {
        long used = Long.MAX_VALUE;
        for (int i = 0; i < 4; i++) {
            System.gc();
            Thread.sleep(100);
            used = Math.min(used, ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed());
        }
        return used;
    }

    /** 12 bytes of body in a data section, as a client sends it; a transient one has a header saying so. */
    private static Message message(int n, boolean durable) throws Exception {
        byte[] body = String.format("%012d", n).getBytes(java.nio.charset.StandardCharsets.US_ASCII);
        ByteBuf bytes = Unpooled.buffer(TRANSIENT_HEADER.length + 5 + body.length);
        if (!durable) {
            bytes.writeBytes(TRANSIENT_HEADER);
        }
        bytes.writeBytes(new byte[] {0x00, 0x53, 0x75, (byte) 0xa0, (byte) body.length}).writeBytes(body);
        return Amqp10Message.of(bytes, MessageSections.scan(bytes), true, "", "q");
    }
}
