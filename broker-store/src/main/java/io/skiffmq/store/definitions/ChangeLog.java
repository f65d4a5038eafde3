package io.skiffmq.store.definitions;

import io.skiffmq.core.definitions.DefinitionChange;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * Durable definitions as a snapshot plus an append-only log of {@link DefinitionChange}s ({@link ChangeFile}):
 * {@code <name>.snapshot} and {@code <name>.log}. Each change costs one appended record, whatever the number of
 * definitions; recovery reads the snapshot and replays the log into a {@link Replica}.
 *
 * <p>Appends are group-committed on the log's own thread: it takes every change waiting, writes them with one
 * write, fsyncs, and only then completes their futures, so a change is confirmed no earlier than it is durable.
 * The writer keeps its own {@link Replica} of the state up to date (O(1) per change); once the log has grown past
 * {@link Compaction#ratio} times the snapshot (and {@link Compaction#minLogBytes}), it writes a new snapshot from the
 * replica and starts an empty log, on that same thread: the O(n) work of a compaction is never on an event loop,
 * and is paid once per O(n) changes.
 *
 * <p>Crash safety: a snapshot is written to a temporary file and renamed into place, then the log is replaced by an
 * empty one of the next generation, the same way. Both carry the generation in their header: a log older than the
 * snapshot (a crash between the two renames) holds nothing the snapshot lacks and is dropped. A torn last record
 * of the log (a crash mid-write; it was never confirmed) is dropped with a warning and cut off.
 *
 * <p>Threads: {@link #open} replays on the calling thread; {@link #replica()} belongs to that thread until
 * {@link #start}, then to the writer thread only. {@link #append} is safe from any thread, and changes are written
 * in the order of the calls; {@link #pending} and {@link #closed} are guarded by {@code this}.
 */
public final class ChangeLog implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(ChangeLog.class.getName());

    /** The state changes apply to, kept by the writer thread for compaction and read once at recovery. */
    public interface Replica {
        /** Applies one change, in O(1) of the state's size (a cascading deletion may touch what it takes along). */
        void apply(DefinitionChange change);

        /** The changes that build this state from nothing, in an order that replays: what a snapshot holds. */
        void snapshot(Consumer<DefinitionChange> out);
    }

    /**
     * When the log is compacted into a new snapshot.
     *
     * @param ratio the log may grow to this many times the snapshot's size
     * @param minLogBytes and to at least this many bytes (so small states are not rewritten after a few changes)
     */
    public record Compaction(double ratio, long minLogBytes) {
        /**
         * 4: a change is written about 1 + 1/(ratio - 1) ≈ 1.3 times in all (once appended, and in the snapshots
         * that follow), and the log stays a small multiple of the state. 1 MiB: some 15,000 small changes.
         */
        public static final Compaction DEFAULTS = new Compaction(4, 1 << 20);

        public Compaction {
            if (!(ratio >= 1)) {
                throw new IllegalArgumentException("the definitions log's compaction ratio must be >= 1");
            }
            if (minLogBytes < 0) {
                throw new IllegalArgumentException("the definitions log's minimum size must be >= 0");
            }
        }
    }

    private record Append(List<? extends DefinitionChange> changes, CompletableFuture<Void> done) {
    }

    private final Path snapshotFile;
    private final Path logFile;
    private final Replica replica;
    private final Compaction compaction;
    private final Thread thread;
    /** Written by the writer thread once started. */
    private FileChannel log;
    private long generation;
    private long logBytes;
    private long snapshotBytes;
    private int compactions;
    /** Guarded by {@code this}. */
    private List<Append> pending = new ArrayList<>();
    private boolean closed;
    private boolean started;

    private ChangeLog(Path directory, String name, Replica replica, Compaction compaction) {
        this.snapshotFile = directory.resolve(name + ".snapshot");
        this.logFile = directory.resolve(name + ".log");
        this.replica = replica;
        this.compaction = compaction;
        this.thread = new Thread(this::run, "skiffmq-definitions-" + directory.getFileName());
        this.thread.setDaemon(true);
    }

    /**
     * Recovers {@code directory/<name>.snapshot} and {@code .log} into {@code replica}. When neither exists,
     * {@code initial} is asked for the state to begin with (a first start's, or one migrated from an older format):
     * null begins empty, and anything else is written as the first snapshot before this returns.
     */
    public static ChangeLog open(Path directory, String name, Replica replica, Compaction compaction,
            Supplier<List<? extends DefinitionChange>> initial) {
        ChangeLog changeLog = new ChangeLog(directory, name, replica, compaction);
        try {
            Files.createDirectories(directory);
            changeLog.recover(initial);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot open the definitions in " + directory, e);
        }
        return changeLog;
    }

    /** True when {@code directory} holds definitions in this form. */
    public static boolean exists(Path directory, String name) {
        return Files.exists(directory.resolve(name + ".snapshot")) || Files.exists(directory.resolve(name + ".log"));
    }

    private void recover(Supplier<List<? extends DefinitionChange>> initial) throws IOException {
        if (Files.exists(snapshotFile)) {
            ChangeFile.Contents snapshot = ChangeFile.read(snapshotFile, ChangeFile.SNAPSHOT);
            if (snapshot.torn()) {
                throw new IllegalStateException("definitions snapshot " + snapshotFile + " is damaged at byte "
                    + snapshot.validBytes() + " of " + snapshot.fileBytes());
            }
            snapshot.changes().forEach(replica::apply);
            generation = snapshot.generation();
            snapshotBytes = snapshot.fileBytes();
        } else if (!Files.exists(logFile)) {
            List<? extends DefinitionChange> first = initial.get();
            if (first != null) {
                first.forEach(replica::apply);
                generation = 1;
                snapshotBytes = writeSnapshot();
            }
        }
        if (Files.exists(logFile)) {
            ChangeFile.Contents contents = ChangeFile.read(logFile, ChangeFile.LOG);
            if (contents.generation() == generation) {
                contents.changes().forEach(replica::apply);
                logBytes = contents.validBytes() - ChangeFile.HEADER_BYTES;
                if (contents.torn()) {
                    LOG.log(System.Logger.Level.WARNING, "{0}: dropped a torn last change ({1} bytes at byte {2}),"
                        + " written when the broker stopped and never confirmed", logFile,
                        contents.fileBytes() - contents.validBytes(), contents.validBytes());
                    try (FileChannel channel = FileChannel.open(logFile, StandardOpenOption.WRITE)) {
                        channel.truncate(contents.validBytes());
                        channel.force(true);
                    }
                }
            } else if (contents.generation() < generation) {
                // a compaction stopped between its snapshot and its new log: the snapshot has all of this log
                ChangeFile.replace(logFile, ChangeFile.LOG, generation, List.of());
            } else {
                throw new IllegalStateException("definitions log " + logFile + " is of generation "
                    + contents.generation() + " and its snapshot " + snapshotFile + " of " + generation
                    + ": the snapshot is missing");
            }
        } else {
            ChangeFile.replace(logFile, ChangeFile.LOG, generation, List.of());
        }
        log = FileChannel.open(logFile, StandardOpenOption.WRITE);
        log.position(log.size());
    }

    /** The replica: the recovered state until {@link #start}; the writer thread's afterwards. */
    public Replica replica() {
        return replica;
    }

    /** Starts the writer; appends made before wait for it. */
    public synchronized void start() {
        if (!started && !closed) {
            started = true;
            thread.start();
        }
    }

    /** Appends one change; see {@link #append(List)}. */
    public CompletableFuture<Void> append(DefinitionChange change) {
        return append(List.of(change));
    }

    /**
     * Appends changes, after every change appended before; returns at once.
     *
     * @return completes once they are durable, or fails with the write's error
     */
    public synchronized CompletableFuture<Void> append(List<? extends DefinitionChange> changes) {
        CompletableFuture<Void> done = new CompletableFuture<>();
        if (closed) {
            done.completeExceptionally(new IllegalStateException("the definitions log " + logFile + " is closed"));
            return done;
        }
        pending.add(new Append(changes, done));
        notifyAll();
        return done;
    }

    /** How many compactions this log made since it was opened (for tests and logs). */
    public synchronized int compactions() {
        return compactions;
    }

    private void run() {
        for (;;) {
            List<Append> batch;
            synchronized (this) {
                while (pending.isEmpty() && !closed) {
                    try {
                        wait();
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        return;
                    }
                }
                if (pending.isEmpty()) {
                    return;
                }
                batch = pending;
                pending = new ArrayList<>();
            }
            write(batch);
        }
    }

    /** One write and one fsync for everything waiting: the group commit. */
    private void write(List<Append> batch) {
        List<DefinitionChange> changes = new ArrayList<>();
        batch.forEach(a -> changes.addAll(a.changes()));
        try {
            ByteBuffer records = ChangeFile.records(changes);
            int size = records.remaining();
            ChangeFile.writeFully(log, records);
            log.force(false);
            logBytes += size;
        } catch (IOException | RuntimeException e) {
            LOG.log(System.Logger.Level.ERROR, "writing definitions to " + logFile + " failed", e);
            batch.forEach(a -> a.done().completeExceptionally(e));
            return;
        }
        changes.forEach(replica::apply);
        batch.forEach(a -> a.done().complete(null));
        if (logBytes > Math.max(compaction.minLogBytes(), (long) (compaction.ratio() * snapshotBytes))) {
            try {
                compact();
            } catch (IOException | RuntimeException e) {
                // the log is intact and still appended to; the next batch tries again
                LOG.log(System.Logger.Level.ERROR, "compacting the definitions in " + logFile + " failed", e);
            }
        }
    }

    /** A new snapshot from the replica, then an empty log of its generation. Writer thread. */
    private void compact() throws IOException {
        long started = System.nanoTime();
        long logged = logBytes;
        generation++;
        snapshotBytes = writeSnapshot();
        ChangeFile.replace(logFile, ChangeFile.LOG, generation, List.of());
        log.close();
        log = FileChannel.open(logFile, StandardOpenOption.WRITE);
        log.position(log.size());
        logBytes = 0;
        synchronized (this) {
            compactions++;
        }
        LOG.log(System.Logger.Level.DEBUG, "{0}: {1} bytes of changes compacted into a snapshot of {2} bytes in {3}"
            + " ms", logFile, logged, snapshotBytes, (System.nanoTime() - started) / 1_000_000);
    }

    private long writeSnapshot() {
        List<DefinitionChange> state = new ArrayList<>();
        replica.snapshot(state::add);
        return ChangeFile.replace(snapshotFile, ChangeFile.SNAPSHOT, generation, state);
    }

    /** Writes what is pending, then stops. */
    @Override
    public void close() {
        boolean join;
        synchronized (this) {
            closed = true;
            join = started;
            notifyAll();
        }
        if (join) {
            try {
                thread.join();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        List<Append> abandoned;
        synchronized (this) {
            abandoned = pending;
            pending = new ArrayList<>();
        }
        abandoned.forEach(a -> a.done().completeExceptionally(new IllegalStateException("closed before written")));
        try {
            log.close();
        } catch (IOException e) {
            LOG.log(System.Logger.Level.WARNING, "closing " + logFile, e);
        }
    }
}
