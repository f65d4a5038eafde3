package io.skiffmq.core.queue;

/**
 * The thread a queue's state belongs to (in the broker, the event loop of the queue's first user, see
 * docs/architecture.md). Other threads reach the queue only by {@link #execute}; callers already on it run inline.
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

    /**
     * Runs {@code task} on the executor's thread once the work in hand is done: on an event loop, after this turn's
     * reads and tasks, so work that many events ask for (a queue's dispatch, a connection's flush) runs once per
     * turn. The caller keeps a flag so it asks once per turn. Without turns (this default), like {@link #run}.
     */
    default void afterTurn(Runnable task) {
        run(task);
    }

    /**
     * Runs {@code task} at once on the calling thread when no thread owns the queue yet (an executor that the
     * queue's first user will choose), otherwise as {@link #run}. Only for work that precedes every use and every
     * other thread, such as recovery before the broker listens; the owner's first task then happens after it.
     */
    default void runBeforeUse(Runnable task) {
        run(task);
    }
}
