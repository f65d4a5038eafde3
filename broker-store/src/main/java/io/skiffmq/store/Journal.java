package io.skiffmq.store;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Consumer;
import net.openhft.chronicle.bytes.Bytes;
import net.openhft.chronicle.bytes.SyncMode;
import net.openhft.chronicle.queue.ExcerptAppender;
import net.openhft.chronicle.queue.ExcerptTailer;
import net.openhft.chronicle.queue.impl.single.SingleChronicleQueue;
import net.openhft.chronicle.queue.impl.single.SingleChronicleQueueBuilder;
import net.openhft.chronicle.wire.DocumentContext;

/**
 * The journal of one virtual host on Chronicle Queue, with group commit: any thread {@link #append}s a record and
 * a callback; one writer thread drains what is pending, appends it all, makes it durable once per batch, then runs
 * every callback of the batch. A batch ends when nothing more is pending or it reaches {@link #MAX_BATCH} records.
 *
 * <table>
 *   <caption>Sync policies</caption>
 *   <tr><th>policy</th><th>a confirmed record survives</th><th>cost</th></tr>
 *   <tr><td>{@link SyncPolicy#SYNC}</td><td>a crash of the process, the OS or the power (fsync per batch)</td>
 *       <td>one sync per batch</td></tr>
 *   <tr><td>{@link SyncPolicy#OS}</td><td>a crash of the process only: the OS page cache holds it</td>
 *       <td>none</td></tr>
 * </table>
 *
 * <p>Threads: {@link #append} from any thread (a lock-free queue); the Chronicle appender belongs to the writer
 * thread alone, as Chronicle requires. {@link #replay} reads with its own tailer and runs before appends start.
 */
public final class Journal implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(Journal.class.getName());
    /** Records per batch at most, so callbacks of early records are not held back by an endless stream. */
    public static final int MAX_BATCH = 4096;

    public enum SyncPolicy { SYNC, OS }

    private record Pending(ByteBuf record, Runnable durable) {
    }

    private final SingleChronicleQueue queue;
    private final SyncPolicy policy;
    private final ConcurrentLinkedQueue<Pending> pending = new ConcurrentLinkedQueue<>();
    private final Thread writer;
    private final AtomicLong syncs = new AtomicLong();
    private volatile boolean closing;

    public Journal(Path directory, SyncPolicy policy) {
        this.policy = policy;
        this.queue = SingleChronicleQueueBuilder.binary(directory)
            .syncMode(policy == SyncPolicy.SYNC ? SyncMode.SYNC : SyncMode.NONE).build();
        this.writer = new Thread(this::writeLoop, "skiffmq-journal-" + directory.getFileName());
        this.writer.setDaemon(true);
    }

    /** Starts the writer thread; call after {@link #replay}. */
    public Journal start() {
        writer.start();
        return this;
    }

    /**
     * Queues a record (built with {@link JournalRecord}) to be written; {@code durable} runs on the writer thread
     * once it is as durable as the policy promises.
     *
     * @param record the record's bytes; the journal releases them
     */
    public void append(ByteBuf record, Runnable durable) {
        if (closing) {
            record.release();
            throw new IllegalStateException("journal is closed");
        }
        pending.add(new Pending(record, durable));
        LockSupport.unpark(writer);
    }

    /** How many syncs the journal has made: with group commit, far fewer than records. */
    public long syncs() {
        return syncs.get();
    }

    private void writeLoop() {
        ExcerptAppender appender = queue.createAppender();
        List<Pending> batch = new ArrayList<>(MAX_BATCH);
        while (!closing || !pending.isEmpty()) {
            for (Pending p; batch.size() < MAX_BATCH && (p = pending.poll()) != null; ) {
                batch.add(p);
            }
            if (batch.isEmpty()) {
                LockSupport.parkNanos(this, 1_000_000);
                continue;
            }
            for (Pending p : batch) {
                ByteBuf record = p.record();
                appender.writeBytes(Bytes.wrapForRead(record.nioBuffer()));
                record.release();
            }
            if (policy == SyncPolicy.SYNC) {
                appender.sync();
                syncs.incrementAndGet();
            }
            for (Pending p : batch) {
                try {
                    p.durable().run();
                } catch (RuntimeException e) {
                    LOG.log(System.Logger.Level.ERROR, "journal callback failed", e);
                }
            }
            batch.clear();
        }
        appender.close();
    }

    /**
     * Reads every record from the start, in order, into {@code records}. A record that is cut short or corrupt
     * ends the replay with a warning: everything after it was never confirmed.
     *
     * @return the number of records read
     */
    public long replay(Consumer<JournalRecord.Read> records) {
        long count = 0;
        try (ExcerptTailer tailer = queue.createTailer().toStart()) {
            while (true) {
                try (DocumentContext document = tailer.readingDocument()) {
                    if (!document.isPresent()) {
                        return count;
                    }
                    ByteBuf buf = Unpooled.wrappedBuffer(document.wire().bytes().toByteArray());
                    try {
                        records.accept(JournalRecord.read(buf));
                        count++;
                    } catch (JournalRecord.Corrupt e) {
                        LOG.log(System.Logger.Level.WARNING, "journal ends at a damaged record after {0} good ones: {1}",
                            count, e.getMessage());
                        return count;
                    }
                }
            }
        }
    }

    /** Writes and confirms what is pending, then stops the writer and closes the files. */
    @Override
    public void close() {
        closing = true;
        if (writer.isAlive()) {
            LockSupport.unpark(writer);
            try {
                writer.join();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        queue.close();
    }
}
