package io.skiffmq.core.queue;

import io.skiffmq.core.message.Message;
import java.util.ArrayList;
import java.util.List;

/** A message in a queue, with what the queue knows of its deliveries. Owned by the queue's thread. */
final class QueueEntry {
    final long sequence;
    final Message message;
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
