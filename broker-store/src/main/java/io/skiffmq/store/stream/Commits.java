package io.skiffmq.store.stream;

import static io.skiffmq.store.stream.ChunkDescriptor.TYPE_USER;

import java.nio.file.Path;
import java.util.Arrays;
import java.util.function.Supplier;

/**
 * How far a {@link StreamLog} is committed (its location, offset and user chunk) and who hears of it.
 *
 * <p>Threads: {@link #through} by whoever commits (the writer under {@code os}, the syncer under {@code sync}, the
 * writer closing the log), one at a time under this object's lock; it reads the indexes of segments it holds a
 * reference to, since retention (the writer's) may be releasing old ones meanwhile. Listeners are called outside
 * the lock. Everything else from any thread.
 */
final class Commits {
    /** What {@link #through} answers when nothing new is committed. */
    static final long UNCHANGED = Long.MIN_VALUE;
    private static final System.Logger LOG = System.getLogger(Commits.class.getName());

    private final Supplier<Segment[]> segments;
    private final Path directory;
    private final Object listenersLock = new Object();
    private volatile StreamLog.CommitListener[] listeners = new StreamLog.CommitListener[0];
    /** The last committed chunk's location: its segment number in the high 32 bits, its ordinal in the low. */
    private volatile long location = -1;
    private volatile long offset = -1;
    private volatile long chunkId = -1;

    Commits(Supplier<Segment[]> segments, Path directory) {
        this.segments = segments;
        this.directory = directory;
    }

    long location() {
        return location;
    }

    long offset() {
        return offset;
    }

    long chunkId() {
        return chunkId;
    }

    /**
     * Commits every chunk up to {@code location}.
     *
     * @return the new committed offset, or {@link #UNCHANGED}
     */
    synchronized long through(long location) {
        if (location <= this.location) {
            return UNCHANGED;
        }
        Segment segment = Segment.retained(segments.get(), location >>> 32);
        if (segment == null) {
            return UNCHANGED; // deleted: a later location commits what is left
        }
        long committed;
        try {
            committed = segment.index.nextOffset((int) location) - 1;
        } finally {
            segment.release();
        }
        this.location = location;
        if (committed == offset) {
            return UNCHANGED;
        }
        offset = committed;
        chunkId = chunkHolding(committed);
        return committed;
    }

    /** Tells the listeners of a new committed offset, unless {@link #UNCHANGED}. */
    void tell(long committed) {
        if (committed != UNCHANGED) {
            for (StreamLog.CommitListener listener : listeners) {
                try {
                    listener.committed(committed);
                } catch (RuntimeException e) {
                    // a listener's bug is not the log's failure
                    LOG.log(System.Logger.Level.ERROR, "stream log " + directory + ": a commit listener failed", e);
                }
            }
        }
    }

    /** The id of the user chunk holding {@code offset}, or -1. */
    private long chunkHolding(long offset) {
        Segment[] all = segments.get();
        for (int s = all.length - 1; s >= 0; s--) {
            Segment segment = all[s];
            if (segment.firstChunkId <= offset && segment.tryRetain()) {
                try {
                    SegmentIndex index = segment.index;
                    for (int i = index.floor(offset); i >= 0; i--) {
                        if (index.type(i) == TYPE_USER) {
                            return index.chunkId(i);
                        }
                    }
                } finally {
                    segment.release();
                }
            }
        }
        return -1;
    }

    void add(StreamLog.CommitListener listener) {
        synchronized (listenersLock) {
            StreamLog.CommitListener[] current = listeners;
            StreamLog.CommitListener[] next = Arrays.copyOf(current, current.length + 1);
            next[current.length] = listener;
            listeners = next;
        }
    }

    void remove(StreamLog.CommitListener listener) {
        synchronized (listenersLock) {
            listeners = Arrays.stream(listeners).filter(l -> l != listener).toArray(StreamLog.CommitListener[]::new);
        }
    }
}
