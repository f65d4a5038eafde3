package io.skiffmq.server.cluster;

import io.skiffmq.core.BrokerException;
import io.skiffmq.core.VirtualHost;
import io.skiffmq.core.definitions.DefinitionChange.QueueHomed;
import io.skiffmq.core.filter.Selector;
import io.skiffmq.core.message.Message;
import io.skiffmq.core.metrics.QueueCounters;
import io.skiffmq.core.queue.ConsumerFlow;
import io.skiffmq.core.queue.ConsumerSink;
import io.skiffmq.core.queue.Outcome;
import io.skiffmq.core.queue.PrefetchLimit;
import io.skiffmq.core.queue.PublishConfirm;
import io.skiffmq.core.queue.Queue;
import io.skiffmq.core.queue.QueueConsumer;
import io.skiffmq.core.queue.QueueCounts;
import io.skiffmq.core.queue.QueueDeclaration;
import io.skiffmq.core.queue.QueueDelivery;
import io.skiffmq.core.queue.QueueExecutor;
import io.skiffmq.core.queue.QueueType;
import io.skiffmq.server.peer.PeerLinks;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * One consumer of a replicated quorum queue, as its channel or link sees the queue: it stays subscribed while the
 * queue's leader changes, as RabbitMQ's channel keeps a quorum queue's consumers (docs/quorum-queues.md, "How it is
 * replicated"). Underneath it subscribes to what serves the queue on this node now, the live queue when this node
 * leads, else the leader's queue over the node links; when that goes while the queue's record stays (a new leader),
 * it subscribes again to the next one, with the same flow, prefetch, exclusivity and priority, and passes on no
 * {@code queueDeleted} to its consumer. When the record goes (the queue deleted), its consumer is told as before.
 *
 * <p>Each subscription underneath is a <em>generation</em>. Delivery tags go on from one generation to the next
 * (those of a later one are offset by what the earlier ones used), so the channel's tags never repeat. A settlement
 * of an earlier generation's tag is dropped: that message was not settled at the leader that is gone, and the new
 * leader, whose live queue is rebuilt from its replica with every unsettled message ready again, redelivers it
 * (redelivered, with its {@code x-delivery-count}). Nothing confirmed is lost; a message acked just before the leader
 * went may come twice.
 *
 * <p>A first subscription first checks that the queue's group commits (on the leader's node, an empty command; from
 * another node, the leader's node must be reached): without a majority, after the append timeout, it is refused
 * with {@link #NO_MAJORITY}, the answer that becomes RabbitMQ's 541.
 *
 * <p>Threads: subscribing, moving and unsubscribing hold this object's lock; a settlement or a flow reads the
 * current generation (volatile) without it. Each generation's sink methods run on its queue's thread.
 */
final class MovingConsumer implements Queue {
    /** The start of a refusal because the queue's group has no majority (or no leader) within the timeout. */
    static final String NO_MAJORITY = "timed out consuming from quorum ";
    private static final long RETRY_MILLIS = 100;

    private final ReplicatedQueues replicated;
    private final VirtualHost vhost;
    private final QueueHomed record;
    private final Queue first;
    private final long timeoutMillis;

    private ConsumerSink sink;
    private ConsumerFlow flow;
    private boolean preSettled;
    private boolean exclusive;
    private int priority;
    private PrefetchLimit channelLimit;
    /** The last flow its consumer asked for (a credit consumer), in its own delivery-count: replayed on a move. */
    private long flowDeliveryCount = -1;
    private long flowCredit;
    private boolean flowed;
    private boolean closed;
    private boolean cancelled;
    /** Until when a first subscription is tried ({@link System#nanoTime()}); set once, when it is asked for. */
    private long firstDeadline;
    private volatile Generation current;
    /** The first tag and delivery-count the next generation starts from. */
    private long nextTag;
    private long nextCount;

    MovingConsumer(ReplicatedQueues replicated, VirtualHost vhost, QueueHomed record, Queue first,
            long timeoutMillis) {
        this.replicated = replicated;
        this.vhost = vhost;
        this.record = record;
        this.first = first;
        this.timeoutMillis = timeoutMillis;
    }

    /** One subscription underneath, to one leader's queue. */
    private final class Generation implements ConsumerSink {
        final Queue queue;
        final long tagBase;
        final long countBase;
        final boolean firstOne;
        QueueConsumer inner;
        /** The queue refused the subscription: there is nothing to unsubscribe. */
        volatile boolean refused;
        /** On the queue's thread: the tag after the last one delivered, and deliveries, in this consumer's terms. */
        volatile long tagAfter;
        volatile long countAfter;

        Generation(Queue queue, long tagBase, long countBase, boolean firstOne) {
            this.queue = queue;
            this.tagBase = tagBase;
            this.countBase = countBase;
            this.firstOne = firstOne;
            this.tagAfter = tagBase;
            this.countAfter = countBase;
        }

        @Override
        public void deliver(QueueDelivery delivery) {
            long tag = delivery.tag() + tagBase;
            tagAfter = Math.max(tagAfter, tag + 1);
            countAfter++;
            sink.deliver(tagBase == 0 ? delivery : QueueDelivery.of(delivery.message(), tag,
                delivery.deliveryCount(), delivery.returns(), delivery.firstAcquirer(), delivery.remaining()));
        }

        @Override
        public void creditState(long deliveryCount, long linkCredit, long available, boolean drain) {
            sink.creditState((deliveryCount + countBase) & 0xFFFFFFFFL, linkCredit, available, drain);
        }

        @Override
        public void queueDeleted() {
            gone(this, null, false);
        }

        @Override
        public void subscribed() {
            if (firstOne) {
                sink.subscribed();
            }
        }

        @Override
        public void refused(String reason) {
            refused = true;
            // a first subscription to the leader's queue whose stand-in here went meanwhile (a newer leader
            // recorded, as on a node just started): tried again at what serves the queue now, not refused
            boolean replaced = firstOne && PeerLinks.isRemote(queue) && recordStands() && serving() != queue;
            // a later leader's queue that another consumer has exclusively now: this one is cancelled
            gone(this, firstOne && !replaced ? reason : null, PeerLinks.inExclusiveUse(reason));
        }
    }

    // ---- the consumer's side -----------------------------------------------------------------------------------

    @Override
    public QueueConsumer subscribe(ConsumerSink consumerSink, ConsumerFlow consumerFlow, boolean settled,
            boolean exclusiveUse, int consumerPriority, Selector selector) {
        if (selector != null) { // a selector is served where the queue is local only: no following
            return now().subscribe(consumerSink, consumerFlow, settled, exclusiveUse, consumerPriority, selector);
        }
        QueueConsumer handle = QueueConsumer.handle(this, consumerSink, consumerFlow, settled, null);
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
        synchronized (this) {
            this.firstDeadline = deadline;
            this.sink = consumerSink;
            this.flow = consumerFlow;
            this.preSettled = settled;
            this.exclusive = exclusiveUse;
            this.priority = consumerPriority;
            this.channelLimit = consumerFlow.channelLimit();
        }
        check(deadline);
        return handle;
    }

    /**
     * Attaches once the queue's group commits here; else refuses, once the deadline has passed. A failure before it
     * (this node's live queue of an epoch just over: its leadership handed over, or regained, and the live queue not
     * yet rebuilt) is tried again, so a leader change is not answered as a lost majority.
     */
    private void check(long deadline) {
        synchronized (this) {
            if (closed) {
                return;
            }
        }
        replicated.barrier(vhost.name(), record).whenComplete((done, failure) -> {
            if (failure == null) {
                attach(deadline);
            } else if (System.nanoTime() - deadline < 0) {
                replicated.later(() -> check(deadline), RETRY_MILLIS);
            } else {
                refuse();
            }
        });
    }

    private void refuse() {
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
        }
        sink.refused(NO_MAJORITY + "queue '" + record.name() + "' in vhost '" + vhost.name() + "'");
    }

    @Override
    public void cancel(QueueConsumer consumer) {
        Generation generation;
        synchronized (this) {
            cancelled = true;
            generation = current;
        }
        if (generation != null) {
            generation.queue.cancel(generation.inner);
        }
    }

    @Override
    public CompletableFuture<Void> limit(QueueConsumer consumer, PrefetchLimit limit) {
        Generation generation;
        synchronized (this) {
            channelLimit = limit;
            generation = current;
        }
        return generation == null ? CompletableFuture.completedFuture(null)
            : generation.queue.limit(generation.inner, limit);
    }

    @Override
    public void flow(QueueConsumer consumer, long deliveryCount, long linkCredit, boolean drain, boolean echo) {
        Generation generation;
        synchronized (this) {
            flowDeliveryCount = deliveryCount;
            flowCredit = linkCredit;
            flowed = true;
            generation = current;
        }
        if (generation != null) {
            generation.queue.flow(generation.inner, deliveryCount < 0 ? -1
                : (deliveryCount - generation.countBase) & 0xFFFFFFFFL, linkCredit, drain, echo);
        }
    }

    @Override
    public void settle(QueueConsumer consumer, long firstTag, long lastTag, Outcome outcome) {
        Generation generation = current;
        if (generation == null) {
            return; // between leaders: the new one has the message again
        }
        long from = Math.max(firstTag, generation.tagBase);
        if (lastTag >= from) {
            generation.queue.settle(generation.inner, from - generation.tagBase, lastTag - generation.tagBase,
                outcome);
        } // else an earlier leader's delivery: see the class comment
    }

    @Override
    public CompletableFuture<QueueDelivery> get(QueueConsumer consumer) {
        return CompletableFuture.completedFuture(null); // a get goes to the queue itself, never through this
    }

    @Override
    public void unsubscribe(QueueConsumer consumer, Outcome unsettledOutcome) {
        Generation generation;
        synchronized (this) {
            closed = true;
            generation = current;
            current = null;
        }
        if (generation != null) {
            generation.queue.unsubscribe(generation.inner, unsettledOutcome);
        }
    }

    @Override
    public void unsubscribe(List<QueueConsumer> consumers, Outcome unsettledOutcome) {
        consumers.forEach(consumer -> unsubscribe(consumer, unsettledOutcome));
    }

    // ---- following the leader ----------------------------------------------------------------------------------

    /** Subscribes to what serves the queue here now, tried again until there is one (a first one: until the deadline). */
    private void attach(long deadline) {
        boolean firstOne;
        Queue target;
        synchronized (this) {
            if (closed || current != null) {
                return;
            }
            firstOne = deadline != 0;
            if (!recordStands()) {
                closed = true;
                if (firstOne) {
                    sink.refused(vhost.homeNodeDown(record).getMessage());
                } else {
                    sink.queueDeleted();
                }
                return;
            }
            target = serving();
            if (target != null) {
                Generation generation = new Generation(target, nextTag, nextCount, firstOne);
                // its sink's calls wait for this lock, so they find it current
                generation.inner = target.subscribe(generation, flow, preSettled, exclusive, priority, null);
                current = generation;
                if (channelLimit != null && channelLimit != flow.channelLimit()) {
                    target.limit(generation.inner, channelLimit);
                }
                if (!firstOne && flowed) {
                    // the consumer's credit as it stands, in the new queue's count, which starts at 0
                    long left = flowDeliveryCount < 0 ? flowCredit
                        : flowDeliveryCount + flowCredit - nextCount;
                    target.flow(generation.inner, 0, Math.max(0, left), false, false);
                }
                return;
            }
        }
        if (deadline != 0 && System.nanoTime() - deadline > 0) {
            refuse();
            return;
        }
        replicated.later(() -> attach(deadline), RETRY_MILLIS);
    }

    /** The queue's record is still this one: not deleted (nor declared again). */
    private boolean recordStands() {
        QueueHomed now = vhost.remoteQueue(record.name());
        return now != null && now.incarnation() == record.incarnation();
    }

    /** This node's live queue of it, or the leader's reached over the node links; null while neither is there. */
    private Queue serving() {
        Queue local = vhost.queue(record.name());
        if (local != null) {
            return local;
        }
        try {
            return PeerLinks.remote(vhost, record.name());
        } catch (BrokerException e) {
            return null; // the leader's node cannot be reached (yet)
        }
    }

    /**
     * A generation's queue went (or refused it): the next leader's, or the consumer is told it went (the record
     * gone, the consumer cancelled, or {@code over}).
     */
    private void gone(Generation generation, String refusal, boolean over) {
        boolean deleted;
        synchronized (this) {
            if (current != generation) {
                return;
            }
            current = null;
            nextTag = generation.tagAfter;
            nextCount = generation.countAfter;
            if (closed) {
                return;
            }
            if (refusal != null) {
                closed = true;
            }
            deleted = refusal == null && (over || cancelled || !recordStands());
            if (deleted) {
                closed = true;
            }
        }
        if (refusal != null) {
            sink.refused(refusal);
            return;
        }
        if (!generation.refused) {
            generation.queue.unsubscribe(generation.inner, Outcome.RELEASED);
        }
        if (deleted) {
            sink.queueDeleted();
            return;
        }
        // a first subscription that never was is still the first: its consumer waits for its subscribed
        long deadline = generation.firstOne && generation.refused ? firstDeadline : 0;
        replicated.later(() -> attach(deadline), RETRY_MILLIS);
    }

    /** True while the consumer is subscribed to a queue on another node (for the words of a refusal). */
    boolean remoteNow() {
        Generation generation = current;
        return generation == null ? first == null : PeerLinks.isRemote(generation.queue);
    }

    // ---- the rest is the queue's, as this node reaches it now --------------------------------------------------

    /**
     * What serves the queue here now, for what is not a consumer's: the generation's, or the one found at first,
     * or the leader's as reached now.
     *
     * @throws BrokerException NOT_FOUND, RabbitMQ's words for a queue whose node is down, when none is reached
     */
    private Queue now() {
        Generation generation = current;
        Queue queue = generation != null ? generation.queue : first != null ? first : serving();
        if (queue == null) {
            throw vhost.homeNodeDown(record);
        }
        return queue;
    }

    @Override
    public String name() {
        return record.name();
    }

    @Override
    public QueueExecutor executor() {
        return now().executor();
    }

    @Override
    public QueueDeclaration declaration() {
        return record.declaration();
    }

    @Override
    public QueueType type() {
        return QueueType.QUORUM;
    }

    @Override
    public void publish(Message message, PublishConfirm confirm) {
        now().publish(message, confirm);
    }

    @Override
    public int readyCount() {
        return now().readyCount();
    }

    @Override
    public int consumerCount() {
        return now().consumerCount();
    }

    @Override
    public int unackedCount() {
        return now().unackedCount();
    }

    @Override
    public QueueCounters counters() {
        return now().counters();
    }

    @Override
    public CompletableFuture<QueueCounts> counts() {
        return now().counts();
    }

    @Override
    public CompletableFuture<Integer> purge() {
        return now().purge();
    }

    @Override
    public CompletableFuture<Void> close() {
        return CompletableFuture.completedFuture(null);
    }

    @Override
    public CompletableFuture<Integer> delete() {
        return CompletableFuture.completedFuture(0);
    }

    @Override
    public void whenUnused(Runnable action) {
        // the queue's own
    }
}
