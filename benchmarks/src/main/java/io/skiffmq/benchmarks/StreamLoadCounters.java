package io.skiffmq.benchmarks;

import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import org.HdrHistogram.Recorder;

/**
 * What the producers and consumers of one {@link StreamLoad} run count, written by the clients' I/O threads and the
 * producers' threads, read by the thread that measures: thread-safe.
 */
final class StreamLoadCounters {
    final LongAdder confirmed = new LongAdder();
    final LongAdder consumed = new LongAdder();
    /** Chunks consumers received, and their data's bytes (the deliver frames' chunk sizes). */
    final LongAdder chunks = new LongAdder();
    final LongAdder bytes = new LongAdder();
    /** Refused publishes, damaged messages. */
    final LongAdder errors = new LongAdder();
    /** {@link System#nanoTime()} of the last confirm and of the last message consumed. */
    final AtomicLong lastConfirm = new AtomicLong();
    final AtomicLong lastConsume = new AtomicLong();
    /** Publish to confirm, and send to receipt (messages sent in this run), in microseconds. */
    final Recorder confirmLatency = new Recorder(3);
    final Recorder latency = new Recorder(3);
    /** Why the run cannot go on (a connection closed), or null. */
    volatile String failure;

    void fail(String why) {
        if (failure == null) {
            failure = why;
        }
    }
}
