package io.skiffmq.core;

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
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * What a message is routed to when its queue is one of the cluster's but nothing on this node reaches it now: a
 * replicated queue between two leaders (or whose new leader, this node, is still building its live queue), or a
 * record whose proxy cannot be made yet. It refuses each message as unavailable, so that a publisher with confirms
 * gets a nack; dropping it as unroutable would confirm a message no queue holds. Only routing hands it out
 * ({@link VirtualHost#route}); everything but publishing fails as the queue's absence would. Stateless. A cluster's
 * replicated queue between two leaders extends it to hold its publishes for the next leader instead.
 */
public class UnreachableQueue implements Queue {
    private final QueueDeclaration declaration;

    public UnreachableQueue(QueueDeclaration declaration) {
        this.declaration = declaration;
    }

    @Override
    public String name() {
        return declaration.name();
    }

    @Override
    public QueueDeclaration declaration() {
        return declaration;
    }

    @Override
    public void publish(Message message, PublishConfirm confirm) {
        message.release();
        if (confirm != null) {
            confirm.unavailable(name());
        }
    }

    private BrokerException unreachable() {
        return new BrokerException(BrokerException.Kind.NOT_FOUND, "queue '" + name() + "' is unavailable");
    }

    @Override
    public QueueExecutor executor() {
        return QueueExecutor.CALLER_THREAD;
    }

    @Override
    public QueueConsumer subscribe(ConsumerSink sink, ConsumerFlow flow, boolean preSettled, boolean exclusive,
            int priority, io.skiffmq.core.filter.Selector selector) {
        throw unreachable();
    }

    @Override
    public void cancel(QueueConsumer consumer) {
    }

    @Override
    public CompletableFuture<Void> limit(QueueConsumer consumer, PrefetchLimit channelLimit) {
        return CompletableFuture.failedFuture(unreachable());
    }

    @Override
    public void flow(QueueConsumer consumer, long deliveryCount, long linkCredit, boolean drain, boolean echo) {
    }

    @Override
    public void settle(QueueConsumer consumer, long firstTag, long lastTag, Outcome outcome) {
    }

    @Override
    public CompletableFuture<QueueDelivery> get(QueueConsumer consumer) {
        return CompletableFuture.failedFuture(unreachable());
    }

    @Override
    public void unsubscribe(QueueConsumer consumer, Outcome unsettledOutcome) {
    }

    @Override
    public void unsubscribe(List<QueueConsumer> consumers, Outcome unsettledOutcome) {
    }

    @Override
    public int readyCount() {
        return 0;
    }

    @Override
    public int consumerCount() {
        return 0;
    }

    @Override
    public int unackedCount() {
        return 0;
    }

    @Override
    public QueueCounters counters() {
        return new QueueCounters();
    }

    @Override
    public CompletableFuture<QueueCounts> counts() {
        return CompletableFuture.failedFuture(unreachable());
    }

    @Override
    public CompletableFuture<Integer> purge() {
        return CompletableFuture.failedFuture(unreachable());
    }

    @Override
    public CompletableFuture<Void> close() {
        return CompletableFuture.completedFuture(null);
    }

    @Override
    public CompletableFuture<Integer> delete() {
        return CompletableFuture.failedFuture(unreachable());
    }

    @Override
    public void whenUnused(Runnable action) {
    }
}
