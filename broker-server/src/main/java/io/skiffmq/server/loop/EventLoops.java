package io.skiffmq.server.loop;

import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.internal.ThreadExecutorMap;
import io.skiffmq.core.queue.QueueExecutor;
import java.util.Iterator;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicReferenceFieldUpdater;

/**
 * The broker's worker event loops as the core sees them: one {@link LoopMailbox} per loop, and where queues run.
 *
 * <p>A queue runs on the loop of its first user ({@link #placeQueue}): the first connection that publishes to it or
 * consumes from it (declaring alone does not place it, except with {@code x-expires}, whose timer needs its thread at
 * once: then the declaring connection's loop), so a queue used by one connection (or by
 * connections on one loop) never hands work across threads. Users on other loops reach it through its loop's
 * mailbox, in batches; placement is never moved later (a queue's state has one owner for its whole life, so nothing
 * needs to be handed over while work is in flight). A queue first touched off the worker loops (an expiry or TTL
 * timer, the management threads) takes the loops in turn. Thread-safe.
 */
public final class EventLoops {
    /** Null: no worker group (tests that run one connection on an embedded channel), so no placement either. */
    private final EventLoopGroup group;
    private final Map<EventLoop, LoopMailbox> mailboxes = new ConcurrentHashMap<>();
    private Iterator<EventExecutor> next;

    public EventLoops(EventLoopGroup group) {
        this.group = group;
    }

    /** The mailbox of {@code loop}, the same for every caller. */
    public LoopMailbox mailbox(EventLoop loop) {
        LoopMailbox mailbox = mailboxes.get(loop);
        return mailbox != null ? mailbox : mailboxes.computeIfAbsent(loop, LoopMailbox::new);
    }

    /** An executor for a new queue, bound to a loop when the queue is first used. */
    public QueueExecutor placeQueue() {
        if (group == null) {
            throw new IllegalStateException("no worker loops to place queues on");
        }
        return new Placement();
    }

    /** The worker loop the calling thread runs, or null when it runs none. */
    private EventLoop currentLoop() {
        EventExecutor current = ThreadExecutorMap.currentExecutor();
        return current instanceof EventLoop loop && loop.parent() == group ? loop : null;
    }

    private synchronized EventLoop nextLoop() {
        if (next == null || !next.hasNext()) {
            next = group.iterator();
        }
        return (EventLoop) next.next();
    }

    /**
     * A queue's executor, bound once to a loop's mailbox by the first call that needs a thread: the caller's loop
     * when it runs one of ours, else the next in turn. Binding is one compare-and-set, so two first users racing
     * agree on the winner's loop, and every later call sees it.
     */
    private final class Placement implements QueueExecutor {
        private static final AtomicReferenceFieldUpdater<Placement, LoopMailbox> BOUND =
            AtomicReferenceFieldUpdater.newUpdater(Placement.class, LoopMailbox.class, "bound");
        private volatile LoopMailbox bound;

        private LoopMailbox owner() {
            LoopMailbox mailbox = bound;
            return mailbox != null ? mailbox : bind();
        }

        private LoopMailbox bind() {
            EventLoop current = currentLoop();
            LoopMailbox candidate = EventLoops.this.mailbox(current != null ? current : nextLoop());
            return BOUND.compareAndSet(this, null, candidate) ? candidate : bound;
        }

        @Override
        public boolean inExecutor() {
            return owner().inExecutor();
        }

        @Override
        public void execute(Runnable task) {
            owner().execute(task);
        }

        @Override
        public void afterTurn(Runnable task) {
            owner().afterTurn(task);
        }

        @Override
        public void runBeforeUse(Runnable task) {
            if (bound == null && currentLoop() == null) {
                task.run(); // no owner yet and no loop involved: recovery, before the listener opens
            } else {
                run(task);
            }
        }
    }
}
