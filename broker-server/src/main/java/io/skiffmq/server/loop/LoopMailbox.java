package io.skiffmq.server.loop;

import io.netty.channel.EventLoop;
import io.netty.channel.SingleThreadEventLoop;
import io.netty.util.internal.PlatformDependent;
import io.skiffmq.core.queue.QueueExecutor;
import java.util.Queue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The one way work reaches an event loop through the core: every queue, publisher and link on the loop hands its
 * tasks to this multi-producer mailbox, and one loop task per turn runs all that were there when it began (a
 * {@link io.skiffmq.core.queue.Handoff} adds one task per burst, whatever number of items it carries). So a loop
 * fed by many queues wakes once per turn, not once per queue or link.
 *
 * <p>{@link #execute} is safe from any thread and FIFO per producer; tasks run on the loop's thread only. One per
 * event loop and broker ({@link EventLoops#mailbox}).
 */
public final class LoopMailbox implements QueueExecutor {
    private static final System.Logger LOG = System.getLogger(LoopMailbox.class.getName());
    /**
     * Tasks run per pass at most. A pass runs the tasks that were there when it began; the rest wait for the next
     * pass (the order of the tasks does not change).
     */
    static final int DRAIN_LIMIT = 4096;
    /**
     * Passes in one turn of the loop before the next waits for its I/O and after-turn work: a pass that hands work to
     * the next (a queue on this loop delivering to a connection on it) goes on at once, a producer that keeps up
     * cannot hold the loop for more than this many passes.
     */
    static final int PASSES_PER_TURN = 16;
    private final EventLoop loop;
    private final Queue<Runnable> tasks = PlatformDependent.newMpscQueue(1024, 1 << 30);
    private final AtomicBoolean scheduled = new AtomicBoolean();
    private final Runnable drain = this::drain;
    /** Passes since the loop last finished a turn (its after-turn work ran); owned by the loop. */
    private int passesThisTurn;
    private final Runnable turnEnded = () -> passesThisTurn = 0;

    LoopMailbox(EventLoop loop) {
        this.loop = loop;
    }

    @Override
    public boolean inExecutor() {
        return loop.inEventLoop();
    }

    @Override
    public void execute(Runnable task) {
        tasks.offer(task);
        if (!scheduled.get() && scheduled.compareAndSet(false, true)) {
            loop.execute(drain);
        }
    }

    /** After this iteration of the loop (its I/O and tasks); a loop without iterations (a test's) runs it as a task. */
    @Override
    public void afterTurn(Runnable task) {
        if (loop instanceof SingleThreadEventLoop iterating) {
            iterating.executeAfterEventLoopIteration(task);
        } else {
            loop.execute(task);
        }
    }

    private void drain() {
        // the flag stays set while we run: what these tasks hand over (a handoff's next batch among them) waits for
        // the next pass instead of starting one now
        int count = Math.min(tasks.size(), DRAIN_LIMIT);
        Runnable task;
        for (int n = 0; n < count && (task = tasks.poll()) != null; n++) {
            try {
                task.run();
            } catch (Throwable e) {
                // as the loop itself treats a failed task: logged, and the others still run
                LOG.log(System.Logger.Level.WARNING, "a task on " + loop + " failed", e);
            }
        }
        if (!tasks.isEmpty()) {
            if (++passesThisTurn == 1) {
                afterTurn(turnEnded);
            }
            if (passesThisTurn < PASSES_PER_TURN) {
                loop.execute(drain); // in this turn still: no wait for I/O when one pass hands work to the next
            } else {
                // after the loop's I/O and after-turn work (dispatches, flushes): a task scheduled with no delay is
                // taken at the start of the loop's next run of tasks, not in this one (an object per yield)
                loop.schedule(drain, 0, TimeUnit.NANOSECONDS);
            }
            return;
        }
        scheduled.set(false);
        if (!tasks.isEmpty() && scheduled.compareAndSet(false, true)) {
            loop.execute(drain); // offered between our last look and the flag's clearing
        }
    }
}
