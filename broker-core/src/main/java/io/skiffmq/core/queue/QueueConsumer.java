package io.skiffmq.core.queue;

import java.util.HashMap;
import java.util.Map;

/**
 * A queue's record of one consumer: its credit and its unsettled deliveries. Owned by the queue's thread; other
 * threads hold it only as a handle to pass back to the queue.
 */
public final class QueueConsumer {
    final ConsumerSink sink;
    final boolean preSettled;
    /** [2.6.7] the sender's delivery-count, a 32-bit serial number. Starts at 0 (our initial-delivery-count). */
    long deliveryCount;
    long credit;
    boolean drain;
    boolean removed;
    final Map<Long, QueueEntry> unsettled = new HashMap<>();

    QueueConsumer(ConsumerSink sink, boolean preSettled) {
        this.sink = sink;
        this.preSettled = preSettled;
    }
}
