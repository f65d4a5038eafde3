package io.skiffmq.server.amqp091;

import io.skiffmq.core.queue.ConsumerFlow;
import io.skiffmq.core.queue.ConsumerSink;
import io.skiffmq.core.queue.Handoff;
import io.skiffmq.core.queue.Outcome;
import io.skiffmq.core.queue.PrefetchLimit;
import io.skiffmq.core.queue.Queue;
import io.skiffmq.core.queue.QueueConsumer;
import io.skiffmq.core.queue.QueueDelivery;
import io.skiffmq.core.stream.StreamConsumerArguments;
import io.skiffmq.core.stream.StreamQueue;
import java.util.concurrent.CompletableFuture;

/**
 * One {@code basic.consume}: a subscription to a queue, whose deliveries the queue hands over (on its thread) and
 * this takes to the channel on the connection's event loop, in order, in batches.
 *
 * <p>Pacing: with a prefetch of its own the queue's prefetch limit bounds what is in flight. Without one (no-ack
 * consumers, or prefetch 0) nothing would, so such a consumer is paced by credit that only this side grants,
 * {@link #WINDOW} at a time, and only while the socket takes more: a slow client stops the queue instead of filling
 * the broker's memory with frames. The channel's global prefetch, when set, applies on top of either.
 *
 * <p>After {@code basic.cancel} the queue stops pushing, and deliveries already on their way are released back to
 * it. The unacked deliveries are the channel's ({@link DeliveryTags}): they stay settleable through this
 * subscription, which the channel keeps until they are all settled ({@link #settle}) or it closes, when it
 * unsubscribes every subscription of its own together ({@link #leave}). Owned by the connection's event loop, except
 * the {@link ConsumerSink} methods, which only hand over.
 */
final class ChannelConsumer implements ConsumerSink, DeliveryTags.Source {
    /** Credit granted at a time to a consumer that no prefetch limits. */
    static final int WINDOW = 1000;
    private static final Object SUBSCRIBED = new Object();
    private static final Object QUEUE_DELETED = new Object();

    private final Amqp091Channel channel;
    private final String tag;
    private final Queue queue;
    private final boolean noAck;
    private final boolean creditPaced;
    private final boolean noWait;
    private final Handoff<Object> fromQueue;
    private QueueConsumer subscription;
    /** Deliveries received, and the total we allowed, for a credit-paced consumer. */
    private long received;
    private long granted;
    /** Its deliveries the client has not settled. */
    private int unacked;
    private boolean cancelled;
    private boolean gone;

    ChannelConsumer(Amqp091Channel channel, String tag, Queue queue, boolean noAck, ConsumerFlow flow,
            boolean noWait) {
        this.channel = channel;
        this.noWait = noWait;
        this.tag = tag;
        this.queue = queue;
        this.noAck = noAck;
        this.creditPaced = flow.kind() == ConsumerFlow.Kind.CREDIT;
        this.fromQueue = new Handoff<>(channel.executor(), this::fromQueue, this::batchEnd);
    }

    /** Subscribes; the answer comes back through {@link #subscribed} or {@link #refused}. */
    void subscribe(ConsumerFlow flow, boolean exclusive, int priority) {
        subscription = queue.subscribe(this, flow, noAck, exclusive, priority);
    }

    /** Subscribes to a stream, from where {@code arguments} say; the answer comes back through {@link #subscribed}. */
    void subscribe(ConsumerFlow flow, StreamConsumerArguments arguments) {
        subscription = ((StreamQueue) queue).subscribe(this, flow, noAck, arguments);
    }

    String tag() {
        return tag;
    }

    @Override
    public Queue queue() {
        return queue;
    }

    boolean noAck() {
        return noAck;
    }

    /** The client asked for no {@code consume-ok}. */
    boolean noWait() {
        return noWait;
    }

    // ---- from the queue's thread ----------------------------------------------------------------------------

