package io.skiffmq.store;

import io.skiffmq.core.metrics.OwnedCounters;
import java.util.function.LongConsumer;

/**
 * What a {@link Journal}'s writer did: records and bytes written, segments moved to and the time that took, and how
 * long each sync took (told to a
 * {@link #onSync sync observer}, a metrics histogram in the broker). Read from any thread ({@link OwnedCounters});
 * each counter has one writer: the sync counters the journal's sync thread ({@link JournalSync}), the others the
 * writer thread. The observer is called on the sync thread, once per sync.
 */
public final class JournalCounters extends OwnedCounters {
    private static final int RECORDS = 0;
    private static final int BYTES = 1;
    private static final int SYNCS = 2;
    private static final int SYNC_NANOS = 3;
    private static final int ROLLS = 4;
    private static final int ROLL_NANOS = 5;
    private static final LongConsumer NONE = nanos -> { };

    private volatile LongConsumer syncObserver = NONE;

    JournalCounters() {
        super(6);
    }

    /** Who hears each sync's duration in nanoseconds, on the sync thread; it must be quick and not block. */
    public void onSync(LongConsumer observer) {
        syncObserver = observer == null ? NONE : observer;
    }

    void written(int bytes) {
        add(RECORDS, 1);
        add(BYTES, bytes);
    }

    void synced(long nanos) {
        add(SYNCS, 1);
        add(SYNC_NANOS, nanos);
        syncObserver.accept(nanos);
    }

    void rolled(long nanos) {
        add(ROLLS, 1);
        add(ROLL_NANOS, nanos);
    }

    /** Records written since the journal started. */
    public long records() {
        return get(RECORDS);
    }

    /** Bytes of records written since the journal started. */
    public long bytes() {
        return get(BYTES);
    }

    /** Syncs made (with sync-policy {@code sync}; none with {@code os}). */
    public long syncs() {
        return get(SYNCS);
    }

    /** Time spent in them, in nanoseconds. */
    public long syncNanos() {
        return get(SYNC_NANOS);
    }

    /** Times the writer moved to a new segment. */
    public long rolls() {
        return get(ROLLS);
    }

    /** The writer's time spent moving to new segments (closing the old, opening the new), in nanoseconds. */
    public long rollNanos() {
        return get(ROLL_NANOS);
    }
}
