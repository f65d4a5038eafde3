package io.skiffmq.benchmarks;

/**
 * The client side of a {@link LoadTool} run: its receivers and senders, counting into the run's
 * {@link LoadCounters}. {@code lean} ({@link LeanEngine}) is AMQP 1.0 on the project's codec; {@code jms}
 * ({@link JmsEngine}) is Qpid JMS, what JMS users see. Used by the thread that runs the load.
 */
interface LoadEngine extends AutoCloseable {
    /** Connects the receivers; returns once each has attached and granted its credit. */
    void startReceivers() throws Exception;

    /**
     * Connects the senders and starts them: each sends until {@code end} ({@link System#nanoTime()}) or until it
     * has sent its {@code --count}. A paced sender may forgive what it fell behind during the warm-up when the
     * measuring starts, at {@code measureFrom}: the warm-up is for the broker's JIT, not for the figures.
     */
    void startSenders(long measureFrom, long end) throws Exception;

    /** True while a sender has not finished: sent all it will and had each message confirmed or refused. */
    boolean sending();

    @Override
    void close() throws Exception;
}
