package io.skiffmq.core.queue;

import io.skiffmq.core.message.Message;

/**
 * A queue: messages in, deliveries out to consumers under the credit each consumer grants. The queue owns that
 * credit (delivery-count, link-credit, drain): it counts a delivery against credit when it hands it over, so
 * deliveries still travelling to the consumer's connection are counted and a consumer is never sent more than it
 * granted.
 *
 * <p>Every method may be called from any thread; the queue runs the work on its {@link #executor()}, in the
 * order calls were made from each thread.
 */
public interface Queue {
    String name();

    QueueExecutor executor();

    /** Survives a restart: the queue, and its durable messages. */
    boolean durable();

    /** The declaration's arguments ({@code x-queue-type}, …). */
    java.util.Map<String, Object> arguments();

    /**
     * Appends a message; {@code confirmed} runs (on the queue's thread) once the message is as safe as this queue
     * promises: in memory for this queue, on disk for durable ones.
     *
     * @param message one reference, which the queue takes over
     */
    void publish(Message message, Runnable confirmed);

    /**
     * Adds a consumer, with no credit until its first {@link #flow}.
     *
     * @param preSettled deliveries are settled when sent (at-most-once): the queue forgets them at once
     */
    QueueConsumer subscribe(ConsumerSink sink, boolean preSettled);

    /**
     * The consumer's flow state [2.6.7]: its credit becomes {@code deliveryCount + linkCredit} minus the queue's
     * delivery-count (serial arithmetic; {@code deliveryCount} -1 when the consumer does not know it yet).
     */
    void flow(QueueConsumer consumer, long deliveryCount, long linkCredit, boolean drain, boolean echo);

    /** Settles one delivery with {@code outcome}. Never adds credit. */
    void settle(QueueConsumer consumer, long sequence, Outcome outcome);

    /** Removes the consumer; its unsettled deliveries are settled with {@code unsettledOutcome}. */
    void unsubscribe(QueueConsumer consumer, Outcome unsettledOutcome);

    /** Messages waiting for a consumer (not counting those delivered and unsettled). Approximate off-thread. */
    int readyCount();

    /** Consumers subscribed now. Approximate off-thread. */
    int consumerCount();

    /** Drops every message waiting for a consumer (not those delivered and unsettled); completes with how many. */
    java.util.concurrent.CompletableFuture<Integer> purge();

    /**
     * The broker is stopping: the queue lets go of the messages it holds in memory and takes no more, writing
     * nothing to its log (its durable messages stay there for the restart). Completes once done.
     */
    java.util.concurrent.CompletableFuture<Void> close();

    /**
     * Deletes the queue: its messages are dropped; consumers are told nothing here (their links are the caller's
     * business). Completes with the number of messages it held.
     */
    java.util.concurrent.CompletableFuture<Integer> delete();
}
