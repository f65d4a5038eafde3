package io.skiffmq.benchmarks;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.skiffmq.store.Journal;
import io.skiffmq.store.JournalRecord;
import io.skiffmq.store.RecordDescriptor;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Group commit on the journal alone: N publisher threads append publish records of a 12-byte message, each with at
 * most {@code in-flight} awaiting durability, for a few seconds per sync policy; prints records/s and syncs/s.
 *
 * <pre>
 * java -cp benchmarks/target/benchmarks.jar $(cat broker-server/target/jvm.options) \
 *     io.skiffmq.benchmarks.JournalLoad [seconds] [in-flight]
 * </pre>
 */
public final class JournalLoad {
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
                long syncs;
                long elapsed;
                try (Journal journal = new Journal(dir, policy).start()) {
                    long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
                    List<Thread> threads = new ArrayList<>();
                    for (int p = 0; p < publishers; p++) {
                        long queue = p;
                        threads.add(new Thread(() -> {
                            Semaphore window = new Semaphore(inFlight);
                            long sequence = 0;
                            while (System.nanoTime() < end) {
                                window.acquireUninterruptibly();
                                ByteBuf record = Unpooled.buffer(64);
                                JournalRecord.writePublish(record, queue, sequence++, RecordDescriptor.FLAG_DURABLE, 0,
                                    "", "q", RecordDescriptor.FORMAT_AMQP_1_0, Unpooled.wrappedBuffer(message));
                                journal.append(record, () -> {
                                    durable.incrementAndGet();
                                    window.release();
                                });
                            }
                        }));
                    }
                    long start = System.nanoTime();
                    threads.forEach(Thread::start);
                    for (Thread t : threads) {
                        t.join();
                    }
                    elapsed = System.nanoTime() - start;
                    syncs = journal.syncs();
                }
                double secs = elapsed / 1e9;
                System.out.printf("%-4s %d publisher(s): %,.0f durable records/s, %,.0f syncs/s%n", policy, publishers,
                    durable.get() / secs, syncs / secs);
            }
        }
    }
}
