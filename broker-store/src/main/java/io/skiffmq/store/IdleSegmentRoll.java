package io.skiffmq.store;

/**
 * Leaves a journal's segment being written for a fresh one when it holds nothing live and the journal has been
 * idle since the previous attempt, so that an idle, empty journal shrinks to almost nothing.
 *
 * <p>Why only when idle: under a steady flow whose consumers keep up, the segment being written is empty of live
 * messages most of the time. Rolling it whenever it held a mebibyte moved the writer to a new segment about every
 * second at 60k msg/s (and at every 200 ms maintenance pass near 230k): each roll closed and opened a Chronicle
 * queue, created a file and synced the directory on the writer thread, and every confirm of the next batch waited
 * for it (docs/benchmarks.md, "Durable latency (issue 30, item 1)"). Under load, segments now roll at their size.
 *
 * <p>Threads: {@link #attempt} from one thread at a time (the store's maintenance thread), which owns
 * {@link #recordsBefore}.
 */
final class IdleSegmentRoll {
    private final Journal journal;
    private final long minBytes;
    /** Records the journal had written at the previous attempt; -1 before the first. */
    private long recordsBefore = -1;

    /** @param minBytes a segment holding less is left as it is, idle or not */
    IdleSegmentRoll(Journal journal, long minBytes) {
        this.journal = journal;
        this.minBytes = minBytes;
    }

    /** @return true when it rolled: the journal wrote nothing since the previous attempt, and the segment is dead */
    boolean attempt() {
        long records = journal.counters().records();
        boolean idle = records == recordsBefore;
        recordsBefore = records;
        return idle && journal.rollIfDead(minBytes);
    }
}
