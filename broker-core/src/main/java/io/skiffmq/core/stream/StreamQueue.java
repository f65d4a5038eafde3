package io.skiffmq.core.stream;

import io.skiffmq.codec.amqp10.SerialNumber;
import io.skiffmq.core.BrokerException;
import io.skiffmq.core.BrokerException.Kind;
import io.skiffmq.core.filter.Selector;
import io.skiffmq.core.message.Message;
import io.skiffmq.core.metrics.QueueCounters;
import io.skiffmq.core.policy.EffectivePolicy;
import io.skiffmq.core.queue.ConsumerFlow;
import io.skiffmq.core.queue.ConsumerSink;
import io.skiffmq.core.queue.Outcome;
import io.skiffmq.core.queue.PrefetchLimit;
import io.skiffmq.core.queue.PublishConfirm;
import io.skiffmq.core.queue.Queue;
import io.skiffmq.core.queue.QueueConsumer;
import io.skiffmq.core.queue.QueueContext;
import io.skiffmq.core.queue.QueueCounts;
import io.skiffmq.core.queue.QueueDeclaration;
import io.skiffmq.core.queue.QueueDelivery;
import io.skiffmq.core.queue.QueueExecutor;
import io.skiffmq.core.queue.QueueType;
import io.skiffmq.core.queue.StreamArguments;

