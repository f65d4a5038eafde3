package io.skiffmq.core.queue;

import io.skiffmq.core.message.Message;
import java.util.ArrayList;
import java.util.List;

/** A message in a queue (or only its index), with what the queue knows of its deliveries. Owned by the queue's thread. */
final class QueueEntry {
    final long sequence;
    /** Null while the message is paged out: only its {@link #location} in the log is kept. */
    Message message;
    /** In the queue's ready or returned messages (not delivered and unsettled). */
    boolean queued;
    long deliveryCount;
    boolean acquiredBefore;
    /** Where the queue's {@link QueueLog} holds the message; -1 when it is not logged (transient). */
    long location = -1;
    /** Consumers that settled it {@code undeliverable-here}; null until one does. */
    List<QueueConsumer> excluded;

    QueueEntry(long sequence, Message message) {
        this.sequence = sequence;
        this.message = message;
    }

    boolean excludes(QueueConsumer consumer) {
        return excluded != null && excluded.contains(consumer);
    }

    void exclude(QueueConsumer consumer) {
        if (excluded == null) {
            excluded = new ArrayList<>(1);
        }
        excluded.add(consumer);
    }
}
