package io.skiffmq.server.amqp091;

import io.skiffmq.core.queue.ConsumerFlow;
import io.skiffmq.core.queue.ConsumerSink;
import io.skiffmq.core.queue.Outcome;
import io.skiffmq.core.queue.Queue;
import io.skiffmq.core.queue.QueueConsumer;
import io.skiffmq.core.queue.QueueDelivery;

/**
 * A channel's {@code basic.get} on one queue: pull subscriptions (one for acked gets, one for no-ack ones, made on
 * first use), which count as no consumer. Unacked messages got stay with the acked subscription until settled or
 * the channel closes. Owned by the connection's event loop, but for {@link #deleted}, which the queue sets.
 */
final class QueueGetter implements DeliveryTags.Source, ConsumerSink {
    private final Queue queue;
    private QueueConsumer acked;
    private QueueConsumer noAck;
    private volatile boolean deleted;

    private final io.skiffmq.core.metrics.ConnectionCounters counters;

    QueueGetter(Queue queue, io.skiffmq.core.metrics.ConnectionCounters counters) {
        this.queue = queue;
        this.counters = counters;
    }

    @Override
    public Queue queue() {
        return queue;
    }

    QueueConsumer subscription(boolean preSettled) {
        if (preSettled) {
            if (noAck == null) {
                noAck = queue.subscribe(this, ConsumerFlow.pull(), true);
            }
            return noAck;
        }
        if (acked == null) {
            acked = queue.subscribe(this, ConsumerFlow.pull(), false);
        }
        return acked;
    }

    /** The queue was deleted: a later get starts over on whatever queue has the name by then. */
    boolean deleted() {
        return deleted;
    }

    @Override
    public void settle(long first, long last, Outcome outcome, int count) {
        if (outcome.kind() == Outcome.Kind.ACCEPTED) {
            counters.acknowledged(count);
        }
        queue.settle(acked, first, last, outcome);
    }

    /** The channel is closing: its subscriptions go with the channel's others on the queue. */
    void leave(ChannelRelease release) {
        if (acked != null) {
            release.add(queue, acked);
        }
        if (noAck != null) {
            release.add(queue, noAck);
        }
    }

    @Override
    public void deliver(QueueDelivery delivery) {
        throw new IllegalStateException("a pull subscription is never pushed to");
    }

    @Override
    public void creditState(long deliveryCount, long linkCredit, long available, boolean drain) {
    }

    @Override
    public void queueDeleted() {
        deleted = true;
    }
}
