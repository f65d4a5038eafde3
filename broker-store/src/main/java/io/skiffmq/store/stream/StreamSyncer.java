package io.skiffmq.store.stream;

import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.locks.LockSupport;

/**
 * One thread that makes stream logs durable under {@code sync-policy = sync}, so no writer thread (an event loop)
 * ever waits for a disk: a log asks for a sync after a write, at most one request per log waits at a time, and
 * the sync covers everything written before it began, so a busy log gets few syncs (group commit). A log is
 * committed, and its {@link StreamLog.CommitListener}s run, on this thread. One syncer can serve every stream of a
 * broker; a log made without one makes its own.
 *
 * <p>Threads: {@link #request} from any thread; everything else is this syncer's thread.
 */
public final class StreamSyncer implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(StreamSyncer.class.getName());

    private final ConcurrentLinkedQueue<StreamLog> requests = new ConcurrentLinkedQueue<>();
    private final Thread thread;
    private volatile boolean closed;

    public StreamSyncer(String name) {
        thread = new Thread(this::run, name);
        thread.setDaemon(true);
        thread.start();
    }

    /** Queues a sync of {@code log}; the log makes sure it asks at most once until the sync starts. */
    void request(StreamLog log) {
        requests.add(log);
        LockSupport.unpark(thread);
    }

    private void run() {
        while (!closed || !requests.isEmpty()) {
            StreamLog log = requests.poll();
            if (log == null) {
                LockSupport.park(this);
                continue;
            }
            try {
                log.sync();
            } catch (RuntimeException e) {
                LOG.log(System.Logger.Level.ERROR, "stream log sync failed", e);
            }
        }
    }

    /** Syncs what was asked for, then stops the thread. */
    @Override
    public void close() {
        closed = true;
        LockSupport.unpark(thread);
        try {
            thread.join();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
