package io.skiffmq.core.queue;

import io.skiffmq.core.message.Message;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * A queue: messages in, deliveries out to consumers, paced as each consumer's {@link ConsumerFlow} says. The queue
 * owns the pacing state (AMQP 1.0 delivery-count, link-credit and drain; 0-9-1 prefetch): it counts a delivery when
 * it hands it over, so deliveries still travelling to the consumer's connection are counted and a consumer is never
 * sent more than it allowed.
 *
 * <p>Every method may be called from any thread; the queue runs the work on its {@link #executor()}, in the
 * order calls were made from each thread.
 */
public interface Queue {
    String name();

    QueueExecutor executor();

    QueueDeclaration declaration();

    /** The queue's type ({@code x-queue-type}). */
    default QueueType type() {
        return QueueType.CLASSIC;
    }

    /** Survives a restart: the queue, and its durable messages. */
    default boolean durable() {
        return declaration().durable();
    }

    /** The declaration's arguments ({@code x-queue-type}, …). */
    default Map<String, Object> arguments() {
        return declaration().arguments();
    }

    /**
     * Appends a message.
     *
     * @param message one reference, which the queue takes over
     * @param confirm runs once the message is as safe as this queue promises: in memory for a message held in
     *        memory (on the queue's thread), on disk for a durable message of a durable queue (on the log's writer
     *        thread); or is told the queue {@link PublishConfirm#refused refused} it. Null when nobody waits.
     */
    void publish(Message message, PublishConfirm confirm);

    /**
     * What a publisher checks before handing this queue a message (a topic subscription's selector and no-local,
     * from its arguments); null when the queue takes every message routed to it.
     */
    default io.skiffmq.core.filter.SubscriptionFilter subscriptionFilter() {
        return null;
    }

        /**
     * True when this queue may be holding its publishers back ({@link PublisherFlow}); cheap enough to ask on every
     * publish. A publisher then asks {@link #holdPublisher} before it takes more.
     */
    default boolean holdsPublishers() {
        return false;
    }

    /**
     * When this queue holds its publishers back now: keeps {@code resume}, run once on any thread when it no longer
     * does, and returns true. Otherwise false, and {@code resume} is dropped.
     */
    default boolean holdPublisher(Runnable resume) {
        return false;
    }

    /** {@link #subscribe(ConsumerSink, ConsumerFlow, boolean, boolean)}, not exclusive. */
    default QueueConsumer subscribe(ConsumerSink sink, ConsumerFlow flow, boolean preSettled) {
        return subscribe(sink, flow, preSettled, false);
    }

    /**
     * Adds a consumer. A credit consumer has no credit until its first {@link #flow}. The queue answers through the
     * sink, before any delivery: {@link ConsumerSink#subscribed}, or {@link ConsumerSink#refused} when another
     * consumer has the queue exclusively, or this one asks for that while others consume (pull consumers do not
     * count).
     *
     * @param preSettled deliveries are settled when sent (at-most-once): the queue forgets them at once
     * @param exclusive no other consumer may push from the queue while this one does (0-9-1 exclusive consume)
     */
    default QueueConsumer subscribe(ConsumerSink sink, ConsumerFlow flow, boolean preSettled, boolean exclusive) {
        return subscribe(sink, flow, preSettled, exclusive, 0);
    }

    /**
     * {@link #subscribe(ConsumerSink, ConsumerFlow, boolean, boolean)} with a priority: a consumer is pushed to only
     * while every consumer of higher priority has no room (RabbitMQ's consumer priorities; 0 is the default).
     */
    default QueueConsumer subscribe(ConsumerSink sink, ConsumerFlow flow, boolean preSettled, boolean exclusive,
            int priority) {
        return subscribe(sink, flow, preSettled, exclusive, priority, null);
    }

    /**
     * {@link #subscribe(ConsumerSink, ConsumerFlow, boolean, boolean, int)} with a selector: only the waiting
     * messages it matches are pushed to the consumer, the oldest first; the others stay, in order, for other
     * consumers (JMS selectors on a queue, as Artemis has them). Null: every message.
     */
    QueueConsumer subscribe(ConsumerSink sink, ConsumerFlow flow, boolean preSettled, boolean exclusive, int priority,
        io.skiffmq.core.filter.Selector selector);

    /**
     * Stops pushing to the consumer (0-9-1 {@code basic.cancel}) but keeps its unsettled deliveries settleable: they
     * stay with it until settled, or until {@link #unsubscribe}. It no longer counts as a consumer: an auto-delete
     * queue left without consumers goes.
     */
    void cancel(QueueConsumer consumer);

    /**
     * From now on the consumer's deliveries wait for {@code channelLimit}, and count against it unless it is
     * pre-settled, those unsettled now included (0-9-1 {@code basic.qos global} set after {@code basic.consume}). A
     * consumer that has a channel-wide limit keeps it. Completes on the queue's thread once that holds.
     */
    CompletableFuture<Void> limit(QueueConsumer consumer, PrefetchLimit channelLimit);

    /**
     * A credit consumer's flow state [2.6.7]: its credit becomes {@code deliveryCount + linkCredit} minus the
     * queue's delivery-count (serial arithmetic; {@code deliveryCount} -1 when the consumer does not know it yet).
     */
    void flow(QueueConsumer consumer, long deliveryCount, long linkCredit, boolean drain, boolean echo);

    /**
     * Settles the consumer's unsettled deliveries whose tags are in {@code firstTag..lastTag} with {@code outcome};
     * tags in the range that are not unsettled are skipped. Never adds credit.
     */
    void settle(QueueConsumer consumer, long firstTag, long lastTag, Outcome outcome);

    /**
     * Takes the oldest ready message for {@code consumer} (0-9-1 {@code basic.get}), counted and settled like a
     * pushed delivery. Completes on the queue's thread, with null when no message is ready.
     */
    CompletableFuture<QueueDelivery> get(QueueConsumer consumer);

    /** Removes the consumer; its unsettled deliveries are settled with {@code unsettledOutcome}. */
    void unsubscribe(QueueConsumer consumer, Outcome unsettledOutcome);

    /**
     * Removes several consumers at once (a closing 0-9-1 channel's consumers, cancelled ones and gets): their
     * unsettled deliveries are settled with {@code unsettledOutcome} together, before the queue hands any out again,
     * so messages they give back keep their original order whichever consumer held them.
     */
    void unsubscribe(java.util.List<QueueConsumer> consumers, Outcome unsettledOutcome);

    /** Messages waiting for a consumer (not counting those delivered and unsettled). Approximate off-thread. */
    int readyCount();

    /** Consumers subscribed now. Approximate off-thread. */
    int consumerCount();

    /** Messages delivered and not yet settled, all consumers together. Approximate off-thread. */
    int unackedCount();

    /** What the queue counted since it was created (messages in, deliveries, acknowledgements); read anywhere. */
    io.skiffmq.core.metrics.QueueCounters counters();

    /**
     * Ready messages and consumers, read on the queue's thread after every publish made before this call from the
     * calling thread: exact for that caller (0-9-1 {@code declare-ok}).
     */
    CompletableFuture<QueueCounts> counts();

    /** Drops every message waiting for a consumer (not those delivered and unsettled); completes with how many. */
    CompletableFuture<Integer> purge();

    /**
     * The broker is stopping: the queue lets go of the messages it holds in memory and takes no more, writing
     * nothing to its log (its durable messages stay there for the restart). Completes once done.
     */
    CompletableFuture<Void> close();

    /**
     * Deletes the queue: its messages are dropped and each consumer is told ({@link ConsumerSink#queueDeleted}).
     * Completes with the number of messages that were ready (those delivered and unsettled not counted, as in
     * RabbitMQ).
     */
    CompletableFuture<Integer> delete();

    /**
     * Runs {@code action} on the queue's thread when the queue should go unused: an auto-delete queue when its last
     * consumer leaves, a queue with {@code x-expires} when it was not used for that long. Set once, by the virtual
     * host, before the queue is used.
     */
    void whenUnused(Runnable action);

    /** The policy and operator policy in force, and their merged definition. */
    default io.skiffmq.core.policy.EffectivePolicy policy() {
        return io.skiffmq.core.policy.EffectivePolicy.NONE;
    }

    /**
     * Its virtual host's policies changed what applies to this queue: the queue takes it into effect on its thread,
     * without a redeclaration. Called under the virtual host's write lock, in the order of the changes.
     */
    default void applyPolicy(io.skiffmq.core.policy.EffectivePolicy policy) {
    }

    /** The queue was used (redeclared): {@code x-expires} counts from now. */
    default void touch() {
    }
}
