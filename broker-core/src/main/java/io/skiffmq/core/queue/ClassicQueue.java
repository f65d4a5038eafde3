package io.skiffmq.core.queue;

import io.skiffmq.core.message.Message;
import io.skiffmq.core.metrics.QueueCounters;
import io.skiffmq.core.policy.EffectivePolicy;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * A classic queue. Messages wait in arrival order; a message given back (released, modified) returns to its
 * original position, ahead of later ones. A quorum queue's wait as RabbitMQ 4.0's do: given back ones first, then
 * two priority lanes served 2:1 ({@link WaitingMessages#weighted}). Consumers are served round-robin among those
 * with credit.
 *
 * <p>A durable queue has a {@link QueueLog}: its durable messages are written there and confirmed only once the
 * log says they are durable; leaving the queue and failed deliveries are written too, so a restart can
 * {@link #restore} it. Non-durable messages in a durable queue, and every message of a transient queue, live in
 * memory only and are confirmed at once.
 *
 * <p>Memory stays bounded. With {@link QueuePages} (the store gives every queue some), once the waiting messages in
 * memory pass {@code memoryLimit} (their {@link WaitingMessages#footprint}), arrivals go to their lane's paged tail,
 * transient and durable alike, keeping nothing in memory per message, and are read back in order as the head drains
 * (see {@link WaitingMessages}). Without pages, durable messages that arrive past the limit are paged out as soon as
 * the log has written them (only their entry stays), and read back from the log when they are dispatched. Messages
 * recovered at start are paged out from the first (an entry each). Before paging, a queue whose consumers keep up
 * well holds its publishers back to their pace ({@link PublisherFlow}).
 *
 * <p>Its {@link QueueArguments} apply RabbitMQ's rules: length limits with their overflow behaviour, message TTL
 * (expired at the head, as RabbitMQ expires, and by a timer on the {@link QueueContext#clock()}, so an idle queue
 * lets go of them), dead-lettering through {@link QueueContext#deadLetters()}, a delivery limit, priority lanes,
 * a single active consumer, expiry of the unused queue, and confirms held until a consumer settles.
 *
 * <p>The queue is this class (arrivals, gets, settlements, consumers coming and going, deletion) and its parts, each
 * named for what it does: {@link QueueDispatcher} (handing messages to consumers), {@link QueueConsumers},
 * {@link QueueLimits} (length limits), {@link QueueExpiry} (message TTL), {@link UnusedQueue} (auto-delete and
 * {@code x-expires}), {@link QueuePaging} (paging out to the log), {@link Departures} (forgetting and dead-lettering)
 * and {@link QueueRecovery} (restore and relocation in the log).
 *
 * <p>All state, this class's and its parts', is owned by {@link #executor()}'s thread; the public methods hop there,
 * publishes from other threads in batches (a {@link Handoff}: one task takes every message that arrived before it
 * ran). Publishes and settlements do not dispatch each: they ask for one dispatch after the executor's turn
 * ({@link QueueExecutor#afterTurn}), so a burst of them costs one pass over the consumers. The only state read
 * elsewhere is its {@link QueueGauges}, volatile copies for monitoring, and its {@link #counters()}, written here and
 * read anywhere.
 */
public final class ClassicQueue implements Queue {
    private static final System.Logger LOG = System.getLogger(ClassicQueue.class.getName());
    private final String name;
    private final QueueExecutor executor;
    private final QueueDeclaration declaration;
    /** {@link QueueType#CLASSIC}, or {@link QueueType#QUORUM} for a quorum queue on one node (docs/quorum-queues.md). */
    private final QueueType type;
    /** The declaration's arguments as read. */
    private final QueueArguments declared;
    /** What the queue acts on: {@link #declared} with its policy's keys ({@link #applyPolicy}). */
    private QueueArguments arguments;
    /** The policy in force; written under the virtual host's write lock, read anywhere. */
    private volatile EffectivePolicy policy = EffectivePolicy.NONE;
    private final QueueContext context;
    /** Null for a transient queue, or when the broker runs without a store. */
    private final QueueLog log;
    private final long memoryLimit;
    private final WaitingMessages waiting;
    private final io.skiffmq.core.filter.SubscriptionFilter subscriptionFilter; // checked by publishers
    private final QueueStatus status = new QueueStatus();
    /** Messages go out only once the log committed them ({@link QueueLog#deliversCommitted}). */
    private final boolean deliversCommitted;
    private final QueueGauges gauges = new QueueGauges();
    private final QueueCounters counters = new QueueCounters();
    private final QueueConsumers consumers;
    private final QueueLimits limits;
    private final QueueExpiry expiry;
    private final UnusedQueue unused;
    private final QueuePaging paging;
    private final Departures departures;
    /** A quorum queue's dead-lettering at least once (when its arguments ask for it); null for a classic queue. */
    private final AtLeastOnceDeadLetters dying;
    private final QueueDispatcher dispatcher;
    private final QueueRecovery recovery;
    private final Settlements settlements;
    private final PublisherFlow publisherFlow;
    private final Handoff<Publish> publishes;
    private long nextSequence;

    /** A transient queue. */
    public ClassicQueue(String name, QueueExecutor executor) {
        this(QueueDeclaration.of(name, false, Map.of()), executor, null, Long.MAX_VALUE, QueueContext.DEFAULT);
    }

    public ClassicQueue(String name, QueueExecutor executor, boolean durable, Map<String, Object> arguments,
            QueueLog log, long memoryLimit) {
        this(QueueDeclaration.of(name, durable, arguments), executor, log, memoryLimit, QueueContext.DEFAULT);
    }

    /**
     * @param log where durable messages are written; null for a queue that keeps nothing on disk
     * @param memoryLimit bytes of waiting messages kept in memory before durable ones are paged out to the log
     */
    public ClassicQueue(QueueDeclaration declaration, QueueExecutor executor, QueueLog log, long memoryLimit,
            QueueContext context) {
        this(declaration, executor, log, memoryLimit, context, null);
    }

    /**
     * @param pages where messages past {@code memoryLimit} are paged, whatever their durability; null: only durable
     *        ones are, to the log, and keep an entry each in memory
     */
    public ClassicQueue(QueueDeclaration declaration, QueueExecutor executor, QueueLog log, long memoryLimit,
            QueueContext context, QueuePages pages) {
        if (log != null && !declaration.persistent()) {
            throw new IllegalArgumentException("only a durable, non-exclusive queue has a log");
        }
        this.name = declaration.name();
        this.executor = executor;
        this.declaration = declaration;
        this.type = QueueType.of(declaration.arguments()) == QueueType.QUORUM ? QueueType.QUORUM : QueueType.CLASSIC;
        this.declared = type == QueueType.QUORUM ? QuorumArguments.orDefaults(context.vhost(), declaration)
            : QueueArguments.orNone(context.vhost(), declaration);
        this.arguments = declared;
        this.context = context;
        this.log = log;
        this.memoryLimit = memoryLimit;
        // a held confirm (x-confirm-after-consume) is an object per message: such a queue does not page its tail
        QueuePages paged = arguments.confirmAfterConsume() ? null : pages;
        this.publisherFlow = new PublisherFlow(executor, context.clock(), memoryLimit, context.publisherFlow(),
            paged == null ? () -> false : paged::writesBehind);
        // a quorum queue's two lanes are served 2:1 (x-max-priority is refused there), as RabbitMQ 4.0's are
        this.waiting = type == QueueType.QUORUM ? WaitingMessages.weighted(paged, memoryLimit)
            : new WaitingMessages(arguments.maxPriority(), paged, memoryLimit);
        this.subscriptionFilter = arguments.subscriptionFilter();
        this.consumers = new QueueConsumers(arguments.singleActiveConsumer(), type == QueueType.QUORUM, gauges);
        this.departures = new Departures(name, arguments, log, context.deadLetters(), status);
        this.dying = type == QueueType.QUORUM ? new AtLeastOnceDeadLetters(name, executor, context.clock(),
            context.deadLetters(), status, departures, log, arguments) : null;
        if (dying != null && QuorumArguments.atLeastOnce(context.vhost(), name, arguments, declaration.arguments(),
                EffectivePolicy.NONE)) {
            departures.atLeastOnce(dying);
        }
        this.limits = new QueueLimits(arguments, waiting, departures, dying);
        this.paging = new QueuePaging(name, log, waiting, memoryLimit);
        this.expiry = new QueueExpiry(arguments, waiting, context.clock(), executor, status,
            entry -> departures.die(entry, DeadLetters.Reason.EXPIRED), this::dispatch);
        this.dispatcher = new QueueDispatcher(executor, waiting, context.clock(), log, counters,
            consumers.pushed, publisherFlow, expiry, paging, departures, gauges, type == QueueType.QUORUM);
        // each batch ends with its dispatch: consumers get messages even while publishes keep the loop busy
        this.publishes = new Handoff<>(executor, p -> append(p.message, p.confirmed), dispatcher::afterTurnRuns);
        this.settlements = new Settlements(arguments, waiting, log, counters, departures, status, limits,
            type == QueueType.QUORUM);
        this.recovery = new QueueRecovery(log, executor, status, waiting, limits, expiry, paging, consumers,
            gauges, dying);
        this.unused = new UnusedQueue(declaration, declared, context.clock(), executor, status, consumers.pushed);
        this.deliversCommitted = log != null && log.deliversCommitted(this::committedThrough);
        if (deliversCommitted) {
            waiting.deliverableThrough(nextSequence - 1);
        }
    }

    /** On the queue's thread: the log committed every message up to {@code sequence}, which may now go out. */
    private void committedThrough(long sequence) {
        if (!status.gone() && !waiting.deliverable(sequence)) {
            waiting.deliverableThrough(sequence);
            dispatcher.dispatch();
        }
    }

    @Override
    public QueueDeclaration declaration() {
        return declaration;
    }

    @Override
    public QueueType type() {
        return type;
    }

    /** The arguments in effect: the declaration's, with its policy's. Read on the queue's thread. */
    public QueueArguments queueArguments() {
        return arguments;
    }

    @Override
    public EffectivePolicy policy() {
        return policy;
    }

    /**
     * Takes a policy's keys into effect, by RabbitMQ's precedence ({@link QueueArguments#withPolicy}), as RabbitMQ's
     * classic queue does when its policy changes: a lower length limit drops the oldest of a drop-head queue, a
     * message TTL applies to messages that arrive from now (those waiting keep their expiry), and a changed expiry
     * counts from now.
     */
    @Override
    public void applyPolicy(EffectivePolicy next) {
        policy = next;
        executor.run(() -> {
            if (status.gone()) {
                return;
            }
            QueueArguments inEffect = type == QueueType.QUORUM
                ? QuorumArguments.withPolicy(declared, declaration.arguments(), next)
                : declared.withPolicy(declaration.arguments(), next);
            if (dying != null) {
                // what it holds already it still dead-letters at least once; new deaths go as the policy says
                dying.use(inEffect);
                departures.atLeastOnce(QuorumArguments.atLeastOnce(context.vhost(), name, inEffect,
                    declaration.arguments(), next) ? dying : null);
            }
            if (inEffect.equals(arguments)) {
                return;
            }
            arguments = inEffect;
            departures.use(inEffect);
            limits.use(inEffect);
            expiry.use(inEffect);
            settlements.use(inEffect);
            unused.expires(inEffect.expires());
            if (inEffect.overflow() == QueueArguments.Overflow.DROP_HEAD) {
                limits.dropHeads();
                gauges.ready = waiting.size();
            }
            expiry.expireHeads();
        });
    }

    @Override
    public void whenUnused(Runnable action) {
        unused.whenUnused(action);
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public QueueExecutor executor() {
        return executor;
    }

    @Override
    public int readyCount() {
        return gauges.ready;
    }

    /** Bytes of waiting messages held in memory (paged-out ones not counted). Approximate off-thread. */
    public long memoryBytes() {
        return gauges.memoryBytes;
    }

    @Override
    public int consumerCount() {
        return gauges.consumers;
    }

    @Override
    public int unackedCount() {
        return gauges.unacked;
    }

    @Override
    public QueueCounters counters() {
        return counters;
    }

    @Override
    public io.skiffmq.core.filter.SubscriptionFilter subscriptionFilter() {
        return subscriptionFilter;
    }

    @Override
    public boolean holdsPublishers() {
        return publisherFlow.holding();
    }

    @Override
    public boolean holdPublisher(Runnable resume) {
        return publisherFlow.await(resume);
    }

    @Override
    public void publish(Message message, PublishConfirm confirmed) {
        if (executor.inExecutor()) {
            append(message, confirmed);
        } else {
            // from another thread: one task takes every publish that arrived before it ran
            publishes.offer(new Publish(message, confirmed));
        }
    }

    /** A message on its way to the queue's thread. */
    private record Publish(Message message, PublishConfirm confirmed) {
    }

    private void append(Message message, PublishConfirm confirmed) {
        assert executor.inExecutor();
        if (status.gone()) {
            message.release();
            if (!status.closed && confirmed != null) {
                if (arguments.confirmAfterConsume()) {
                    confirmed.refused(); // never consumed: a confirm would say it was
                } else {
                    confirmed.run(); // into a deleted queue: nothing to keep safe
                }
            }
            return;
        }
        if (log != null && confirmed instanceof ForwardedConfirm && log.duplicate(confirmed)) {
            message.release(); // resent by another node, and already here
            return;
        }
        int bodySize = limits.countsBytes() ? message.bodySize() : 0;
        if (dispatcher.pending() && limits.wouldOverflow(bodySize)) {
            dispatch(); // consumers with room take what waits first, as they would have with a dispatch per publish
        }
        if (limits.refuses(message, confirmed, bodySize)) {
            return;
        }
        counters.countPublished(message.size());
        long now = context.clock().millis();
        PublishConfirm confirm = confirmed;
        PublishConfirm held = null;
        if (confirm != null && arguments.confirmAfterConsume()) {
            held = confirm; // confirmed when a consumer settles it, not before
            confirm = null;
        }
        // a quorum queue keeps every message, whatever its delivery mode, as RabbitMQ's does
        boolean logged = log != null && (message.durable() || type == QueueType.QUORUM);
        QueueEntry entry = QueueEntry.of(nextSequence++, message, limits.lane(message.priority()), bodySize,
            expiry.expiresAt(now, message.ttl()), held, logged, logged && log.locatesBySequence());
        // a dead-lettered copy counts on from the failed deliveries it had in the queue it died in
        entry.carried(message.deliveryCount());
        boolean toTail = waiting.mustPage(entry.priority());
        if (toTail && dispatcher.pending()) {
            // consumers with credit take what waits first, and then maybe this one too: a message a consumer can
            // take now is not written to its page file and read back (a 16 MiB one is the whole limit, issue 30)
            dispatch();
            toTail = waiting.mustPage(entry.priority());
        }
        if (!toTail) {
            waiting.arrive(entry);
        }
        if (logged) {
            // written before dispatch, so an ack can never reach the log ahead of its publish
            try {
                entry.location(log.publish(entry.sequence, message, entry.deliveryCount, entry.returns,
                    entry.expiresAt(), confirm));
            } catch (RuntimeException e) {
                // the log is closed or failed (it says why, loudly): not taken
                if (!toTail) {
                    waiting.cancelArrival(entry);
                }
                message.release();
                LOG.log(System.Logger.Level.DEBUG, "queue ''{0}'' refused a message: {1}", name, e.getMessage());
                if (confirmed != null) {
                    confirmed.refused();
                }
                return;
            }
            if (!toTail) {
                paging.arrived(entry);
            }
        } else if (confirm != null) {
            // in memory, a message is as safe as promised once it is in the queue
            confirm.run();
        }
        if (toTail && !waiting.page(entry)) {
            waiting.arrive(entry); // the page file failed (logged): it stays in memory, out of order
        }
        if (expiry.anyExpire() || limits.any()) {
            // TTLs and length limits judge what no consumer took, so consumers take it first, now: a TTL of 0 means
            // "only if a consumer takes it now", drop-head drops and reject-publish refuses by what still waits
            dispatcher.dispatch(now);
        } else {
            dispatcher.dispatchAfterTurn();
        }
        if (arguments.overflow() == QueueArguments.Overflow.DROP_HEAD) {
            limits.dropHeads();
            gauges.ready = waiting.size();
        }
    }

    /**
     * Puts back the messages recovered from the log, in sequence order, before the queue is used: usually as an
     * index only (a null message), read back when dispatched; marked as delivered before as the log says
     * ({@link StoredMessage#deliveredBefore}). Call {@link #recovered} once every queue is restored.
     */
    public void restore(List<StoredMessage> messages) {
        executor.runBeforeUse(() -> {
            long next = recovery.restore(messages, context.clock().millis());
            nextSequence = Math.max(nextSequence, next);
            if (deliversCommitted) {
                waiting.deliverableThrough(nextSequence - 1); // the log had them: committed
            }
        });
    }

    /**
     * Recovery is over: every queue is restored and the log writes. Recovered messages whose TTL ran out while the
     * broker was down die now (dead-lettered into queues that hold what they held), and the others when it runs
     * out.
     */
    public void recovered() {
        executor.runBeforeUse(recovery::recovered);
    }

    /**
     * Copies every logged message whose location is before {@code location} forward in the log (see
     * {@link QueueLog#relocate}), so the log can reclaim the space behind it.
     *
     * @return completes with how many were copied
     */
    public CompletableFuture<Integer> relocate(long location) {
        CompletableFuture<Integer> copied = new CompletableFuture<>();
        executor.run(() -> {
            try {
                copied.complete(recovery.relocate(location));
            } catch (RuntimeException e) {
                copied.completeExceptionally(e);
            }
        });
        return copied;
    }

    @Override
    public QueueConsumer subscribe(ConsumerSink sink, ConsumerFlow flow, boolean preSettled, boolean exclusive,
            int priority, io.skiffmq.core.filter.Selector selector) {
        QueueConsumer consumer = new QueueConsumer(this, sink, flow, preSettled, priority, selector);
        executor.run(() -> {
            boolean pull = flow.kind() == ConsumerFlow.Kind.PULL;
            if (status.deleted) {
                // deleted while the subscription was on its way: the consumer hears so at once
                consumer.removed = true;
                sink.subscribed();
                sink.queueDeleted();
                return;
            }
            if (!pull && consumers.refuses(exclusive)) {
                consumer.removed = true;
                sink.refused("queue '" + name + "' in exclusive use");
                return;
            }
            consumers.all.add(consumer);
            sink.subscribed();
            if (pull) {
                unused.used();
                return;
            }
            consumers.push(consumer, exclusive);
            unused.consumerCame();
            dispatch();
        });
        return consumer;
    }

    @Override
    public void cancel(QueueConsumer consumer) {
        executor.run(() -> {
            if (!consumer.removed && consumers.stopPushing(consumer)) {
                dispatch(); // a consumer waiting for a channel-wide slot may be next
                unused.check();
            }
        });
    }

    @Override
    public CompletableFuture<Void> limit(QueueConsumer consumer, PrefetchLimit channelLimit) {
        CompletableFuture<Void> done = new CompletableFuture<>();
        executor.run(() -> {
            if (!consumer.removed && consumer.channelLimit == null) {
                consumer.channelLimit = channelLimit;
                if (!consumer.preSettled) {
                    channelLimit.add(consumer.unsettled.size());
                }
            }
            done.complete(null);
        });
        return done;
    }

    @Override
    public void touch() {
        executor.run(() -> {
            if (!status.gone()) {
                unused.used();
            }
        });
    }

    @Override
    public CompletableFuture<QueueCounts> counts() {
        CompletableFuture<QueueCounts> counts = new CompletableFuture<>();
        // a publish from this thread went through the handoff, whose drain was scheduled before this task
        executor.run(() -> {
            expiry.expireHeads();
            counts.complete(new QueueCounts(waiting.size(), consumers.count(), consumers.unsettled(),
                dying == null ? 0 : dying.count()));
        });
        return counts;
    }

    @Override
    public void flow(QueueConsumer consumer, long deliveryCount, long linkCredit, boolean drain, boolean echo) {
        executor.run(() -> {
            if (!consumer.removed) {
                dispatcher.credit(consumer, deliveryCount, linkCredit, drain, echo);
            }
        });
    }

    @Override
    public void settle(QueueConsumer consumer, long firstTag, long lastTag, Outcome outcome) {
        executor.run(() -> {
            int before = consumer.unsettled.size();
            consumer.unsettled.removeRange(firstTag, lastTag, entry -> settlements.settle(entry, outcome));
            int settled = before - consumer.unsettled.size();
            if (settled > 0) {
                consumers.settled(consumer); // a single active consumer giving way hands over once it is settled
                if (outcome.requeues()) {
                    expiry.expireHeads(); // a message back whose TTL ran out dies now, before any redelivery
                }
                gauges.unacked -= settled;
                QueueDispatcher.releaseSlots(consumer, settled);
                dispatcher.dispatchAfterTurn();
            }
        });
    }

    @Override
    public CompletableFuture<QueueDelivery> get(QueueConsumer consumer) {
        CompletableFuture<QueueDelivery> got = new CompletableFuture<>();
        executor.run(() -> {
            if (!status.gone()) {
                unused.used();
            }
            got.complete(dispatcher.get(consumer, !consumer.removed && !status.gone()));
        });
        return got;
    }

    @Override
    public void unsubscribe(QueueConsumer consumer, Outcome unsettledOutcome) {
        executor.run(() -> {
            if (remove(consumer, unsettledOutcome)) {
                dispatch();
                unused.check();
            }
        });
    }

    @Override
    public void unsubscribe(List<QueueConsumer> leaving, Outcome unsettledOutcome) {
        executor.run(() -> {
            boolean removed = false;
            for (QueueConsumer consumer : leaving) {
                removed |= remove(consumer, unsettledOutcome);
            }
            if (removed) {
                dispatch(); // once all are back: given-back entries wait by sequence, so they go out in order
                unused.check();
            }
        });
    }

    /** Removes a consumer, settling its unsettled deliveries; false when it was removed before. */
    private boolean remove(QueueConsumer consumer, Outcome unsettledOutcome) {
        if (consumer.removed) {
            return false;
        }
        consumer.removed = true;
        consumers.all.remove(consumer);
        consumers.stopPushing(consumer);
        int unsettled = consumer.unsettled.size();
        consumer.unsettled.removeAll(entry -> settlements.settle(entry, unsettledOutcome));
        if (unsettled > 0 && unsettledOutcome.requeues()) {
            expiry.expireHeads(); // as after a settlement: the dispatch that follows must not hand them out again
        }
        gauges.unacked -= unsettled;
        QueueDispatcher.releaseSlots(consumer, unsettled);
        return true;
    }

    /** A consumer waiting for a channel-wide prefetch slot may go on: dispatch on the queue's thread. */
    void resume(QueueConsumer consumer) {
        executor.execute(() -> {
            long asked = consumer.slotAsks;
            if (!consumer.removed && !status.gone()) {
                dispatch();
            }
            consumer.channelLimit.resumed(consumer, asked);
        });
    }

    @Override
    public CompletableFuture<Integer> purge() {
        CompletableFuture<Integer> purged = new CompletableFuture<>();
        executor.run(() -> purged.complete(dropReady()));
        return purged;
    }

    @Override
    public CompletableFuture<Integer> delete() {
        CompletableFuture<Integer> deletedCount = new CompletableFuture<>();
        executor.run(() -> {
            if (status.deleted) {
                deletedCount.complete(0);
                return;
            }
            status.deleted = true;
            publisherFlow.release();
            disarmTimers();
            int count = dropReady(); // ready ones only, as RabbitMQ counts them in delete-ok
            if (dying != null) {
                dying.clear();
            }
            waiting.deletePages();
            if (log != null && !status.closed) {
                log.deleted();
            }
            for (QueueConsumer consumer : List.copyOf(consumers.all)) {
                consumer.sink.queueDeleted();
            }
            deletedCount.complete(count);
        });
        return deletedCount;
    }

    @Override
    public CompletableFuture<Void> close() {
        CompletableFuture<Void> done = new CompletableFuture<>();
        executor.run(() -> {
            if (log != null && !status.gone()) {
                recovery.stopped(); // before anything is let go: which messages had been delivered
            }
            status.closed = true;
            publisherFlow.release();
            disarmTimers();
            dropReady();
            if (dying != null) {
                dying.clear(); // still in the log: back after a restart
            }
            waiting.deletePages();
            for (QueueConsumer consumer : consumers.all) {
                consumer.unsettled.removeAll(entry -> entry.message.release());
            }
            gauges.unacked = 0;
            done.complete(null);
        });
        return done;
    }

    private void disarmTimers() {
        unused.disarm();
        expiry.disarm();
    }

    private int dropReady() {
        // a paged message the log holds leaves it like any other (one record each): recovery must agree
        int count = waiting.removeAll(departures::forget, log != null && !status.gone() ? log::remove : null);
        gauges.ready = 0;
        paging.clear();
        return count;
    }

    /** Hands out messages while some consumer has room (see {@link QueueDispatcher#dispatch}). */
    private void dispatch() {
        dispatcher.dispatch();
    }
}
