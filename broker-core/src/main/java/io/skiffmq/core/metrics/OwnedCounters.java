package io.skiffmq.core.metrics;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * A fixed set of counters written by one thread (the owner of what they count) and read by any. The owner adds
 * with a plain read and an opaque write: on x86 and ARM that is an ordinary load and store, with no fence, no
 * lock and no allocation, so counting costs nothing measurable on the message path. Readers (a metrics scrape,
 * the HTTP API) read opaquely: each value is whole (never torn) and recent, though two values read one after the
 * other may be from slightly different moments.
 *
 * <p>Only the owner thread calls {@link #add}; any thread calls {@link #get}.
 */
public abstract class OwnedCounters {
    private static final VarHandle VALUES = MethodHandles.arrayElementVarHandle(long[].class);

    private final long[] values;

    protected OwnedCounters(int count) {
        this.values = new long[count];
    }

    /** Adds {@code n} to counter {@code index}; on the owner's thread only. */
    protected final void add(int index, long n) {
        VALUES.setOpaque(values, index, values[index] + n);
    }

    /** Counter {@code index}, from any thread. */
    protected final long get(int index) {
        return (long) VALUES.getOpaque(values, index);
    }
}
