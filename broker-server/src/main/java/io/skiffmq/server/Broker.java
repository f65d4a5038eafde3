package io.skiffmq.server;

import io.netty.channel.EventLoop;
import io.skiffmq.core.VirtualHost;
import io.skiffmq.core.alarm.JvmReadings;
import io.skiffmq.core.alarm.ResourceAlarms;
import io.skiffmq.core.alarm.ResourceMonitor;
import io.skiffmq.core.queue.QueueExecutor;
import io.skiffmq.server.auth.UserStore;
import io.skiffmq.server.authz.Access;
import io.skiffmq.server.authz.AccessControl;
import io.skiffmq.server.config.BrokerConfig;
import io.skiffmq.server.connection.ClientConnection;
import io.skiffmq.server.connection.ConnectionEnding;
import io.skiffmq.server.connection.ConnectionEnds;
import io.skiffmq.server.connection.PreAuthLimit;
import io.skiffmq.server.connection.ScopeErrors;
import io.skiffmq.server.loop.EventLoops;
import io.skiffmq.core.definitions.BrokerDefinitions;
import io.skiffmq.store.definitions.BrokerDefinitionsStore;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;

/**
 * What all connections share: configuration, users, virtual hosts ({@link VirtualHosts}), who may do what
 * ({@link AccessControl}, on the durable {@link BrokerDefinitions} in {@code data-dir/definitions.snapshot} and
 * {@code .log}, a {@link BrokerDefinitionsStore}, or in a cluster on its metadata log (docs/cluster.md); on the
 * first start: the virtual host {@code /}, {@code guest} and the users file's users with all permissions there),
 * and the registry of open connections (for shutdown, and to close those of a deleted virtual host or user).
 * Queues live on the worker event loops, each on its first user's ({@link EventLoops}). Each virtual host keeps its
 * durable state in {@code data-dir/vhosts/<name, percent-encoded>/}, recovered in the constructor,
 * before any listener can open; the data directory is locked against a second broker. Thread-safe.
 *
 * <p>Resource alarms: {@link #alarms()} are raised and cleared by a {@link ResourceMonitor} (memory against
 * {@code memory-high-watermark}, the data directory's disk against {@code disk-free-limit}), which runs once
 * {@link #startResourceMonitor} is called. Each change is passed to every registered connection
 * ({@link ClientConnection#resourceAlarmsChanged}), on the monitor's thread; each applies it on its event loop.
 */
public final class Broker implements AutoCloseable {
    private final BrokerConfig config;
    private final PreAuthLimit preAuth;
    private final UserStore users;
    private final VirtualHosts vhosts;
    private final AccessControl access;
    private final BrokerDefinitionsStore definitionsStore;
    private final Admin admin;
    private final Set<ClientConnection> connections = ConcurrentHashMap.newKeySet();
    /** What waits for a connection to unregister ({@link #whenUnregistered}). */
    private final Map<ClientConnection, CompletableFuture<Void>> unregistered = new ConcurrentHashMap<>();
    /** Guarded by {@link #connections}. */
    private boolean stopping;
    /** Between rabbitmqctl's stop_app and start_app ({@link #suspendAccepting}); guarded by {@link #connections}. */
    private boolean suspended;
    /** Set once by {@link #beginStopping}, read by the HTTP API's health checks and node view from any thread. */
    private volatile boolean nodeStopping;
    private final FileChannel lockFile;
    private final ResourceAlarms alarms = new ResourceAlarms();
    private final ResourceMonitor resourceMonitor;
    private final EventLoops loops;
    private final io.skiffmq.core.metrics.BrokerCounters counters = new io.skiffmq.core.metrics.BrokerCounters();
    private final ConnectionEnds ends = new ConnectionEnds();
    private final io.skiffmq.core.metrics.QueueChurn queueChurn = new io.skiffmq.core.metrics.QueueChurn();
    private final io.skiffmq.server.stream.StreamErrors streamErrors = new io.skiffmq.server.stream.StreamErrors();
    /** Connections ever registered (accepted by a protocol handler): RabbitMQ's {@code connections_opened_total}. */
    private final java.util.concurrent.atomic.LongAdder connectionsOpened = new java.util.concurrent.atomic.LongAdder();
    private final ScopeErrors scopeErrors = new ScopeErrors();
    /** This node's cluster membership, or null for a single node (no {@code cluster-port}). */
    private final io.skiffmq.server.cluster.ClusterMembership cluster;
    /**
     * Runs management operations, which may wait for the disk or for a cluster's majority, off the event loops. Up to
     * {@code management-threads}, started as needed: without a majority each change waits out the append timeout on
     * its thread, and a pool of two would leave health checks and reads queued behind two of them.
     */
    private final java.util.concurrent.ThreadPoolExecutor managementExecutor;

