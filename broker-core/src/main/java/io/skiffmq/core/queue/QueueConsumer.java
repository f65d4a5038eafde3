package io.skiffmq.core.queue;

import io.skiffmq.core.filter.Selector;

/**
 * A queue's record of one consumer: how its deliveries are paced ({@link ConsumerFlow}), its credit state, and its
 * unsettled deliveries by tag. Owned by the queue's thread; other threads hold it only as a handle to pass back to
 * the queue. A queue of another type than classic keeps its own record of the consumer ({@link #state()}) and
 * uses this only as the handle.
 */
public final class QueueConsumer {
    final Queue queue;
    /** The record a queue of another type keeps for this consumer; null for a classic queue's. */
    private final Object state;
    final ConsumerSink sink;
    final ConsumerFlow flow;
    final boolean preSettled;
    /** Higher goes first; see {@link ConsumerRing}. */
    final int priority;
    /**
     * The channel-wide limit its deliveries wait for (0-9-1 {@code basic.qos global}), counted against it unless
     * pre-settled; null for none. From its flow, or set later by {@link Queue#limit}.
     */
    PrefetchLimit channelLimit;
    /** Queued in its {@link #channelLimit}'s waiting consumers; guarded by that limit's lock, not the queue's thread. */
    boolean waitingForSlot;
    /** Times its queue asked {@link #channelLimit} for a slot for it; the queue's thread's. */
    long slotAsks;
    /** [2.6.7] the sender's delivery-count, a 32-bit serial number. Starts at 0 (our initial-delivery-count). */
    long deliveryCount;
    long credit;
    boolean drain;
    boolean removed;
    /** The tag of the next delivery: 0, 1, 2, … per consumer, so ranges of them can be settled at once. */
    long nextTag;
    final UnsettledDeliveries unsettled = new UnsettledDeliveries();
    /** Only messages it matches go to this consumer ({@link SelectiveDispatch}); null for every message. */
    final Selector selector;
    /** {@link SelectiveDispatch}'s state: per lane, the last arrival looked at and not wanted; null until one. */
    long[] cursors;
    /** {@link SelectiveDispatch}'s evaluations left in the dispatch numbered {@link #budgetDispatch}. */
    int budget;
    long budgetDispatch = -1;
    /** {@link SelectiveDispatch}'s state: {@link WaitingMessages#changes()} when it last wanted nothing at all. */
    long foundNothingAt = -1;
    /** {@link SelectiveDispatch}'s state: given-back entries counted when it last wanted none of them. */
    long returnedSeen = -1;

    QueueConsumer(ClassicQueue queue, ConsumerSink sink, ConsumerFlow flow, boolean preSettled, int priority,
            Selector selector) {
        this(queue, sink, flow, preSettled, priority, selector, null);
    }

    private QueueConsumer(Queue queue, ConsumerSink sink, ConsumerFlow flow, boolean preSettled, int priority,
            Selector selector, Object state) {
        this.queue = queue;
        this.state = state;
        this.selector = selector;
        this.priority = priority;
        this.sink = sink;
        this.flow = flow;
        this.preSettled = preSettled;
        this.channelLimit = flow.channelLimit();
    }

    /** True when this consumer may be sent one more delivery (the channel-wide limit is asked separately). */
    boolean hasRoom() {
        return switch (flow.kind()) {
            case CREDIT -> credit > 0;
            case PREFETCH -> preSettled || flow.prefetch() == 0 || unsettled.size() < flow.prefetch();
            case PULL -> false;
        };
    }

    /** The handle of a consumer of another queue type, which keeps its own record of it ({@code state}). */
    public static QueueConsumer handle(Queue queue, ConsumerSink sink, ConsumerFlow flow, boolean preSettled,
            Object state) {
        return new QueueConsumer(queue, sink, flow, preSettled, 0, null, state);
    }

    /** The record the consumer's queue keeps for it, when the queue is not a classic one. */
    public Object state() {
        return state;
    }
}
