package io.skiffmq.core.queue;

import io.skiffmq.codec.amqp10.SerialNumber;
import io.skiffmq.core.message.Message;
import io.skiffmq.core.metrics.QueueCounters;
import io.skiffmq.core.time.BrokerClock;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;

/**
 * A classic queue. Messages wait in arrival order; a message given back (released, modified) returns to its
 * original position, ahead of later ones. Consumers are served round-robin among those with credit.
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
 * <p>All state below is owned by {@link #executor()}'s thread; the public methods hop there, publishes from other
 * threads in batches (a {@link Handoff}: one task takes every message that arrived before it ran). Publishes and
 * settlements do not dispatch each: they ask for one dispatch after the executor's turn
 * ({@link QueueExecutor#afterTurn}), so a burst of them costs one pass over the consumers. The only field read
 * elsewhere are {@link #readyCount} and {@link #unackedCount}, volatile copies for monitoring, and its
 * {@link #counters()}, written here and read anywhere.
 */
public final class ClassicQueue implements Queue {
    private static final System.Logger LOG = System.getLogger(ClassicQueue.class.getName());
    /** What {@link #pageIn} did. */
    private static final int LOADED = 0;
    private static final int LOST = 1;
    private static final int NOT_NOW = 2;
    private final String name;
    private final QueueExecutor executor;
    private final QueueDeclaration declaration;
    private final QueueArguments arguments;
    private final QueueContext context;
    /** Null for a transient queue, or when the broker runs without a store. */
    private final QueueLog log;
    private final long memoryLimit;
    /** Entries that arrived over the memory limit, oldest first: paged out once written to the log. */
    private final ArrayDeque<QueueEntry> pageOutCandidates = new ArrayDeque<>();

