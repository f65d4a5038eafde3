package io.skiffmq.server.amqp10;

import io.skiffmq.core.queue.Outcome;
import io.skiffmq.core.queue.Queue;
import io.skiffmq.core.queue.QueueConsumer;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The consumer links a session's end (or its connection's close) lets go of, gathered by queue and by the outcome
 * their unsettled deliveries get, so each queue takes back every one of them in one go
 * ({@link Queue#unsubscribe(List, Outcome)}): the messages keep their original order whichever link of the session
 * held them, and none goes out again before the others are back, as RabbitMQ's queue requeues all of a session's
 * unacked messages at once when the session goes. What the links do once unsubscribed (a dynamic queue deleted)
 * runs after all of them are. Made and used once, on the connection's event loop.
 */
final class LinkRelease {
    private record Group(Queue queue, Outcome outcome) {
    }

    private final Map<Group, List<QueueConsumer>> groups = new LinkedHashMap<>();
    private final List<Runnable> afterwards = new ArrayList<>();

    /** The consumer leaves {@code queue}; its unsettled deliveries go back with {@code unsettled}. */
    void add(Queue queue, QueueConsumer consumer, Outcome unsettled) {
        groups.computeIfAbsent(new Group(queue, unsettled), g -> new ArrayList<>(2)).add(consumer);
    }

    /** Runs once every consumer has left its queue. */
    void afterwards(Runnable task) {
        afterwards.add(task);
    }

    /** Unsubscribes them all, queue by queue, then runs what waited for that. */
    void run() {
        groups.forEach((group, consumers) -> group.queue().unsubscribe(consumers, group.outcome()));
        afterwards.forEach(Runnable::run);
    }
}