import io.skiffmq.core.time.BrokerClock;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A stream (RabbitMQ's {@code x-queue-type: stream}): an append-only log that consumers read without removing
 * anything, each from where it asks ({@link StreamOffset}), at its own pace. Messages are kept as AMQP 1.0 bytes in
 * a {@link StreamStore} (the store's stream log): one entry per message, offsets 0, 1, 2, … with no gap, chunks of
 * what arrived together ({@link StreamAppender}), retention by size and age a segment at a time.
 *
 * <p>Behind the one consumer API ({@link Queue}), with RabbitMQ 4's semantics: a consumer reads from
 * {@link StreamOffset#next()} unless it asks otherwise ({@link #subscribe(ConsumerSink, ConsumerFlow, boolean,
 * StreamConsumerArguments)}), settlements only give room back, {@link #get} and {@link #purge} are refused
 * ({@code NOT_IMPLEMENTED}, as RabbitMQ refuses them), channel-wide prefetch limits do not apply, and the counts are
 * the stream's: messages = committed offset − first offset + 1, none unacknowledged.
 *
 * <p>What the stream protocol needs beyond this (whole chunks, without a copy; named producers' deduplication;
 * stored offsets) is the store's log itself ({@link #store()}): see docs/streams.md.
 *
 * <p>All state is owned by {@link #executor()}'s thread, which is also the log's writer; the public methods hop
 * there. Read anywhere: the counts ({@link #readyCount}, …) and {@link #counters()}.
 */
public final class StreamQueue implements Queue {
    private static final System.Logger LOG = System.getLogger(StreamQueue.class.getName());
    /**
     * Deliveries to one consumer per dispatch, then the others' turn and the loop's other work: a consumer with a
     * large prefetch reading from the first cannot hold the event loop for long (a few milliseconds at most).
     */
    static final int PUMP_BUDGET = 1024;
    /** Age retention is looked at this often at most (and at least once per {@code x-max-age}). */
    private static final long RETENTION_PERIOD_MILLIS = 60_000;

    private final String name;
    private final QueueExecutor executor;
    private final QueueDeclaration declaration;
    /** The declaration's arguments as read. */
    private final StreamArguments declared;
    /** What the log keeps: {@link #declared} with its policy's keys; the stream's thread's. */
    private StreamArguments arguments;
    /** The policy in force; written under the virtual host's write lock, read anywhere. */
    private volatile EffectivePolicy policy = EffectivePolicy.NONE;
    private final String vhost;
    private final BrokerClock clock;
    private final StreamStore store;
    private final QueueCounters counters = new QueueCounters();
    private final StreamAppender appender;
    private final List<StreamConsumer> consumers = new ArrayList<>();
    private final AtomicBoolean committedAsked = new AtomicBoolean();
    private final Runnable onCommitted = this::onCommitted;
    private final Runnable dispatchTask = this::dispatch;
    private boolean dispatchAsked;
    private BrokerClock.Timer retention;
    private boolean deleted;
    private boolean closed;
    private volatile int consumerCount;
    private volatile int unackedCount;

    /**
     * @param store the stream's log, opened; this queue's thread becomes its writer
     * @param holdAbove bytes handed over by publishers on other threads and not written yet past which they are
     *        held back (the broker's {@code queue-memory-limit})
     */
    public StreamQueue(QueueDeclaration declaration, QueueExecutor executor, QueueContext context, StreamStore store,
            long holdAbove) {
        this.name = declaration.name();
        this.executor = executor;
        this.declaration = declaration;
        this.vhost = context.vhost();
        this.declared = StreamArguments.of(context.vhost(), name, declaration.arguments());
        this.arguments = declared;
        this.clock = context.clock();
        this.store = store;
        this.appender = new StreamAppender(name, executor, store, counters, holdAbove);
        store.addCommitListener(offset -> committed());
        if (arguments.maxAgeMillis() > 0) {
            scheduleRetention();
        }
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public QueueType type() {
        return QueueType.STREAM;
    }

    @Override
    public QueueExecutor executor() {
        return executor;
    }

    @Override
    public QueueDeclaration declaration() {
        return declaration;
    }

    /** The stream's arguments in effect: its declaration's, with its policy's. Read on the stream's thread. */
    public StreamArguments streamArguments() {
        return arguments;
    }

    @Override
    public EffectivePolicy policy() {
        return policy;
    }

    /**
     * Takes a policy's retention and segment size into effect (the policy wins over the arguments, as in
     * RabbitMQ): the log keeps by the new limits from its next retention pass, which runs now.
     */
    @Override
    public void applyPolicy(EffectivePolicy next) {
        policy = next;
        executor.run(() -> {
            StreamArguments inEffect = declared.withPolicy(next);
            if (deleted || closed || inEffect.equals(arguments)) {
                return;
            }
            arguments = inEffect;
            store.retention(inEffect.maxLengthBytes(), inEffect.maxAgeMillis(), inEffect.maxSegmentSizeBytes());
            stopRetention();
            if (inEffect.maxAgeMillis() > 0) {
                scheduleRetention();
            }
            try {
                store.applyRetention();
            } catch (RuntimeException e) {
                LOG.log(System.Logger.Level.WARNING, "stream '" + name + "': retention failed", e);
            }
        });
    }

    /**
     * The stream's log: for the stream protocol (whole chunks, producers, stored offsets), whose writes must run on
     * {@link #executor()}'s thread, the log's only writer.
     */
    public StreamStore store() {
        return store;
    }

    // ---- publishing -----------------------------------------------------------------------------------------

    @Override
    public void publish(Message message, PublishConfirm confirm) {
        appender.publish(message, confirm);
    }

    /**
     * On the stream's thread: writes the chunk being built once this turn is done, as for {@link #publish}es. For
     * the stream protocol, which adds entries to the log's chunk builder itself (on this thread, the log's only
     * writer), so its entries and other publishes of the same turn share one chunk.
     */
    public void commitAfterTurn() {
        appender.commitAfterTurn();
    }

    /**
     * On the stream's thread: true while its log takes writes (the stream is neither deleted nor closed, and its log
     * has not failed). The stream protocol asks before it adds entries to the log's chunk builder itself.
     */
    public boolean writable() {
        return !deleted && !closed && !appender.failed();
    }

    @Override
    public boolean holdsPublishers() {
        return appender.holding();
    }

    @Override
    public boolean holdPublisher(Runnable resume) {
        return appender.hold(resume);
    }

    /** The log committed more (any thread): confirms and consumers catch up on the stream's thread. */
    private void committed() {
        if (committedAsked.compareAndSet(false, true)) {
            if (executor.inExecutor()) {
                executor.afterTurn(onCommitted); // inside the commit: after it, not in it
            } else {
                executor.execute(onCommitted);
            }
        }
    }

    private void onCommitted() {
        committedAsked.set(false);
        if (deleted || closed) {
            return;
        }
        appender.committed(store.committedOffset());
        dispatch();
    }

    // ---- consuming ------------------------------------------------------------------------------------------

    /** A consumer from the next message on, as RabbitMQ's default; exclusivity and priorities do not apply. */
    @Override
    public QueueConsumer subscribe(ConsumerSink sink, ConsumerFlow flow, boolean preSettled, boolean exclusive,
            int priority, Selector selector) {
        return subscribe(sink, flow, preSettled, new StreamConsumerArguments(StreamOffset.next(), null), selector);
    }

    /** A consumer reading from {@code arguments}' offset specification, through its filter. */
    public QueueConsumer subscribe(ConsumerSink sink, ConsumerFlow flow, boolean preSettled,
            StreamConsumerArguments arguments) {
        return subscribe(sink, flow, preSettled, arguments, null);
    }

    /**
     * @param selector only the messages it matches are delivered (the others are skipped, taking no credit); null
     *        for every message
     */
    public QueueConsumer subscribe(ConsumerSink sink, ConsumerFlow flow, boolean preSettled,
            StreamConsumerArguments arguments, Selector selector) {
        StreamConsumer consumer = new StreamConsumer(this, sink, flow, preSettled, arguments.offset(),
            arguments.filter(), selector);
        executor.run(() -> {
            if (deleted || closed) {
                consumer.removed = true;
                sink.subscribed();
                sink.queueDeleted();
                return;
            }
            try {
                consumer.open(store);
            } catch (RuntimeException e) {
                // the log cannot be read (closed, a file that cannot be mapped): the consumer hears it is gone
                LOG.log(System.Logger.Level.ERROR, "stream '" + name + "' cannot be read for a new consumer", e);
                consumer.removed = true;
                sink.subscribed();
                sink.queueDeleted();
                return;
            }
            consumers.add(consumer);
            updateGauges();
            sink.subscribed();
            dispatchAfterTurn();
        });
        return consumer.handle;
    }

    /**
     * A consumer's arguments (0-9-1 {@code basic.consume}) read for this stream, an interval counted back from the
     * broker's clock.
     *
     * @throws BrokerException PRECONDITION_FAILED in RabbitMQ's words
     */
    public StreamConsumerArguments consumerArguments(java.util.Map<String, Object> consumerArguments) {
        return StreamConsumerArguments.of(vhost, name, consumerArguments, clock.millis());
    }

    private static StreamConsumer consumer(QueueConsumer handle) {
        return (StreamConsumer) handle.state();
    }

    @Override
    public void cancel(QueueConsumer handle) {
        executor.run(() -> {
            StreamConsumer consumer = consumer(handle);
            if (!consumer.removed) {
                consumer.cancelled = true;
                updateGauges();
            }
        });
    }

    /** A stream takes no part in a channel-wide prefetch limit (RabbitMQ refuses consuming under one). */
    @Override
    public CompletableFuture<Void> limit(QueueConsumer consumer, PrefetchLimit channelLimit) {
        return CompletableFuture.completedFuture(null);
    }

    @Override
    public void flow(QueueConsumer handle, long deliveryCount, long linkCredit, boolean drain, boolean echo) {
        executor.run(() -> {
            StreamConsumer consumer = consumer(handle);
            if (consumer.removed || consumer.flow.kind() != ConsumerFlow.Kind.CREDIT) {
                return;
            }
            // [2.6.7] link-credit(snd) := delivery-count(rcv) + link-credit(rcv) - delivery-count(snd)
            long receiverCount = deliveryCount < 0 ? 0 : deliveryCount;
            long credit = SerialNumber.diff(SerialNumber.add(receiverCount, linkCredit), consumer.deliveryCount);
            consumer.credit = Math.max(0, credit);
            consumer.drain = drain;
            // a drain uses up only the credit nothing committed can take: everything that can goes first
            pump(consumer, drain);
            long available = consumer.available(store.committedOffset());
            if (consumer.drain) {
                // [2.6.7] drain: use the credit up by advancing delivery-count, then say so
                consumer.deliveryCount = SerialNumber.add(consumer.deliveryCount, consumer.credit);
                consumer.credit = 0;
                consumer.drain = false;
                consumer.sink.creditState(consumer.deliveryCount, 0, available, true);
            } else if (echo) {
                consumer.sink.creditState(consumer.deliveryCount, consumer.credit, available, false);
            }
        });
    }

    @Override
    public void settle(QueueConsumer handle, long firstTag, long lastTag, Outcome outcome) {
        executor.run(() -> {
            StreamConsumer consumer = consumer(handle);
            if (consumer.removed) {
                return;
            }
            int settled = consumer.settle(firstTag, lastTag);
            if (settled > 0) {
                if (outcome.kind() == Outcome.Kind.ACCEPTED) {
                    counters.countAcknowledged(settled);
                }
                updateGauges();
                dispatchAfterTurn(); // whatever the outcome, the message stays: the room comes back
            }
        });
    }

    /** {@code basic.get}: refused, as RabbitMQ refuses it on a stream (540 over 0-9-1). */
    @Override
    public CompletableFuture<QueueDelivery> get(QueueConsumer consumer) {
        return CompletableFuture.failedFuture(new BrokerException(Kind.NOT_IMPLEMENTED,
            "basic.get not supported by stream queues " + describe()));
    }

    @Override
    public void unsubscribe(QueueConsumer handle, Outcome unsettledOutcome) {
        unsubscribe(List.of(handle), unsettledOutcome);
    }

    @Override
    public void unsubscribe(List<QueueConsumer> leaving, Outcome unsettledOutcome) {
        executor.run(() -> {
            for (QueueConsumer handle : leaving) {
                StreamConsumer consumer = consumer(handle);
                if (!consumer.removed) {
                    consumer.removed = true;
                    consumer.unsettled.clear();
                    consumer.close();
                    consumers.remove(consumer);
                }
            }
            updateGauges();
        });
    }

    private void dispatchAfterTurn() {
        if (!dispatchAsked) {
            dispatchAsked = true;
            executor.afterTurn(dispatchTask);
        }
    }

    /** Each consumer with room reads what is committed. */
    private void dispatch() {
        dispatchAsked = false;
        if (deleted || closed) {
            return;
        }
        for (int i = 0; i < consumers.size(); i++) {
            pump(consumers.get(i), false);
        }
    }

    /**
     * Delivers to the consumer what it has room for and is committed, {@link #PUMP_BUDGET} at a time: the rest after
     * this turn, unless {@code all}.
     */
    private void pump(StreamConsumer consumer, boolean all) {
        try {
            int delivered;
            do {
                delivered = consumer.pump(name, counters, PUMP_BUDGET);
                if (delivered > 0) {
                    updateGauges();
                }
            } while (all && delivered == PUMP_BUDGET);
            if (delivered == PUMP_BUDGET) {
                dispatchAfterTurn(); // more may wait: after the loop's other work, and the other consumers' turns
            }
        } catch (RuntimeException e) {
            // the log cannot be read (a file that cannot be mapped): logged, and tried again with the next commit
            LOG.log(System.Logger.Level.ERROR, "stream '" + name + "' cannot be read for a consumer", e);
        }
    }

    private void updateGauges() {
        int pushed = 0;
        int unacked = 0;
        for (StreamConsumer consumer : consumers) {
            if (consumer.pushed()) {
                pushed++;
            }
            unacked += consumer.unsettled.count();
        }
        consumerCount = pushed;
        unackedCount = unacked;
    }

    // ---- counts ---------------------------------------------------------------------------------------------

    /** As RabbitMQ counts a stream's messages: committed offset − first offset + 1. Any thread. */
    public long messages() {
        long committed = store.committedOffset();
        return committed < 0 ? 0 : Math.max(0, committed + 1 - store.firstOffset());
    }

    /** The stream's messages ({@link #messages}), as RabbitMQ reports them ready. */
    @Override
    public int readyCount() {
        return (int) Math.min(Integer.MAX_VALUE, messages());
    }

    @Override
    public int consumerCount() {
        return consumerCount;
    }

    /** Deliveries not settled yet: they hold no message back, but count against the consumers' prefetch. */
    @Override
    public int unackedCount() {
        return unackedCount;
    }

    @Override
    public QueueCounters counters() {
        return counters;
    }

    /**
     * The messages and consumers; none unacknowledged, as RabbitMQ counts a stream (a stream's deliveries hold nothing
     * back, they only use their consumer's prefetch).
     */
    @Override
    public CompletableFuture<QueueCounts> counts() {
        CompletableFuture<QueueCounts> counts = new CompletableFuture<>();
        executor.run(() -> {
            appender.commit(); // what this caller published before is counted
            counts.complete(new QueueCounts(readyCount(), consumerCount, 0));
        });
        return counts;
    }

    // ---- life -----------------------------------------------------------------------------------------------

    /** {@code queue.purge}: refused, as RabbitMQ refuses it on a stream (540 over 0-9-1). */
    @Override
    public CompletableFuture<Integer> purge() {
        return CompletableFuture.failedFuture(new BrokerException(Kind.NOT_IMPLEMENTED,
            "queue.purge not supported by stream queues " + describe()));
    }

    @Override
    public CompletableFuture<Void> close() {
        CompletableFuture<Void> done = new CompletableFuture<>();
        executor.run(() -> {
            if (!closed && !deleted) {
                closed = true;
                stopRetention();
                appender.closed();
                consumers.forEach(StreamConsumer::close);
                store.close();
            }
            done.complete(null);
        });
        return done;
    }

    /** Deletes the stream and its log; completes with its message count, as RabbitMQ's delete-ok says it. */
    @Override
    public CompletableFuture<Integer> delete() {
        CompletableFuture<Integer> done = new CompletableFuture<>();
        executor.run(() -> {
            if (deleted || closed) {
                done.complete(0);
                return;
            }
            int count = readyCount();
            deleted = true;
            stopRetention();
            appender.deleted();
            for (StreamConsumer consumer : List.copyOf(consumers)) {
                consumer.close();
                consumer.sink.queueDeleted();
            }
            try {
                store.delete();
            } catch (RuntimeException e) {
                LOG.log(System.Logger.Level.WARNING, "stream '" + name + "' deleted, its files not all", e);
            }
            done.complete(count);
        });
        return done;
    }

    /** Never: a stream is neither auto-delete nor expires. */
    @Override
    public void whenUnused(Runnable action) {
    }

    private void scheduleRetention() {
        long period = Math.max(1_000, Math.min(RETENTION_PERIOD_MILLIS, arguments.maxAgeMillis()));
        retention = clock.schedule(clock.millis() + period, executor, () -> {
            if (deleted || closed) {
                return;
            }
            try {
                store.applyRetention();
            } catch (RuntimeException e) {
                LOG.log(System.Logger.Level.WARNING, "stream '" + name + "': retention failed", e);
            }
            scheduleRetention();
        });
    }

    private void stopRetention() {
        if (retention != null) {
            retention.cancel();
            retention = null;
        }
    }

    /** As RabbitMQ's {@code rabbit_misc:rs/1} names a queue. */
    private String describe() {
        return "queue '" + name + "' in vhost '" + vhost + "'";
    }
}