    private final WaitingMessages waiting;
    private final io.skiffmq.core.filter.SubscriptionFilter subscriptionFilter; // checked by publishers
    /** Dispatch to consumers with a selector; those without one never use it. */
    private final SelectiveDispatch selective;
    /** Consumers messages are pushed to (not pull consumers); with a single active consumer, that one only. */
    private final ConsumerRing consumers = new ConsumerRing();
    /** With {@code x-single-active-consumer}: the consumers waiting for their turn, in the order they came. */
    private final List<QueueConsumer> standby = new ArrayList<>();
    /** The timer that expires the heads, armed for the earliest head's expiry; null when none is armed. */
    private BrokerClock.Timer expiryTimer;
    private long expiryTimerAt = Long.MAX_VALUE;
    /** With {@code x-expires}: when the queue was last used, and the timer that deletes it unused. */
    private long lastUsed;
    private BrokerClock.Timer unusedTimer;
    /** Some message arrived with a TTL of its own: heads may expire even without {@code x-message-ttl}. */
    private boolean hasMessageTtls;
    /** Every consumer, pull consumers too: those that may hold unsettled deliveries. */
    private final List<QueueConsumer> allConsumers = new ArrayList<>();
    /** The consumer that has the queue to itself (0-9-1 exclusive consume), or null. */
    private QueueConsumer exclusiveConsumer;
    private boolean hadConsumer;
    private Runnable whenUnused;
    private long nextSequence;
    private boolean deleted;
    /** The broker is stopping: nothing more is taken, confirmed or written to the log. */
    private boolean closed;
    private final Handoff<Publish> publishes;
    /** A dispatch is asked for after this turn ({@link #dispatchAfterTurn}). */
    private boolean dispatchPending;
    private final Runnable dispatchTask = this::dispatchAfterTurnRuns;
    private final PublisherFlow publisherFlow;
    private volatile int readyCount;
    private volatile long memoryBytesSeen;
    private volatile int consumerCount;
    /** Deliveries handed out and not yet settled, all consumers together; written here, read anywhere. */
    private volatile int unackedCount;
    private final QueueCounters counters = new QueueCounters();

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
        this.arguments = QueueArguments.orNone(context.vhost(), declaration);
        this.context = context;
        this.log = log;
        this.memoryLimit = memoryLimit;
        this.publisherFlow = new PublisherFlow(executor, context.clock(), memoryLimit, context.publisherFlow());
        // a held confirm (x-confirm-after-consume) is an object per message: such a queue does not page its tail
        this.waiting = new WaitingMessages(arguments.maxPriority(), arguments.confirmAfterConsume() ? null : pages);
        this.subscriptionFilter = arguments.subscriptionFilter();
        this.selective = new SelectiveDispatch(waiting, context.clock(), this::deliver,
            e -> log.read(e.sequence, e.location), this::dispatchAfterTurn);
        // each batch ends with its dispatch: consumers get messages even while publishes keep the loop busy
        this.publishes = new Handoff<>(executor, p -> append(p.message, p.confirmed), this::dispatchAfterTurnRuns);
        this.lastUsed = context.clock().millis();
        if (arguments.expires() >= 0) {
            executor.execute(this::armUnusedTimer);
        }
    }

    @Override
    public QueueDeclaration declaration() {
        return declaration;
    }

    /** The declaration's arguments as the queue reads them. */
    public QueueArguments queueArguments() {
        return arguments;
    }

    @Override
    public void whenUnused(Runnable action) {
        if (whenUnused != null) {
            throw new IllegalStateException("queue '" + name + "' has its unused action already");
        }
        whenUnused = action;
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
        return readyCount;
    }

    /** Bytes of waiting messages held in memory (paged-out ones not counted). Approximate off-thread. */
    public long memoryBytes() {
        return memoryBytesSeen;
    }

    @Override
    public int consumerCount() {
        return consumerCount;
    }

    @Override
    public int unackedCount() {
        return unackedCount;
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
        if (deleted || closed) {
            message.release();
            if (!closed && confirmed != null) {
                if (arguments.confirmAfterConsume()) {
                    confirmed.refused(); // never consumed: a confirm would say it was
                } else {
                    confirmed.run(); // into a deleted queue: nothing to keep safe
                }
            }
            return;
        }
        int bodySize = arguments.maxLengthBytes() >= 0 ? message.bodySize() : 0;
        if (dispatchPending && wouldOverflow(bodySize)) {
            dispatch(); // consumers with room take what waits first, as they would have with a dispatch per publish
        }
        if (arguments.overflow() != QueueArguments.Overflow.DROP_HEAD && wouldOverflow(bodySize)) {
            if (confirmed != null) {
                confirmed.refused();
            }
            if (arguments.overflow() == QueueArguments.Overflow.REJECT_PUBLISH_DLX) {
                deadLetter(message, DeadLetters.Reason.MAXLEN);
            } else {
                message.release();
            }
            return;
        }
        counters.countPublished(message.size());
        long now = context.clock().millis();
        QueueEntry entry = new QueueEntry(nextSequence++, message, lane(message.priority()), bodySize,
            expiresAt(now, message.ttl()));
        hasMessageTtls |= message.ttl() >= 0;
        PublishConfirm confirm = confirmed;
        if (confirm != null && arguments.confirmAfterConsume()) {
            entry.confirmWhenConsumed = confirm; // confirmed when a consumer settles it, not before
            confirm = null;
        }
        boolean toTail = waiting.mustPage(entry.priority, memoryLimit);
        if (!toTail) {
            waiting.arrive(entry);
        }
        if (log != null && message.durable()) {
            // written before dispatch, so an ack can never reach the log ahead of its publish
            try {
                entry.location = log.publish(entry.sequence, message, 0, confirm);
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
            if (!toTail && !waiting.pagesTails() && waiting.bytes() > memoryLimit) {
                pageOutCandidates.addLast(entry); // no pages: paged out to the log once written, entry kept
            }
        } else if (confirm != null) {
            // in memory, a message is as safe as promised once it is in the queue
            confirm.run();
        }
        if (toTail && !waiting.page(entry)) {
            waiting.arrive(entry); // the page file failed (logged): it stays in memory, out of order
        }
        if (hasMessageTtls || arguments.messageTtl() >= 0 || arguments.maxLength() >= 0
                || arguments.maxLengthBytes() >= 0) {
            // TTLs and length limits judge what no consumer took, so consumers take it first, now: a TTL of 0 means
            // "only if a consumer takes it now", drop-head drops and reject-publish refuses by what still waits
            dispatch();
        } else {
            dispatchAfterTurn();
        }
        if (arguments.overflow() == QueueArguments.Overflow.DROP_HEAD) {
            while (overLimit()) {
                die(waiting.removeHead(), DeadLetters.Reason.MAXLEN);
            }
            readyCount = waiting.size();
        }
    }

    /**
     * Taking a message of {@code bodySize} bytes would take the queue past a length limit: a {@code reject-publish}
     * queue refuses it, as RabbitMQ's {@code will_overflow/2} does (a message too big for what is left is refused even
     * when the queue is not full).
     */
    private boolean wouldOverflow(int bodySize) {
        return arguments.maxLength() >= 0 && waiting.size() + 1L > arguments.maxLength()
            || arguments.maxLengthBytes() >= 0 && waiting.bodyBytes() + bodySize > arguments.maxLengthBytes();
    }

    /** Past the length limit: a {@code drop-head} queue drops its oldest. */
    private boolean overLimit() {
        return arguments.maxLength() >= 0 && waiting.size() > arguments.maxLength()
            || arguments.maxLengthBytes() >= 0 && waiting.bodyBytes() > arguments.maxLengthBytes();
    }

    /** The priority lane of a message: its priority capped at {@code x-max-priority}, as RabbitMQ caps it. */
    private int lane(int priority) {
        return Math.min(priority, arguments.maxPriority());
    }

    /** When a message arriving {@code now} expires: the shorter of the queue's TTL and its own. */
    private long expiresAt(long now, long messageTtl) {
        long ttl = arguments.messageTtl();
        if (messageTtl >= 0 && (ttl < 0 || messageTtl < ttl)) {
            ttl = messageTtl;
        }
        return ttl < 0 ? Long.MAX_VALUE : now + ttl;
    }

    /**
     * Puts back the messages recovered from the log, in sequence order, before the queue is used: usually as an
     * index only (a null message), read back when dispatched. A recovered message may have been delivered before
     * the restart, so it is marked as acquired before.
     */
    public void restore(List<StoredMessage> messages) {
        executor.runBeforeUse(() -> {
            // the time a message arrived is not logged: a TTL counts again from the restart
            long now = context.clock().millis();
            for (StoredMessage stored : messages) {
                QueueEntry entry = new QueueEntry(stored.sequence(), stored.message(), lane(stored.priority()),
                    stored.bodySize(), expiresAt(now, stored.ttl()));
                entry.deliveryCount = stored.deliveryCount();
                entry.acquiredBefore = true;
                entry.location = stored.location();
                hasMessageTtls |= stored.ttl() >= 0;
                waiting.arrive(entry);
                nextSequence = Math.max(nextSequence, stored.sequence() + 1);
            }
            readyCount = waiting.size();
            armExpiryTimer();
        });
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
                int count = 0;
                if (log != null && !deleted && !closed) {
                    int[] copies = new int[1];
                    Consumer<QueueEntry> relocate = entry -> copies[0] += relocate(entry, location) ? 1 : 0;
                    waiting.forEach(relocate);
                    for (QueueConsumer consumer : allConsumers) {
                        consumer.unsettled.forEach(relocate);
                    }
                    count = copies[0] + waiting.relocateTails(location, log);
                }
                if (!pageOutCandidates.isEmpty()) {
                    // messages read back to be copied go out again once the copies are written, traffic or not
                    log.whenWritten(() -> executor.execute(this::pageOutIdle));
                }
                memoryBytesSeen = waiting.bytes();
                copied.complete(count);
            } catch (RuntimeException e) {
                copied.completeExceptionally(e);
            }
        });
        return copied;
    }

    /** Copies one entry forward when its location is before {@code before}; true when it did. */
    private boolean relocate(QueueEntry entry, long before) {
        if (entry.location < 0 || entry.location >= before) {
            return false;
        }
        if (entry.message == null) {
            // paged out: back in memory until the copy is written, then paged out again
            entry.message = log.read(entry.sequence, entry.location);
            waiting.memoryChanged(entry.message.size());
            pageOutCandidates.addLast(entry);
        }
        entry.location = log.relocate(entry.sequence, entry.message, entry.deliveryCount, entry.location);
        return true;
    }

    @Override
    public QueueConsumer subscribe(ConsumerSink sink, ConsumerFlow flow, boolean preSettled, boolean exclusive,
            int priority, io.skiffmq.core.filter.Selector selector) {
        QueueConsumer consumer = new QueueConsumer(this, sink, flow, preSettled, priority, selector);
        executor.run(() -> {
            boolean pull = flow.kind() == ConsumerFlow.Kind.PULL;
            if (deleted) {
                // deleted while the subscription was on its way: the consumer hears so at once
                consumer.removed = true;
                sink.subscribed();
                sink.queueDeleted();
                return;
            }
            if (!pull && (exclusiveConsumer != null || exclusive && !consumers.isEmpty())) {
                consumer.removed = true;
                sink.refused("queue '" + name + "' in exclusive use");
                return;
            }
            allConsumers.add(consumer);
            sink.subscribed();
            if (pull) {
                used();
                return;
            }
            if (exclusive) {
                exclusiveConsumer = consumer;
            }
            if (arguments.singleActiveConsumer() && !consumers.isEmpty()) {
                standby.add(consumer); // waits its turn: it is next when those before it go
            } else {
                consumers.add(consumer);
            }
            consumerCount = consumers.size() + standby.size();
            hadConsumer = true;
            disarmUnusedTimer();
            dispatch();
        });
        return consumer;
    }

    @Override
    public void cancel(QueueConsumer consumer) {
        executor.run(() -> {
            if (!consumer.removed && stopPushing(consumer)) {
                dispatch(); // a consumer waiting for a channel-wide slot may be next
                unusedCheck();
            }
        });
    }

    /** Takes the consumer off the list of those pushed to; false when it was not on it. */
    private boolean stopPushing(QueueConsumer consumer) {
        if (exclusiveConsumer == consumer) {
            exclusiveConsumer = null;
        }
        if (!standby.remove(consumer)) {
            if (!consumers.remove(consumer)) {
                return false;
            }
            if (!standby.isEmpty()) {
                consumers.add(nextActive()); // single active consumer: the next in line takes over
            }
        }
        consumerCount = consumers.size() + standby.size();
        return true;
    }

    /** The standby consumer to activate: the first of the highest priority. */
    private QueueConsumer nextActive() {
        QueueConsumer next = standby.get(0);
        for (QueueConsumer candidate : standby) {
            if (candidate.priority > next.priority) {
                next = candidate;
            }
        }
        standby.remove(next);
        return next;
    }

    /** Deletes an auto-delete queue its last consumer left, and starts counting an {@code x-expires} queue unused. */
    private void unusedCheck() {
        if (!consumers.isEmpty() || deleted) {
            return;
        }
        if (hadConsumer && declaration.autoDelete() && whenUnused != null) {
            whenUnused.run();
        } else if (arguments.expires() >= 0) {
            used();
        }
    }

    /** Used now ({@code x-expires} counts from here): a consumer left, a get, a redeclaration. */
    private void used() {
        lastUsed = context.clock().millis();
        if (arguments.expires() >= 0 && consumers.isEmpty()) {
            armUnusedTimer();
        }
    }

    @Override
    public void touch() {
        executor.run(() -> {
            if (!deleted && !closed) {
                used();
            }
        });
    }

    private void armUnusedTimer() {
        disarmUnusedTimer();
        if (!deleted && !closed && consumers.isEmpty()) {
            unusedTimer = context.clock().schedule(lastUsed + arguments.expires(), executor, this::unusedTimerFired);
        }
    }

    private void disarmUnusedTimer() {
        if (unusedTimer != null) {
            unusedTimer.cancel();
            unusedTimer = null;
        }
    }

    private void unusedTimerFired() {
        unusedTimer = null;
        if (deleted || closed || !consumers.isEmpty()) {
            return;
        }
        if (context.clock().millis() < lastUsed + arguments.expires()) {
            armUnusedTimer(); // used again since the timer was armed
        } else if (whenUnused != null) {
            LOG.log(System.Logger.Level.DEBUG, "queue ''{0}'' expired unused after {1} ms", name, arguments.expires());
            whenUnused.run();
        }
    }

    @Override
    public CompletableFuture<QueueCounts> counts() {
        CompletableFuture<QueueCounts> counts = new CompletableFuture<>();
        // a publish from this thread went through the handoff, whose drain was scheduled before this task
        executor.run(() -> {
            expireHeads();
            int unacknowledged = 0;
            for (QueueConsumer consumer : allConsumers) {
                unacknowledged += consumer.unsettled.size();
            }
            counts.complete(new QueueCounts(waiting.size(), consumers.size() + standby.size(), unacknowledged));
        });
        return counts;
    }

    @Override
    public void flow(QueueConsumer consumer, long deliveryCount, long linkCredit, boolean drain, boolean echo) {
        executor.run(() -> {
            if (consumer.removed) {
                return;
            }
            if (consumer.flow.kind() != ConsumerFlow.Kind.CREDIT) {
                throw new IllegalStateException("flow for a consumer paced by " + consumer.flow.kind());
            }
            // [2.6.7] link-credit(snd) := delivery-count(rcv) + link-credit(rcv) - delivery-count(snd)
            long receiverCount = deliveryCount < 0 ? 0 : deliveryCount;
            long credit = SerialNumber.diff(SerialNumber.add(receiverCount, linkCredit), consumer.deliveryCount);
            consumer.credit = Math.max(0, credit);
            consumer.drain = drain;
            dispatch();
            if (consumer.drain) {
                // [2.6.7] drain: use up the credit by advancing delivery-count, then say so
                consumer.deliveryCount = SerialNumber.add(consumer.deliveryCount, consumer.credit);
                consumer.credit = 0;
                consumer.drain = false;
                consumer.sink.creditState(consumer.deliveryCount, 0, waiting.size(), true);
            } else if (echo) {
                consumer.sink.creditState(consumer.deliveryCount, consumer.credit, waiting.size(), false);
            }
        });
    }

    @Override
    public void settle(QueueConsumer consumer, long firstTag, long lastTag, Outcome outcome) {
        executor.run(() -> {
            int before = consumer.unsettled.size();
            consumer.unsettled.removeRange(firstTag, lastTag, entry -> settle(entry, outcome));
            int settled = before - consumer.unsettled.size();
            if (settled > 0) {
                unackedCount -= settled;
                releaseSlots(consumer, settled);
                dispatchAfterTurn();
            }
        });
    }

    private void releaseSlots(QueueConsumer consumer, int count) {
        PrefetchLimit limit = consumer.channelLimit();
        if (limit != null) {
            limit.release(count);
        }
    }

    private void settle(QueueEntry entry, Outcome outcome) {
        if (outcome.kind() == Outcome.Kind.ACCEPTED) {
            counters.countAcknowledged();
        }
        if (!outcome.requeues() || deleted || closed) {
            if (outcome.kind() == Outcome.Kind.ACCEPTED && entry.confirmWhenConsumed != null) {
                entry.confirmWhenConsumed.run();
                entry.confirmWhenConsumed = null;
            }
            if (outcome.discards() && !deleted && !closed) {
                die(entry, DeadLetters.Reason.REJECTED);
            } else {
                forget(entry);
            }
            return;
        }
        if (outcome.deliveryFailed()) {
            entry.deliveryCount++;
            if (arguments.deliveryLimit() >= 0 && entry.deliveryCount > arguments.deliveryLimit()) {
                die(entry, DeadLetters.Reason.DELIVERY_LIMIT); // failed more often than allowed: poison
                return;
            }
            if (entry.location >= 0) {
                log.requeue(entry.sequence, entry.location, entry.deliveryCount);
            }
        }
        waiting.putBack(entry);
    }

    @Override
    public CompletableFuture<QueueDelivery> get(QueueConsumer consumer) {
        CompletableFuture<QueueDelivery> got = new CompletableFuture<>();
        executor.run(() -> {
            if (dispatchPending) {
                dispatch(); // the push consumers with room come first, as if each publish had dispatched
            }
            QueueDelivery delivery = null;
            if (!deleted && !closed) {
                used();
            }
            long now = context.clock().millis();
            while (delivery == null && !consumer.removed && !deleted && !closed) {
                QueueEntry entry = waiting.removeHead();
                if (entry == null) {
                    break;
                }
                if (entry.expiresAt < now) {
                    die(entry, DeadLetters.Reason.EXPIRED);
                    continue;
                }
                int loaded = pageIn(entry);
                if (loaded == NOT_NOW) {
                    break;
                }
                if (loaded == LOADED) {
                    delivery = deliver(consumer, entry);
                }
            }
            if (delivery == null && !consumer.removed) {
                counters.foundEmpty();
            }
            expireHeads();
            waiting.readBack(memoryLimit);
            readyCount = waiting.size();
            got.complete(delivery);
        });
        return got;
    }

    @Override
    public void unsubscribe(QueueConsumer consumer, Outcome unsettledOutcome) {
        executor.run(() -> {
            if (consumer.removed) {
                return;
            }
            consumer.removed = true;
            allConsumers.remove(consumer);
            stopPushing(consumer);
            int unsettled = consumer.unsettled.size();
            consumer.unsettled.removeAll(entry -> settle(entry, unsettledOutcome));
            unackedCount -= unsettled;
            releaseSlots(consumer, unsettled);
            dispatch();
            unusedCheck();
        });
    }

    /** A consumer waiting for a channel-wide prefetch slot may go on: dispatch on the queue's thread. */
    void resume(QueueConsumer consumer) {
        executor.execute(() -> {
            if (!consumer.removed && !deleted && !closed) {
                dispatch();
            }
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
            if (deleted) {
                deletedCount.complete(0);
                return;
            }
            deleted = true;
            publisherFlow.release();
            disarmTimers();
            int count = dropReady(); // ready ones only, as RabbitMQ counts them in delete-ok
            waiting.deletePages();
            if (log != null && !closed) {
                log.deleted();
            }
            for (QueueConsumer consumer : List.copyOf(allConsumers)) {
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
            closed = true;
            publisherFlow.release();
            disarmTimers();
            dropReady();
            waiting.deletePages();
            for (QueueConsumer consumer : allConsumers) {
                consumer.unsettled.removeAll(entry -> entry.message.release());
            }
            unackedCount = 0;
            done.complete(null);
        });
        return done;
    }

    private void disarmTimers() {
        disarmUnusedTimer();
        if (expiryTimer != null) {
            expiryTimer.cancel();
            expiryTimer = null;
            expiryTimerAt = Long.MAX_VALUE;
        }
    }

    private int dropReady() {
        // a paged message the log holds leaves it like any other (one record each): recovery must agree
        int count = waiting.removeAll(this::forget, log != null && !deleted && !closed ? log::remove : null);
        readyCount = 0;
        pageOutCandidates.clear();
        return count;
    }

    /**
     * The entry leaves the queue for good: off the log (unless the whole queue is being deleted) and released. A
     * confirm still held for a consumer is refused: the message left without being consumed.
     */
    private void forget(QueueEntry entry) {
        if (entry.confirmWhenConsumed != null) {
            if (!closed) {
                entry.confirmWhenConsumed.refused();
            }
            entry.confirmWhenConsumed = null;
        }
        if (entry.location >= 0 && !deleted && !closed) {
            log.remove(entry.sequence, entry.location);
        }
        if (entry.message != null) {
            entry.message.release();
        }
    }

    /** Lets go of the bytes of waiting messages over the memory limit that the log can give back. */
    private void pageOut() {
        for (QueueEntry entry; (entry = pageOutCandidates.peekFirst()) != null; ) {
            if (entry.queued && entry.message != null) {
                if (waiting.bytes() <= memoryLimit || !log.isWritten(entry.location)) {
                    return;
                }
                waiting.memoryChanged(-entry.message.size());
                entry.message.release();
                entry.message = null;
            }
            pageOutCandidates.pollFirst();
        }
    }

    private void pageOutIdle() {
        if (!deleted && !closed) {
            pageOut();
            memoryBytesSeen = waiting.bytes();
        }
    }

    /**
     * Reads a paged-out message back from the log, if it was paged out.
     *
     * @return {@link #LOADED}; {@link #LOST} when the log holds no good copy (damaged disk), so the message is
     *         dropped, loudly, rather than blocking the queue behind it; {@link #NOT_NOW} when reading failed in a
     *         way a later attempt may get past: the entry is back in its place
     */
    private int pageIn(QueueEntry entry) {
        if (entry.message != null) {
            return LOADED;
        }
        try {
            entry.message = log.read(entry.sequence, entry.location);
            return LOADED;
        } catch (QueueLog.Unreadable e) {
            LOG.log(System.Logger.Level.ERROR, "queue ''{0}'': message {1} is lost, the log holds no good copy: {2}",
                name, entry.sequence, e.getMessage());
            log.remove(entry.sequence, entry.location);
            return LOST;
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "queue ''{0}'': message {1} cannot be read back now; dispatch "
                + "resumes with the next publish, settlement or credit", name, entry.sequence, e);
            waiting.putBack(entry);
            return NOT_NOW;
        }
    }

    /**
     * Expires the heads whose time has come (a message expiring {@code now} while a consumer has room was delivered
     * by then: a TTL of 0 means "only if a consumer takes it at once", as in RabbitMQ), and arms the timer for the
     * next head to expire, so an idle queue lets go of expired messages too.
     */
    private void expireHeads() {
        if (arguments.messageTtl() < 0 && !hasMessageTtls) {
            return;
        }
        waiting.expireHeads(context.clock().millis(), expire);
        armExpiryTimer();
    }

    private final Consumer<QueueEntry> expire = entry -> die(entry, DeadLetters.Reason.EXPIRED);

    private void armExpiryTimer() {
        long next = waiting.nextHeadExpiry();
        if (next == Long.MAX_VALUE || next >= expiryTimerAt || deleted || closed) {
            return;
        }
        if (expiryTimer != null) {
            expiryTimer.cancel();
        }
        expiryTimerAt = next;
        expiryTimer = context.clock().schedule(next, executor, this::expiryTimerFired);
    }

    private void expiryTimerFired() {
        expiryTimer = null;
        expiryTimerAt = Long.MAX_VALUE;
        if (!deleted && !closed) {
            dispatch(); // expires the heads that are due and arms the timer again
        }
    }

    /**
     * A waiting or settled entry dies: dead-lettered with {@code reason} when the queue has a dead-letter exchange,
     * dropped otherwise; gone from the queue either way.
     */
    private void die(QueueEntry entry, DeadLetters.Reason reason) {
        if (arguments.deadLetters() && entry.message == null) {
            try {
                entry.message = log.read(entry.sequence, entry.location);
            } catch (RuntimeException e) {
                LOG.log(System.Logger.Level.WARNING, "queue ''{0}'': message {1} dies ({2}) without being "
                    + "dead-lettered: it cannot be read back", name, entry.sequence, reason.value(), e);
            }
        }
        if (!arguments.deadLetters() || entry.message == null) {
            forget(entry);
            return;
        }
        Message message = entry.message.retain();
        forget(entry);
        deadLetter(message, reason);
    }

    /** Hands one reference of a dying message to the dead-letter exchange, or releases it when there is none. */
    private void deadLetter(Message message, DeadLetters.Reason reason) {
        if (!arguments.deadLetters()) {
            message.release();
            return;
        }
        try {
            context.deadLetters().deadLetter(message, reason, name, arguments);
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "queue ''{0}'': a message dead-lettered ({1}) is lost", name,
                reason.value(), e);
        }
    }

    /** Asks for one {@link #dispatch} once the executor's current turn is done, however often this turn asks. */
    private void dispatchAfterTurn() {
        if (!dispatchPending) {
            dispatchPending = true;
            executor.afterTurn(dispatchTask);
        }
    }

    /** The dispatch asked for, if it has not run yet (at the end of the turn, or of a batch of publishes). */
    private void dispatchAfterTurnRuns() {
        if (dispatchPending) {
            dispatch();
        }
    }

    /** Hands out messages while some consumer has room: by priority, round robin among equals. */
    private void dispatch() {
        assert executor.inExecutor();
        dispatchPending = false;
        boolean more = true;
        int taken = 0;
        while (more && !consumers.isEmpty() && !waiting.isEmpty()) {
            more = consumers.offer(offer) == ConsumerRing.Offer.DONE; // one message per offer
            if (more) {
                taken++;
            }
        }
        publisherFlow.dispatched(taken);
        expireHeads();
        waiting.readBack(memoryLimit);
        selective.dispatched();
        readyCount = waiting.size();
        if (!pageOutCandidates.isEmpty()) {
            pageOut();
        }
        memoryBytesSeen = waiting.bytes();
        publisherFlow.update(waiting.footprint(), waiting.size(), !consumers.isEmpty());
    }

    private final ConsumerRing.Offer offer = this::offer;

    /** Offers the next message this consumer may have to it. */
    private int offer(QueueConsumer consumer) {
        if (!consumer.hasRoom()) {
            return ConsumerRing.Offer.NONE;
        } else if (consumer.selector != null) {
            return selective.offer(consumer);
        }
        QueueEntry entry = waiting.removeHead();
        if (entry == null) {
            return ConsumerRing.Offer.NONE;
        }
        if (entry.expiresAt != Long.MAX_VALUE && entry.expiresAt < context.clock().millis()) {
            die(entry, DeadLetters.Reason.EXPIRED); // expired before its turn came: never delivered
            return ConsumerRing.Offer.DONE;
        }
        if (consumer.channelLimit() != null && !consumer.channelLimit().tryAcquire(consumer)) {
            waiting.putBack(entry); // the channel is at its limit: this consumer waits to be resumed
            return ConsumerRing.Offer.NONE;
        }
        int loaded = pageIn(entry);
        if (loaded == NOT_NOW) {
            releaseSlots(consumer, 1);
            return ConsumerRing.Offer.STOP; // nothing delivered: dispatching stops for now
        }
        if (loaded == LOADED) {
            consumer.sink.deliver(deliver(consumer, entry));
        } else {
            releaseSlots(consumer, 1);
        }
        return ConsumerRing.Offer.DONE;
    }

    /** Hands {@code entry} to {@code consumer}: counted against its credit, and unsettled unless pre-settled. */
    private QueueDelivery deliver(QueueConsumer consumer, QueueEntry entry) {
        if (consumer.flow.kind() == ConsumerFlow.Kind.CREDIT) {
            consumer.credit--;
            consumer.deliveryCount = SerialNumber.add(consumer.deliveryCount, 1);
        }
        long tag = consumer.nextTag++;
        boolean first = !entry.acquiredBefore;
        entry.acquiredBefore = true;
        Message message = entry.message;
        int remaining = waiting.size();
        counters.delivered(consumer.flow.kind() == ConsumerFlow.Kind.PULL, consumer.preSettled, !first,
            message.size());
        if (consumer.preSettled) {
            // at-most-once: the queue forgets the message and its reference goes with the delivery
            if (entry.location >= 0) {
                log.remove(entry.sequence, entry.location);
            }
            if (entry.confirmWhenConsumed != null) {
                entry.confirmWhenConsumed.run(); // settled as it was sent: consumed
                entry.confirmWhenConsumed = null;
            }
            return new QueueDelivery(message, tag, entry.deliveryCount, first, remaining);
        }
        consumer.unsettled.add(tag, entry);
        unackedCount++;
        return new QueueDelivery(message.retain(), tag, entry.deliveryCount, first, remaining);
    }
}