    /**
     * @param queueExecutors hands out the executor each new queue lives on
     * @throws IllegalStateException when another broker holds the data directory
     */
    public Broker(BrokerConfig config, UserStore users, Supplier<QueueExecutor> queueExecutors) throws IOException {
        this(config, users, queueExecutors, io.skiffmq.core.time.BrokerClock.SYSTEM);
    }

    /** @param clock what message TTLs and queue expiry run on (tests move a {@code ManualClock} by hand) */
    public Broker(BrokerConfig config, UserStore users, Supplier<QueueExecutor> queueExecutors,
            io.skiffmq.core.time.BrokerClock clock) throws IOException {
        this(config, users, new EventLoops(null), queueExecutors, clock);
    }

    /** A broker whose queues run on {@code loops}, each on the loop of its first user ({@link EventLoops}). */
    public Broker(BrokerConfig config, UserStore users, EventLoops loops, io.skiffmq.core.time.BrokerClock clock)
            throws IOException {
        this(config, users, loops, loops::placeQueue, clock);
    }

    private Broker(BrokerConfig config, UserStore users, EventLoops loops, Supplier<QueueExecutor> queueExecutors,
            io.skiffmq.core.time.BrokerClock clock) throws IOException {
        this.loops = loops;
        this.config = config;
        int threads = config.management().threads();
        this.managementExecutor = new java.util.concurrent.ThreadPoolExecutor(threads, threads, 60,
            java.util.concurrent.TimeUnit.SECONDS, new java.util.concurrent.LinkedBlockingQueue<>(), runnable -> {
                Thread thread = new Thread(runnable, "skiffmq-management");
                thread.setDaemon(true);
                return thread;
            });
        managementExecutor.allowCoreThreadTimeOut(true);
        this.preAuth = new PreAuthLimit(config.auth().maxPreauthConnections());
        this.users = users;
        DataDirectory.prepare(config.dataDir());
        this.lockFile = FileChannel.open(config.dataDir().resolve(".lock"), StandardOpenOption.CREATE,
            StandardOpenOption.WRITE);
        if (lockFile.tryLock() == null) {
            lockFile.close();
            throw new IllegalStateException("data directory " + config.dataDir().toAbsolutePath()
                + " is in use by another broker");
        }
        this.cluster = io.skiffmq.server.cluster.ClusterMembership.start(config);
        this.vhosts = new VirtualHosts(config, queueExecutors, clock, queueChurn,
            cluster == null ? null : cluster.definitions());
        String unrestricted = config.allowPlainAmqp() ? io.skiffmq.server.auth.SaslAuthenticator.ANONYMOUS_USER : null;
        if (cluster == null) {
            this.definitionsStore = BrokerDefinitionsStore.open(config.dataDir(), config.definitionsCompaction(),
                () -> Admin.firstStart(users, config.auth().defaultUser().name()));
            BrokerDefinitions definitions = definitionsStore.recovered();
            Admin.loadUsers(users, definitions);
            if (!definitionsStore.firstStart()) {
                Admin.noteDefaultUserNotApplied(users, config.auth().defaultUser());
            }
            this.access = new AccessControl(definitionsStore::append, definitions, unrestricted);
            for (BrokerDefinitions.VhostDefinition vhost : definitions.vhosts()) {
                vhosts.open(vhost.name(), vhost.maxQueues())
                    .defaultQueueType(io.skiffmq.core.queue.QueueType.ofAlias(vhost.defaultQueueType()));
            }
            this.admin = new Admin(this, vhosts, access, users, false);
        } else {
            this.definitionsStore = null;
            this.access = new AccessControl(cluster.definitions(), BrokerDefinitions.EMPTY, unrestricted);
            this.admin = new Admin(this, vhosts, access, users, true);
            offerOwnDefinitions(config, users, cluster);
            Admin target = admin;
            cluster.definitions().attach(new io.skiffmq.server.cluster.ReplicatedDefinitions.Target() {
                @Override
                public void applied(io.skiffmq.core.definitions.DefinitionChange.BrokerChange change) {
                    access.applied(change);
                    target.applied(change);
                }

                @Override
                public void replaceAll(BrokerDefinitions definitions,
                        Map<String, List<io.skiffmq.core.definitions.DefinitionChange.VhostChange>> shared) {
                    target.replaceAll(definitions, shared);
                }
            });
            cluster.queues().vhosts(vhosts::get);
        }
        alarms.onChange(active -> connections.forEach(connection -> {
            try {
                connection.resourceAlarmsChanged();
            } catch (java.util.concurrent.RejectedExecutionException e) {
                // its event loop has stopped: the connection is gone with it
            }
        }));
        resourceMonitor = new ResourceMonitor(alarms, new JvmReadings(config.dataDir()),
            config.memoryHighWatermark().limit(JvmReadings.memoryCeiling()), config.diskFreeLimit(), config.node(),
            config.dataDir().toAbsolutePath().toString(), System::nanoTime);
    }