    @Override
    public void deliver(QueueDelivery delivery) {
        fromQueue.offer(delivery);
    }

    @Override
    public void creditState(long deliveryCount, long linkCredit, long available, boolean drain) {
        // no echo or drain is ever asked for
    }

    @Override
    public void queueDeleted() {
        fromQueue.offer(QUEUE_DELETED);
    }

    @Override
    public void subscribed() {
        fromQueue.offer(SUBSCRIBED);
    }

    @Override
    public void refused(String reason) {
        fromQueue.offer(new Refusal(reason));
    }

    private record Refusal(String reason) {
    }

    // ---- on the event loop ----------------------------------------------------------------------------------

    private void fromQueue(Object item) {
        if (item instanceof QueueDelivery delivery) {
            received++;
            if (gone || cancelled) {
                // sent before the queue heard of the cancel: back it goes (after an unsubscribe, it went already)
                delivery.message().release();
                if (!noAck && !gone) {
                    queue.settle(subscription, delivery.tag(), delivery.tag(), Outcome.RELEASED);
                }
                return;
            }
            if (!noAck) {
                unacked++;
            }
            channel.deliver(this, delivery);
        } else if (item == SUBSCRIBED) {
            if (gone) {
                return;
            }
            grant();
            channel.consumeAccepted(this);
        } else if (item instanceof Refusal refusal) {
            gone = true;
            channel.consumeRefused(this, refusal.reason);
        } else if (item == QUEUE_DELETED && !gone) {
            if (cancelled) {
                unsubscribe(Outcome.RELEASED); // its unacked deliveries went with the queue
                channel.cancelledConsumerDone(this);
            } else {
                channel.consumerQueueDeleted(this);
            }
        }
    }

    private void batchEnd() {
        grant();
        channel.flushLater();
    }

    /** Tops up a credit-paced consumer's credit, while the socket takes more. */
    void grant() {
        if (creditPaced && !gone && !cancelled && subscription != null && granted - received <= WINDOW / 2
                && channel.writable()) {
            granted = received + WINDOW;
            queue.flow(subscription, received, WINDOW, false, false);
        }
    }

    @Override
    public void settle(long first, long last, Outcome outcome, int count) {
        if (outcome.kind() == Outcome.Kind.ACCEPTED) {
            channel.connection().counters().acknowledged(count);
        }
        unacked -= count;
        queue.settle(subscription, first, last, outcome);
        if (cancelled && unacked == 0 && !gone) {
            unsubscribe(Outcome.RELEASED);
            channel.cancelledConsumerDone(this);
        }
    }

    /**
     * {@code basic.cancel}: no more deliveries. True while some of its deliveries are unacked: the subscription
     * stays for them, and the channel keeps this until they are settled or it closes.
     */
    boolean cancel() {
        if (gone || cancelled) {
            return false;
        }
        cancelled = true;
        if (unacked == 0) {
            unsubscribe(Outcome.RELEASED);
            return false;
        }
        queue.cancel(subscription);
        return true;
    }

    /** {@link Queue#limit}: the channel's first channel-wide limit. */
    CompletableFuture<Void> limit(PrefetchLimit channelLimit) {
        return gone ? CompletableFuture.completedFuture(null) : queue.limit(subscription, channelLimit);
    }

    /** The queue went: the subscription goes, and acks of its deliveries change nothing. */
    void close() {
        unsubscribe(Outcome.RELEASED);
    }

    /**
     * The channel is closing: adds the subscription to those it leaves together, queue by queue, so the queue
     * gets every unacked delivery of the channel back at once, in their original order.
     */
    void leave(ChannelRelease release) {
        if (!gone) {
            gone = true;
            release.add(queue, subscription);
        }
    }

    private void unsubscribe(Outcome unsettled) {
        if (!gone) {
            gone = true;
            queue.unsubscribe(subscription, unsettled);
        }
    }
}
