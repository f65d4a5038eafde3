package io.skiffmq.store;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * Writes a virtual host's {@link Definitions} on a thread of its own, so no event loop and no lock waits for the
 * fsync. Snapshots are taken by the caller, in order; the writer writes the newest one waiting and completes every
 * save it covers (a burst of declarations costs one write). A save completes only once a snapshot taken at or after
 * it is durable.
 *
 * <p>{@link #save} is safe from any thread; {@link #pending} and {@link #waiting} are guarded by {@code this}.
 */
final class DefinitionsWriter implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(DefinitionsWriter.class.getName());

    private final Path file;
    private final Thread thread;
    private Definitions pending;
    private List<CompletableFuture<Void>> waiting = new ArrayList<>();
    private boolean closed;

    DefinitionsWriter(Path file) {
        this.file = file;
        this.thread = new Thread(this::run, "skiffmq-definitions");
        this.thread.setDaemon(true);
        this.thread.start();
    }

    /** Queues {@code snapshot} to be written; completes once it (or a later snapshot) is durable. */
    synchronized CompletableFuture<Void> save(Definitions snapshot) {
        CompletableFuture<Void> saved = new CompletableFuture<>();
        if (closed) {
            saved.completeExceptionally(new IllegalStateException("the store is closed"));
            return saved;
        }
        pending = snapshot;
        waiting.add(saved);
        notifyAll();
        return saved;
    }

    private void run() {
        for (;;) {
            Definitions snapshot;
            List<CompletableFuture<Void>> covered;
            synchronized (this) {
                while (pending == null && !closed) {
                    try {
                        wait();
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        return;
                    }
                }
                if (pending == null) {
                    return;
                }
                snapshot = pending;
                covered = waiting;
                pending = null;
                waiting = new ArrayList<>();
            }
            try {
                snapshot.write(file);
                covered.forEach(f -> f.complete(null));
            } catch (RuntimeException e) {
                LOG.log(System.Logger.Level.ERROR, "saving definitions to " + file + " failed", e);
                covered.forEach(f -> f.completeExceptionally(e));
            }
        }
    }

    /** Writes what is pending, then stops. */
    @Override
    public void close() {
        synchronized (this) {
            closed = true;
            notifyAll();
        }
        try {
            thread.join();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
