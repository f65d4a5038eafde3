package io.skiffmq.server;

import io.netty.util.concurrent.DefaultEventExecutor;
import io.skiffmq.core.queue.QueueDeclaration;
import io.skiffmq.core.queue.QueueExecutor;
import io.skiffmq.server.auth.SaslAuthenticator;
import io.skiffmq.server.auth.UserStore;
import io.skiffmq.server.config.BrokerConfig;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * A broker for the delivery-path benchmarks: no listener, a data directory of its own, the user guest (from any
 * address: an embedded channel's peer is no loopback one), the transient queue {@code q}, and its queues on the
 * caller's thread. Everything runs on {@link #run}'s one Netty thread: Netty 4.2 pools its objects (outbound entries,
 * sliced buffers, recycled objects) only on threads that clean up fast thread-locals, as the broker's event loops do,
 * and the JMH thread does not. The hop costs two wake-ups per call in ns/op and a promise per call in B/op.
 */
public final class InProcessBroker {
    private final DefaultEventExecutor loop = new DefaultEventExecutor();
    private Path dataDir;
    private BrokerConfig config;
    private Broker broker;
    private SaslAuthenticator sasl;

    /** Runs {@code work} on the broker's thread and waits for it. */
    public <T> T run(Callable<T> work) throws Exception {
        return loop.submit(work).get();
    }

    /** On the broker's thread: starts the broker; returns it. */
    public Broker start(String name) throws Exception {
        dataDir = Files.createTempDirectory(name);
        config = BrokerConfig.defaults().with("data-dir", dataDir.toString());
        UserStore users = UserStore.withGuest();
        users.restrictToLoopback(List.of());
        broker = new Broker(config, users, () -> QueueExecutor.CALLER_THREAD);
        broker.vhost("/").declareQueue(QueueDeclaration.of("q", false, Map.of()), null);
        sasl = SaslAuthenticator.inline(users, null); // logins on this thread too
        return broker;
    }

    public BrokerConfig config() {
        return config;
    }

    public SaslAuthenticator sasl() {
        return sasl;
    }

    /**
     * On the broker's thread: runs {@code closeClients}, stops the broker and deletes its data.
     *
     * @throws IllegalStateException when messages were left in {@code q}: deliveries went missing
     */
    public void stop(Runnable closeClients) throws Exception {
        int left = broker.vhost("/").queue("q").readyCount();
        closeClients.run();
        broker.closeQueues();
        broker.close();
        try (Stream<Path> files = Files.walk(dataDir)) {
            files.sorted(Comparator.reverseOrder()).forEach(path -> path.toFile().delete());
        }
        if (left != 0) {
            throw new IllegalStateException(left + " messages left in the queue: deliveries went missing");
        }
    }

    /** Stops the broker's thread, after {@link #stop}. */
    public void shutdown() {
        loop.shutdownGracefully(0, 1, TimeUnit.SECONDS);
    }
}
