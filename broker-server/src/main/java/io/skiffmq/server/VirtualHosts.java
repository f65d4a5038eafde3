package io.skiffmq.server;

import io.skiffmq.core.SharedDefinitions;
import io.skiffmq.core.VirtualHost;
import io.skiffmq.core.definitions.DefinitionChange.ExchangeDeclared;
import io.skiffmq.core.definitions.DefinitionChange.VhostChange;
import io.skiffmq.core.queue.QueueExecutor;
import io.skiffmq.core.time.BrokerClock;
import io.skiffmq.server.amqp10.ManagementNode;
import io.skiffmq.server.config.BrokerConfig;
import io.skiffmq.store.DiskStore;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;
import java.util.stream.Stream;

/**
 * The running virtual hosts, each with its own exchanges, queues and bindings and its own {@link DiskStore} in
 * {@code data-dir/vhosts/<name, percent-encoded>/} (definitions, journal, paging): nothing of one is visible from
 * another, and a queue's identity in the journal is its virtual host's directory plus its id there.
 *
 * <p>Thread-safe: lookups read a concurrent map; opening and deleting are serialised on {@code this} (callers: the
 * broker's constructor, and the administration API on a management thread, never an event loop).
 */
final class VirtualHosts {
    private static final System.Logger LOG = System.getLogger(VirtualHosts.class.getName());

    private final BrokerConfig config;
    private final Supplier<QueueExecutor> queueExecutors;
    private final BrokerClock clock;
    private final io.skiffmq.core.metrics.QueueChurn churn;
    private final Map<String, VirtualHost> vhosts = new ConcurrentHashMap<>();
    private final Map<String, DiskStore> stores = new ConcurrentHashMap<>();
    /** In a cluster, where the virtual hosts' shared definitions go; null on a single node. */
    private final SharedDefinitions shared;

    VirtualHosts(BrokerConfig config, Supplier<QueueExecutor> queueExecutors, BrokerClock clock,
            io.skiffmq.core.metrics.QueueChurn churn, SharedDefinitions shared) {
        this.config = config;
        this.churn = churn;
        this.queueExecutors = queueExecutors;
        this.clock = clock;
        this.shared = shared;
    }

    private Path directory(String name) {
        return config.dataDir().resolve("vhosts").resolve(ManagementNode.encode(name));
    }

    /** Opens the virtual host, recovering what its directory holds. */
    synchronized VirtualHost open(String name, long maxQueues) {
        return open(name, maxQueues, List.of());
    }

    /**
     * Opens the virtual host, recovering what its directory holds; in a cluster, with {@code sharedDefinitions}
     * (the cluster's exchanges, queue records and bindings): the exchanges before the recovery, as bindings its
     * directory holds may lead from them, the rest after it, as a queue homed here is the one its store recovers.
     */
    synchronized VirtualHost open(String name, long maxQueues, List<VhostChange> sharedDefinitions) {
        VirtualHost existing = vhosts.get(name);
        if (existing != null) {
            return existing;
        }
        DiskStore store = new DiskStore(directory(name), config.syncPolicy(), config.journalSegmentSize(),
            config.queueMemoryLimit(), config.maxMessageSize());
        VirtualHost vhost = new VirtualHost(name, queueExecutors, store, clock, config.publisherFlow());
        vhost.maxQueues(maxQueues);
        vhost.deadLetterRetryMillis(config.deadLetterRetryMillis());
        if (shared != null) {
            vhost.share(shared);
            sharedDefinitions.stream().filter(ExchangeDeclared.class::isInstance).forEach(vhost::applyShared);
        }
        store.recover(vhost);
        sharedDefinitions.forEach(vhost::applyShared);
        vhost.countChurnIn(churn); // after recovery: queues read back from disk are not declared anew
        stores.put(name, store);
        vhosts.put(name, vhost);
        return vhost;
    }

    /**
     * Opens a new, empty virtual host: a directory left by one of that name whose deletion a crash interrupted
     * (gone from the definitions, not yet from the disk) is deleted first, so nothing of it comes back.
     */
    synchronized VirtualHost create(String name) {
        if (!vhosts.containsKey(name) && Files.exists(directory(name))) {
            deleteDirectory(name);
        }
        return open(name, -1);
    }

    /** Each open virtual host's journal, by virtual host name. */
    Map<String, io.skiffmq.store.Journal> journals() {
        Map<String, io.skiffmq.store.Journal> journals = new java.util.TreeMap<>();
        stores.forEach((name, store) -> journals.put(name, store.messages().journal()));
        return journals;
    }

    VirtualHost get(String name) {
        return vhosts.get(name);
    }

    java.util.Collection<VirtualHost> all() {
        return vhosts.values();
    }

    /**
     * Takes the virtual host away: no new lookup finds it, its queues let go of their messages, its store closes
     * and its directory (definitions, journal, paging) is deleted. Its connections must be closed first.
     */
    synchronized void delete(String name) {
        VirtualHost vhost = vhosts.remove(name);
        if (vhost == null) {
            return;
        }
        closeQueues(List.of(vhost));
        stores.remove(name).close();
        deleteDirectory(name);
        LOG.log(System.Logger.Level.INFO, "virtual host {0} deleted", name);
    }

    private void deleteDirectory(String name) {
        try (Stream<Path> walk = Files.walk(directory(name))) {
            for (Path p : walk.sorted(Comparator.reverseOrder()).toList()) {
                Files.delete(p);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot delete the directory of virtual host " + name, e);
        }
    }

    /** Has every queue of these virtual hosts let go of its messages; waits for them (up to 10 s). */
    static void closeQueues(java.util.Collection<VirtualHost> hosts) {
        List<CompletableFuture<Void>> closed = new ArrayList<>();
        for (VirtualHost vhost : hosts) {
            vhost.queues().forEach(q -> closed.add(q.close()));
        }
        try {
            CompletableFuture.allOf(closed.toArray(CompletableFuture[]::new))
                .get(10, java.util.concurrent.TimeUnit.SECONDS);
        } catch (Exception e) {
            LOG.log(System.Logger.Level.WARNING, "queues did not close in time", e);
        }
    }

    /** Closes every store (after the queues closed). */
    void closeStores() {
        stores.values().forEach(DiskStore::close);
    }
}
