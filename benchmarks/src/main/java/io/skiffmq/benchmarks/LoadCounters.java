package io.skiffmq.benchmarks;

import java.util.concurrent.atomic.AtomicLong;
import org.HdrHistogram.Recorder;

/**
 * What the engines of one {@link LoadTool} run count, written by their I/O or listener threads and read by the
 * thread that measures: thread-safe.
 */
final class LoadCounters {
    /** Messages the broker confirmed (accepted): a sender's message counts once confirmed. */
    final AtomicLong sent = new AtomicLong();
    final AtomicLong received = new AtomicLong();
    /** Refused or failed sends, damaged or out-of-order receipts, failed connections. */
    final AtomicLong errors = new AtomicLong();
    /** {@link System#nanoTime()} of the last receipt. */
    final AtomicLong lastReceipt = new AtomicLong();
    /** Send to receipt, in microseconds. */
    final Recorder latencies = new Recorder(3);
}