    /**
     * In a cluster, the metadata log is the one durable record of the broker's definitions: a single node's
     * definitions files, when this data directory has them, are appended to it whole (nothing is lost) and then
     * moved into {@code definitions-migrated/}; otherwise the node offers its first-start definitions, which the
     * log applies only to a cluster that has none (at every start: a first one may have ended before a majority).
     */
    private static void offerOwnDefinitions(BrokerConfig config, UserStore users,
            io.skiffmq.server.cluster.ClusterMembership cluster) {
        Path dataDir = config.dataDir();
        if (BrokerDefinitionsStore.exists(dataDir)) {
            List<io.skiffmq.core.definitions.DefinitionChange.BrokerChange> changes;
            try (BrokerDefinitionsStore single = BrokerDefinitionsStore.open(dataDir, config.definitionsCompaction(),
                    () -> BrokerDefinitions.EMPTY)) {
                changes = single.recovered().changes();
            }
            cluster.offer(changes, false, () -> BrokerDefinitionsStore.retire(dataDir));
        } else {
            cluster.offer(Admin.firstStart(users, config.auth().defaultUser().name()).changes(), true, () -> { });
        }
    }

    /** Starts raising and clearing the resource alarms from the JVM's readings (the listener does, once bound). */
    public void startResourceMonitor() {
        resourceMonitor.start();
    }

    /** The memory and disk alarms: while any is up, publishers are held back. */
    public ResourceAlarms alarms() {
        return alarms;
    }

    /** What raises and clears the alarms; tests replace its readings ({@link ResourceMonitor#readings}). */
    public ResourceMonitor resourceMonitor() {
        return resourceMonitor;
    }

    /** Has every queue let go of its messages (see {@link io.skiffmq.core.queue.Queue#close}); waits for them. */
    public void closeQueues() {
        VirtualHosts.closeQueues(vhosts.all());
    }

    /** Closes the stores (after {@link #closeQueues}: nothing writes to them any more) and releases the data directory. */
    @Override
    public void close() throws IOException {
        resourceMonitor.close();
        managementExecutor.shutdown();
        vhosts.closeStores();
        if (definitionsStore != null) {
            definitionsStore.close();
        }
        if (cluster != null) {
            cluster.close();
        }
        lockFile.close();
    }

    /** This node's cluster membership, or null for a single node. */
    public io.skiffmq.server.cluster.ClusterMembership cluster() {
        return cluster;
    }

    /** The cluster's name: the node's own name on a single node, as RabbitMQ's default. */
    public String clusterName() {
        return cluster != null ? cluster.clusterName() : config.node();
    }

    /** Where work that may wait for the disk runs (management operations): never an event loop. */
    public java.util.concurrent.Executor managementExecutor() {
        return managementExecutor;
    }

    /** The connections not yet open ({@code max-preauth-connections}). */
    public PreAuthLimit preAuth() {
        return preAuth;
    }

    public BrokerConfig config() {
        return config;
    }

    public UserStore users() {
        return users;
    }

    /** The open virtual hosts. */
    public java.util.Collection<VirtualHost> virtualHosts() {
        return vhosts.all();
    }

    /** Each open virtual host's journal, by virtual host name (for metrics). */
    public Map<String, io.skiffmq.store.Journal> journals() {
        return vhosts.journals();
    }

