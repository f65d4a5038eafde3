package io.skiffmq.core;

import io.skiffmq.core.queue.ClassicQueue;
import io.skiffmq.core.queue.Queue;
import io.skiffmq.core.queue.QueueExecutor;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;

/**
 * A virtual host: its queues and exchanges. The default exchange ({@code ""}) and {@code amq.direct},
 * {@code amq.fanout}, {@code amq.topic} and {@code amq.headers} exist from the start.
 *
 * <p>Thread-safe: queues and exchanges are held in concurrent maps; each queue is owned by the executor it was
 * given when declared.
 */
public final class VirtualHost {
    private final String name;
    private final Supplier<QueueExecutor> executors;
    private final Map<String, Queue> queues = new ConcurrentHashMap<>();
    private final Map<String, Exchange> exchanges = new ConcurrentHashMap<>();

    /** @param executors hands out the executor each new queue will live on (e.g. event loops in turn) */
    public VirtualHost(String name, Supplier<QueueExecutor> executors) {
        this.name = name;
        this.executors = executors;
        for (Exchange e : List.of(new Exchange("", Exchange.Type.DIRECT),
                new Exchange("amq.direct", Exchange.Type.DIRECT), new Exchange("amq.fanout", Exchange.Type.FANOUT),
                new Exchange("amq.topic", Exchange.Type.TOPIC), new Exchange("amq.headers", Exchange.Type.HEADERS))) {
            exchanges.put(e.name(), e);
        }
    }

    public String name() {
        return name;
    }

    /** The queue, or null. */
    public Queue queue(String queueName) {
        return queues.get(queueName);
    }

    /** The queue, declared (as an in-memory classic queue) when it does not exist. */
    public Queue declareQueue(String queueName) {
        return queues.computeIfAbsent(queueName, n -> new ClassicQueue(n, executors.get()));
    }

    /** Deletes the queue; false when there was none. Messages in it are dropped. */
    public boolean deleteQueue(String queueName) {
        Queue queue = queues.remove(queueName);
        if (queue != null) {
            queue.delete();
        }
        return queue != null;
    }

    /** The exchange, or null. */
    public Exchange exchange(String exchangeName) {
        return exchanges.get(exchangeName);
    }

    /**
     * The queues a message published to {@code exchange} with {@code routingKey} goes to: for the default
     * exchange, the queue of that name if it exists. Other exchanges route through bindings, which this build
     * does not have yet, so they route nowhere.
     */
    public List<Queue> route(Exchange exchange, String routingKey) {
        if (exchange.isDefault()) {
            Queue queue = routingKey == null ? null : queues.get(routingKey);
            return queue == null ? List.of() : List.of(queue);
        }
        return List.of();
    }
}
