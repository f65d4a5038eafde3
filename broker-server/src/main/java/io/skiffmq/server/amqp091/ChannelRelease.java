package io.skiffmq.server.amqp091;

import io.skiffmq.core.queue.Outcome;
import io.skiffmq.core.queue.Queue;
import io.skiffmq.core.queue.QueueConsumer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * A closing channel's subscriptions (consumers, cancelled consumers that still hold deliveries, gets), gathered by
 * queue, so each queue takes back every unacked delivery of the channel in one go ({@link Queue#unsubscribe(List,
 * Outcome)}): the requeued messages keep their original order and none goes out again before the others are back,
 * as RabbitMQ's queue requeues all of a closed channel's at once. Made and used once, on the connection's event loop.
 */
final class ChannelRelease {
    private final Map<Queue, List<QueueConsumer>> byQueue = new HashMap<>();

    void add(Queue queue, QueueConsumer subscription) {
        byQueue.computeIfAbsent(queue, q -> new ArrayList<>(2)).add(subscription);
    }

    /** Unsubscribes them all; their unsettled deliveries go back to their queues. */
    void run() {
        byQueue.forEach((queue, subscriptions) -> queue.unsubscribe(subscriptions, Outcome.RELEASED));
    }
}
