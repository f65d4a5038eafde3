package io.skiffmq.server;

import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.skiffmq.core.VirtualHost;
import io.skiffmq.core.queue.QueueExecutor;
import java.util.Iterator;
import java.util.Map;
import java.util.Set;
import java.util.function.Supplier;
import io.netty.util.concurrent.EventExecutor;
import java.util.concurrent.ConcurrentHashMap;

/**
 * What all connections share: configuration, users, virtual hosts, and the registry of open connections (for
 * shutdown). Queues live on the worker event loops, handed out in turn when declared. Thread-safe.
 */
final class Broker {
    private final BrokerConfig config;
    private final UserStore users;
    private final Map<String, VirtualHost> vhosts = new ConcurrentHashMap<>();
    private final Set<Amqp10ConnectionHandler> connections = ConcurrentHashMap.newKeySet();
    /**
     * @param queueExecutors hands out the executor each new queue lives on (see {@link #rotating})
     */
    Broker(BrokerConfig config, UserStore users, Supplier<QueueExecutor> queueExecutors) {
        this.config = config;
        this.users = users;
        vhosts.put("/", new VirtualHost("/", queueExecutors));
    }

    /** The event loops of {@code group}, in turn. */
    static Supplier<QueueExecutor> rotating(EventLoopGroup group) {
        return new Supplier<>() {
            private Iterator<EventExecutor> next = group.iterator();

            @Override
            public synchronized QueueExecutor get() {
                if (!next.hasNext()) {
                    next = group.iterator();
                }
                return executorOf((EventLoop) next.next());
            }
        };
    }

    BrokerConfig config() {
        return config;
    }

    UserStore users() {
        return users;
    }

    /** The virtual host, or null. */
    VirtualHost vhost(String name) {
        return vhosts.get(name);
    }

    void register(Amqp10ConnectionHandler connection) {
        connections.add(connection);
    }

    void unregister(Amqp10ConnectionHandler connection) {
        connections.remove(connection);
    }

    Set<Amqp10ConnectionHandler> connections() {
        return connections;
    }

    static QueueExecutor executorOf(EventLoop loop) {
        return new QueueExecutor() {
            @Override
            public boolean inExecutor() {
                return loop.inEventLoop();
            }

            @Override
            public void execute(Runnable task) {
                loop.execute(task);
            }
        };
    }
}
