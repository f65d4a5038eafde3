package io.skiffmq.benchmarks;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.util.concurrent.FastThreadLocalThread;
import io.skiffmq.store.Journal;
import io.skiffmq.store.JournalRecord;
import io.skiffmq.store.RecordDescriptor;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Group commit on the journal alone: N publisher threads append publish records of a 12-byte message, each with at
 * most {@code in-flight} awaiting durability, for a few seconds per sync policy; prints records/s, syncs/s and the
 * heap allocated per record by the publishers and the journal's writer thread together, and the CPU time per record
 * of the publishers and of the writer (thread CPU time, so other processes on the machine do not count). As a
 * queue's, the publishers are Netty threads, records are pooled direct buffers and the callback is one object per
 * publisher, so the allocation is the journal's own.
 *
 * <pre>
 * java -cp benchmarks/target/benchmarks.jar $(cat broker-server/target/jvm.options) \
 *     io.skiffmq.benchmarks.JournalLoad [seconds] [in-flight]
 * </pre>
 */
public final class JournalLoad {
    private static final com.sun.management.ThreadMXBean THREADS =
        (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();

    private JournalLoad() {
    }

    public static void main(String[] args) throws Exception {
        int seconds = args.length > 0 ? Integer.parseInt(args[0]) : 10;
        int inFlight = args.length > 1 ? Integer.parseInt(args[1]) : 1000;
        byte[] message = new byte[12];
        for (Journal.SyncPolicy policy : Journal.SyncPolicy.values()) {
            for (int publishers : new int[] {1, 4}) {
                Path dir = Files.createTempDirectory("skiffmq-journal-load");
                AtomicLong durable = new AtomicLong();
                AtomicLong allocated = new AtomicLong();
                AtomicLong publisherCpu = new AtomicLong();
                long writerCpu;
                long syncs;
                long elapsed;
                try (Journal journal = new Journal(dir, policy).start()) {
                    long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
                    List<Thread> threads = new ArrayList<>();
                    for (int p = 0; p < publishers; p++) {
                        long queue = p;
                        threads.add(new FastThreadLocalThread(() -> {
                            long before = THREADS.getCurrentThreadAllocatedBytes();
                            long cpuBefore = THREADS.getCurrentThreadCpuTime();
                            Semaphore window = new Semaphore(inFlight);
                            Runnable done = () -> {
                                durable.incrementAndGet();
                                window.release();
                            };
                            ByteBuf body = Unpooled.wrappedBuffer(message);
                            long sequence = 0;
                            while (System.nanoTime() < end) {
                                window.acquireUninterruptibly();
                                ByteBuf record = PooledByteBufAllocator.DEFAULT.directBuffer(64);
                                JournalRecord.writePublish(record, queue, sequence++, RecordDescriptor.FLAG_DURABLE, 0,
                                    "", "q", RecordDescriptor.FORMAT_AMQP_1_0, body);
                                journal.append(record, true, done);
                            }
                            allocated.addAndGet(THREADS.getCurrentThreadAllocatedBytes() - before);
                            publisherCpu.addAndGet(THREADS.getCurrentThreadCpuTime() - cpuBefore);
                        }));
                    }
                    long writer = writerThread();
                    long writerBefore = THREADS.getThreadAllocatedBytes(writer);
                    long writerCpuBefore = THREADS.getThreadCpuTime(writer);
                    long start = System.nanoTime();
                    threads.forEach(Thread::start);
                    for (Thread t : threads) {
                        t.join();
                    }
                    elapsed = System.nanoTime() - start;
                    syncs = journal.syncs();
                    allocated.addAndGet(THREADS.getThreadAllocatedBytes(writer) - writerBefore);
                    writerCpu = THREADS.getThreadCpuTime(writer) - writerCpuBefore;
                }
                double secs = elapsed / 1e9;
                long records = durable.get();
                System.out.printf("%-4s %d publisher(s): %,.0f durable records/s, %,.0f syncs/s, %,.0f B/record, "
                    + "CPU ns/record: publishers %,.0f, writer %,.0f%n", policy, publishers, records / secs,
                    syncs / secs, (double) allocated.get() / records, (double) publisherCpu.get() / records,
                    (double) writerCpu / records);
            }
        }
    }

    /** The id of the journal's writer thread (the one journal open). */
    private static long writerThread() {
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            if (t.getName().startsWith("skiffmq-journal-")) {
                return t.getId();
            }
        }
        throw new IllegalStateException("no journal writer thread");
    }
}