    /** The virtual host, or null. */
    public VirtualHost vhost(String name) {
        return vhosts.get(name);
    }

    /** Who may do what, and the limits: checked by every protocol. */
    public AccessControl accessControl() {
        return access;
    }

    /**
     * Administration without restart: virtual hosts, users, permissions and limits (for the HTTP API; RabbitMQ 4's
     * {@code /management} AMQP node has no operation for them).
     */
    public Admin admin() {
        return admin;
    }

    /** The totals by protocol of what every connection, open or closed, counted. */
    public io.skiffmq.core.metrics.BrokerCounters counters() {
        return counters;
    }

    /** The stream protocol's error answers, by code. */
    public io.skiffmq.server.stream.StreamErrors streamErrors() {
        return streamErrors;
    }

    /** Queues declared, created and deleted on this node. */
    public io.skiffmq.core.metrics.QueueChurn queueChurn() {
        return queueChurn;
    }

    /** Connections registered since the broker started (those refused as it stops are not). */
    public long connectionsOpened() {
        return connectionsOpened.sum();
    }

    /** How connections ended, counted and logged ({@link ConnectionEnding}). */
    public ConnectionEnds ends() {
        return ends;
    }

    /** Session, link and channel errors, logged and limited. */
    public ScopeErrors scopeErrors() {
        return scopeErrors;
    }

    /** How many connections are open (registered, not yet unregistered). */
    public int connectionCount() {
        return connections.size();
    }

    /** The open connections (registered, not yet unregistered). */
    public List<ClientConnection> connections() {
        return List.copyOf(connections);
    }

    /**
     * The node is stopping (the first step of a graceful shutdown, before its listeners close): the HTTP API, which
     * stays up longest, answers its health checks with 503 "node is stopping" and shows the node as not running.
     * Never undone.
     */
    public void beginStopping() {
        nodeStopping = true;
    }

    /** True once {@link #beginStopping} was called. Any thread. */
    public boolean isStopping() {
        return nodeStopping;
    }

    /**
     * False once the broker is stopping ({@link #stopAccepting}) or while its application is stopped
     * ({@link #suspendAccepting}): the connection must close at once.
     */
    public boolean register(ClientConnection connection) {
        synchronized (connections) {
            if (stopping || suspended) {
                return false;
            }
            connections.add(connection);
            connectionsOpened.increment();
            counters.opened(connection.counters());
            return true;
        }
    }

    /**
     * No connection registers from now on; returns those that did, for the caller to close. Together with
     * {@link #register} this leaves no connection that is missed by the shutdown yet still publishes.
     */
    public List<ClientConnection> stopAccepting() {
        synchronized (connections) {
            stopping = true;
            return List.copyOf(connections);
        }
    }

    /**
     * As {@link #stopAccepting}, until {@link #resumeAccepting}: rabbitmqctl's stop_app, which closes the client
     * listeners and connections and keeps the node (its queues, definitions and HTTP API).
     */
    public List<ClientConnection> suspendAccepting() {
        synchronized (connections) {
            suspended = true;
            return List.copyOf(connections);
        }
    }

    /** Connections register again (rabbitmqctl's start_app). */
    public void resumeAccepting() {
        synchronized (connections) {
            suspended = false;
        }
    }

    public void unregister(ClientConnection connection) {
        Access opened = connection.opened();
        counters.closed(connection.counters(), opened == null ? null : opened.vhost());
        connections.remove(connection);
        CompletableFuture<Void> waiting = unregistered.remove(connection);
        if (waiting != null) {
            waiting.complete(null);
        }
    }

    /**
     * Completes once {@code connection} has unregistered (its channels, sessions, consumers and exclusive queues
     * released), at once when it is not registered.
     */
    CompletableFuture<Void> whenUnregistered(ClientConnection connection) {
        CompletableFuture<Void> waiting = unregistered.computeIfAbsent(connection, c -> new CompletableFuture<>());
        if (!connections.contains(connection)) {
            unregistered.remove(connection);
            waiting.complete(null);
        }
        return waiting;
    }


    /** How the core hands work to {@code loop} (a connection's): its mailbox, shared by all that run there. */
    public QueueExecutor loopExecutor(EventLoop loop) {
        return loops.mailbox(loop);
    }
}
