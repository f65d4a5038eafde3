package io.skiffmq.core.queue;

/**
 * The thread a queue's state belongs to (in the broker, one Netty event loop chosen when the queue is declared).
 * Other threads reach the queue only by {@link #execute}; callers already on it run inline.
 */
public interface QueueExecutor {
    /** Runs every task at once on the calling thread: for single-threaded tools, benchmarks and tests. */
    QueueExecutor CALLER_THREAD = new QueueExecutor() {
        @Override
        public boolean inExecutor() {
            return true;
        }

        @Override
        public void execute(Runnable task) {
            task.run();
        }
    };

    /** True when the calling thread is the executor's own. */
    boolean inExecutor();

    /** Runs {@code task} on the executor's thread, after the tasks already submitted (FIFO). */
    void execute(Runnable task);

    /** Runs {@code task} now when on the executor's thread, otherwise submits it. */
    default void run(Runnable task) {
        if (inExecutor()) {
            task.run();
        } else {
            execute(task);
        }
    }
}
