package io.skiffmq.server.cluster;

import io.skiffmq.core.BrokerException;
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
 * What a message routed to a replicated queue goes to on this node while nothing reaches its leader (between two
 * leaders), or while publishes held then are still ahead of it: its {@link PublishHold}, which hands them to the next
 * leader in order. Only routing hands it out; everything but publishing fails as the queue's absence would.
 * Stateless but for the hold, which is thread-safe.
 */
final class UnledQueue implements Queue {
    private final QueueDeclaration declaration;
    private final PublishHold hold;

    UnledQueue(QueueDeclaration declaration, PublishHold hold) {
        this.declaration = declaration;
        this.hold = hold;
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
        hold.publish(message, confirm);
    }

    @Override
    public boolean holdsPublishers() {
        return true;
    }

    @Override
    public boolean holdPublisher(Runnable resume) {
        return hold.holdPublisher(resume);
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
