package io.skiffmq.core.queue;

import java.util.ArrayList;
import java.util.List;

/** A consumer's sink that keeps what the queue told it, in order, on the queue's thread (tests run it inline). */
final class RecordingSink implements ConsumerSink {
    final List<QueueDelivery> deliveries = new ArrayList<>();
    final List<long[]> creditStates = new ArrayList<>();
    boolean queueDeleted;
    /** The consumer this sink belongs to, for tests that keep both together. */
    QueueConsumer consumer;

    @Override
    public void deliver(QueueDelivery delivery) {
        deliveries.add(delivery);
    }

    @Override
    public void creditState(long deliveryCount, long linkCredit, long available, boolean drain) {
        creditStates.add(new long[] {deliveryCount, linkCredit, available, drain ? 1 : 0});
    }

    @Override
    public void queueDeleted() {
        queueDeleted = true;
    }

    /** Releases every delivered message's reference and forgets them. */
    void releaseAll() {
        deliveries.forEach(d -> d.message().release());
        deliveries.clear();
    }
}
