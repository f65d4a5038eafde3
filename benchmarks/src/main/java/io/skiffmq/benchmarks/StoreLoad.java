package io.skiffmq.benchmarks;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.skiffmq.codec.amqp10.MessageSections;
import io.skiffmq.core.VirtualHost;
import io.skiffmq.core.message.Amqp10Message;
import io.skiffmq.core.message.Message;
import io.skiffmq.core.queue.ClassicQueue;
import io.skiffmq.core.queue.ConsumerFlow;
import io.skiffmq.core.queue.ConsumerSink;
import io.skiffmq.core.queue.Outcome;
import io.skiffmq.core.queue.QueueConsumer;
import io.skiffmq.core.queue.QueueDelivery;
import io.skiffmq.core.queue.QueueExecutor;
import io.skiffmq.store.DiskStore;
import io.skiffmq.store.Journal;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The store under a durable classic queue, in process (no network, no client): what recovery and reclamation
 * cost.
 *
 * <ul>
 *   <li>{@code recovery [messages]}: publishes that many durable 12-byte messages (1,000,000 by default), closes
 *       the store, and times the restart (replay plus the queue's index) and the drain that follows;</li>
 *   <li>{@code reclaim [megabytes]}: publishes and consumes that many megabytes (1024 by default) of 1 KiB
 *       messages and reports the journal's disk use before, at its peak and after reclamation.</li>
 * </ul>
 *
 * <pre>
 * java $(cat broker-server/target/jvm.options) -cp benchmarks/target/benchmarks.jar \
 *     io.skiffmq.benchmarks.StoreLoad recovery 1000000
 * </pre>
 */
public final class StoreLoad {
    private static final int IN_FLIGHT = 10_000;

    private StoreLoad() {
    }

    public static void main(String[] args) throws Exception {
        String mode = args.length > 0 ? args[0] : "recovery";
        Path dir = Files.createTempDirectory("skiffmq-store-load");
        try {
            switch (mode) {
                case "recovery" -> recovery(dir, args.length > 1 ? Integer.parseInt(args[1]) : 1_000_000);
                case "reclaim" -> reclaim(dir, args.length > 1 ? Long.parseLong(args[1]) : 1024);
                default -> throw new IllegalArgumentException("usage: StoreLoad recovery|reclaim [amount]");
            }
        } finally {
            new ProcessBuilder("rm", "-rf", dir.toString()).inheritIO().start().waitFor();
        }
        System.exit(0);
    }

    /** A queue's own thread. */
    private static final class Loop implements QueueExecutor, AutoCloseable {
        final ExecutorService executor = Executors.newSingleThreadExecutor(r -> new Thread(r, "queue"));
        volatile Thread thread;

        Loop() throws Exception {
            executor.submit(() -> thread = Thread.currentThread()).get();
        }

        @Override
        public boolean inExecutor() {
            return Thread.currentThread() == thread;
        }

        @Override
        public void execute(Runnable task) {
            executor.execute(task);
        }

        void sync() throws Exception {
            executor.submit(() -> { }).get();
        }

        @Override
        public void close() {
            executor.shutdown();
        }
    }

    private static Message message(int size, long n) throws Exception {
        ByteBuf bytes = Unpooled.directBuffer(size + 8);
        byte[] body = new byte[size];
        byte[] id = Long.toString(n).getBytes(StandardCharsets.US_ASCII);
        System.arraycopy(id, 0, body, 0, Math.min(id.length, size));
        bytes.writeBytes(new byte[] {0x00, 0x53, 0x75});
        if (size < 256) {
            bytes.writeByte(0xa0).writeByte(size);
        } else {
            bytes.writeByte(0xb0).writeInt(size);
        }
        bytes.writeBytes(body);
        return Amqp10Message.of(bytes, MessageSections.scan(bytes), true, "", "q");
    }

    private static DiskStore open(Path dir, Loop loop, VirtualHost[] vhost) {
        DiskStore store = new DiskStore(dir, Journal.SyncPolicy.OS, Journal.DEFAULT_SEGMENT_BYTES, 16L << 20);
        vhost[0] = new VirtualHost("/", () -> loop, store);
        store.recover(vhost[0]);
        return store;
    }

    /** Publishes {@code count} messages of {@code size} bytes, at most {@link #IN_FLIGHT} unconfirmed. */
    private static void publish(ClassicQueue queue, long count, int size) throws Exception {
        Semaphore inFlight = new Semaphore(IN_FLIGHT);
        for (long n = 0; n < count; n++) {
            inFlight.acquire();
            queue.publish(message(size, n), inFlight::release);
        }
        inFlight.acquire(IN_FLIGHT);
    }

    /** A consumer that accepts everything; counts what it got. */
    private static final class Acceptor implements ConsumerSink {
        final AtomicLong received = new AtomicLong();
        ClassicQueue queue;
        QueueConsumer consumer;

        void start(ClassicQueue queue) {
            this.queue = queue;
            consumer = queue.subscribe(this, ConsumerFlow.credit(), false);
            queue.flow(consumer, 0, 1000, false, false);
        }

        @Override
        public void deliver(QueueDelivery delivery) {
            delivery.message().release();
            long n = received.incrementAndGet();
            // as a connection would: settle and top up credit after this dispatch, not inside it
            queue.executor().execute(() -> {
                queue.settle(consumer, delivery.tag(), delivery.tag(), Outcome.ACCEPTED);
                if (n % 500 == 0) {
                    queue.flow(consumer, n, 1000, false, false);
                }
            });
        }

        @Override
        public void creditState(long deliveryCount, long linkCredit, long available, boolean drain) {
        }

        @Override
        public void queueDeleted() {
        }
    }

    private static void recovery(Path dir, int count) throws Exception {
        VirtualHost[] vhost = new VirtualHost[1];
        try (Loop loop = new Loop()) {
            DiskStore store = open(dir, loop, vhost);
            ClassicQueue queue = (ClassicQueue) vhost[0].declareQueue("q", true, Map.of());
            long start = System.nanoTime();
            publish(queue, count, 12);
            System.out.printf("published %,d durable 12-byte messages in %.1f s%n", count,
                (System.nanoTime() - start) / 1e9);
            loop.sync();
            queue.close().get();
            store.close();
            System.out.println("journal on disk: " + du(dir));
        }
        try (Loop loop = new Loop()) {
            long start = System.nanoTime();
            DiskStore store = open(dir, loop, vhost);
            loop.sync();
            long recovered = System.nanoTime() - start;
            ClassicQueue queue = (ClassicQueue) vhost[0].queue("q");
            System.out.printf("recovered %,d messages in %d ms (replay and index; heap used %d MB)%n",
                queue.readyCount(), recovered / 1_000_000, heapUsedMb());
            Acceptor acceptor = new Acceptor();
            start = System.nanoTime();
            acceptor.start(queue);
            while (acceptor.received.get() < count) {
                Thread.sleep(10);
            }
            System.out.printf("drained them from the journal in %d ms%n", (System.nanoTime() - start) / 1_000_000);
            loop.sync();
            store.close();
        }
    }

    private static void reclaim(Path dir, long megabytes) throws Exception {
        int size = 1024;
        long count = megabytes * 1024;
        VirtualHost[] vhost = new VirtualHost[1];
        try (Loop loop = new Loop()) {
            DiskStore store = open(dir, loop, vhost);
            ClassicQueue queue = (ClassicQueue) vhost[0].declareQueue("q", true, Map.of());
            String before = du(dir);
            Acceptor acceptor = new Acceptor();
            acceptor.start(queue);
            String[] peak = {before};
            long[] peakKb = {0};
            Thread watcher = new Thread(() -> {
                while (!Thread.currentThread().isInterrupted()) {
                    String now = du(dir);
                    long kb = Long.parseLong(now.split("\\s+")[0]);
                    if (kb > peakKb[0]) {
                        peakKb[0] = kb;
                        peak[0] = now;
                    }
                    try {
                        Thread.sleep(200);
                    } catch (InterruptedException e) {
                        return;
                    }
                }
            });
            watcher.start();
            long start = System.nanoTime();
            publish(queue, count, size);
            while (acceptor.received.get() < count) {
                Thread.sleep(10);
            }
            System.out.printf("published and consumed %,d MB in %.1f s%n", megabytes,
                (System.nanoTime() - start) / 1e9);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (store.messages().segments().size() > 1 && System.nanoTime() < deadline) {
                Thread.sleep(50);
            }
            watcher.interrupt();
            watcher.join();
            System.out.println("journal on disk before: " + before);
            System.out.println("journal on disk at peak: " + peak[0]);
            System.out.println("journal on disk after:  " + du(dir) + " (" + store.messages().segments().size()
                + " segments)");
            loop.sync();
            store.close();
        }
    }

    private static String du(Path dir) {
        try {
            Process p = new ProcessBuilder("du", "-sk", dir.toString()).start();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
            p.waitFor();
            return out.split("\\s+")[0] + " KB";
        } catch (Exception e) {
            return "unknown (" + e + ")";
        }
    }

    private static long heapUsedMb() {
        System.gc();
        Runtime r = Runtime.getRuntime();
        return (r.totalMemory() - r.freeMemory()) >> 20;
    }
}
