package io.skiffmq.core.queue;

import java.util.ArrayDeque;

/**
 * The calling thread, with turns, as an event loop runs them: tasks run at once, what is asked for after the turn
 * ({@link #afterTurn}: a queue's dispatch, a stream's chunk write) waits until {@link #endTurn}. For single-threaded
 * tools and tests that need the batching turns give; not thread-safe.
 */
public final class TurnExecutor implements QueueExecutor {
    private final ArrayDeque<Runnable> afterTurn = new ArrayDeque<>();

    @Override
    public boolean inExecutor() {
        return true;
    }

    @Override
    public void execute(Runnable task) {
        task.run();
    }

    @Override
    public void afterTurn(Runnable task) {
        afterTurn.add(task);
    }

    /** Tasks waiting for the end of the turn. */
    public int waiting() {
        return afterTurn.size();
    }

    /** Runs the first task waiting for the end of the turn (what it asks for after the turn waits); false if none. */
    public boolean runOne() {
        Runnable task = afterTurn.poll();
        if (task != null) {
            task.run();
        }
        return task != null;
    }

    /** Runs what the turn left, and what that asks for after it, until nothing is left. */
    public void endTurn() {
        for (Runnable task; (task = afterTurn.poll()) != null; ) {
            task.run();
        }
    }
}
