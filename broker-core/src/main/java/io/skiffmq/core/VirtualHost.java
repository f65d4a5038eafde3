package io.skiffmq.core;

import io.skiffmq.core.BrokerException.Kind;
import io.skiffmq.core.definitions.DefinitionChange.BindingAdded;
import io.skiffmq.core.definitions.DefinitionChange.BindingRemoved;
import io.skiffmq.core.definitions.DefinitionChange.ExchangeDeclared;
import io.skiffmq.core.definitions.DefinitionChange.ExchangeDeleted;
import io.skiffmq.core.definitions.DefinitionChange.PolicyCleared;
import io.skiffmq.core.definitions.DefinitionChange.PolicySet;
import io.skiffmq.core.definitions.DefinitionChange.QueueDeleted;
import io.skiffmq.core.definitions.DefinitionChange.QueueHomed;
import io.skiffmq.core.definitions.DefinitionChange.VhostChange;
import io.skiffmq.core.message.Headers;
import io.skiffmq.core.policy.EffectivePolicy;
import io.skiffmq.core.policy.Policies;
import io.skiffmq.core.policy.Policy;
import io.skiffmq.core.queue.Queue;
import io.skiffmq.core.queue.QueueType;
import io.skiffmq.core.queue.QueueContext;
import io.skiffmq.core.time.BrokerClock;
import io.skiffmq.core.queue.QueueDeclaration;
import io.skiffmq.core.queue.QueueExecutor;
import io.skiffmq.core.routing.AutoDeleteCascade;
import io.skiffmq.core.routing.Binding;
import io.skiffmq.core.routing.BindingTable;
import io.skiffmq.core.routing.Destination;
import io.skiffmq.core.routing.HeadersBindingCheck;
import io.skiffmq.core.routing.Router;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Set;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Predicate;
import java.util.function.Supplier;

/**
 * A virtual host: queues, exchanges and the bindings between them. The default exchange ({@code ""}) and
 * {@code amq.direct}, {@code amq.fanout}, {@code amq.topic}, {@code amq.headers} and {@code amq.match} exist from
 * the start and cannot
 * be deleted or redeclared differently; names starting {@code amq.} are reserved.
 *
 * <p>Durable exchanges and queues, and bindings between durable ends, are kept by the {@link VirtualHostStore}:
 * every change to them is handed to it under the write lock as one small record (a queue declared, a binding
 * removed: {@link io.skiffmq.core.definitions.DefinitionChange}), which it appends to its log on a thread of its
 * own; nothing here is proportional to the number of definitions. A change is durable when the call returns (or, for {@link #declareQueueAsync}, when its future
 * completes); the caller waits outside the lock, so the disk never holds up other changes' lookups.
 *
 * <p>In a cluster ({@link #share}) durable exchanges and queues, and the bindings between them, are the cluster's
 * shared definitions instead: a change is checked here under the write lock, appended to {@link SharedDefinitions},
 * and made on every node by {@link #applyShared} once committed. What is shared, and how a committed change is
 * applied, is {@link SharedRecords}' job. A durable queue lives on its home node (the one
 * where it was declared); the others hold its record ({@link #remoteQueue}) and cannot use it yet.
 *
 * <p>An exclusive queue belongs to the connection that declared it (its {@code owner}, any object standing for it):
 * other connections may route to it but not declare, consume from or delete it ({@link Kind#RESOURCE_LOCKED}), and
 * it goes when {@link #ownerClosed} says its connection went. An auto-delete queue goes when its last consumer
 * leaves. Deleting a queue or exchange, however it happens, runs what was {@link #whenDeleted watching} it.
 *
 * <p>Its policies and operator policies ({@link #setPolicy}) are durable definitions too; a change to them is
 * evaluated against every queue and exchange once, under the write lock, and each takes what applies to it from
 * then on, without a redeclaration (docs/policies.md).
 *
 * <p>Thread-safe. Queues and exchanges are in concurrent maps. The bindings are an immutable {@link BindingTable}
 * behind one volatile reference: changes (serialised on {@link #writeLock}) build a new snapshot and swap it in,
 * and routing reads whichever snapshot is current without locking.
 */
public final class VirtualHost {
    private final String name;
    private final Supplier<QueueExecutor> executors;
    final VirtualHostStore store;
    private volatile long maxQueues = -1;
    /** RabbitMQ's {@code default_queue_type}: the type of a queue declared without {@code x-queue-type}; null: none. */
    private volatile QueueType defaultQueueType;
    private final Map<String, Queue> queues = new ConcurrentHashMap<>();
    private final Map<String, Exchange> exchanges = new ConcurrentHashMap<>();
    /** Serialises every change of queues, exchanges, bindings and policies. */
    final Object writeLock = new Object();
    private volatile BindingTable bindings = BindingTable.EMPTY;
    private final java.util.function.Function<String, Exchange> exchangeLookup = exchanges::get;
    /** The owner of each exclusive queue, by queue name. */
    private final Map<String, Object> exclusiveOwners = new ConcurrentHashMap<>();
    /** The exclusive queues of each owner, so a connection's close finds its own without a scan. Under the lock. */
    private final Map<Object, Set<String>> exclusiveByOwner = new HashMap<>();
    private final DeletionWatchers deletions = new DeletionWatchers();
    private final Map<String, PendingDeclare> pendingDeclares = new HashMap<>();
    /** Its policies and operator policies; replaced under {@link #writeLock}. */
    private volatile Policies policies = Policies.NONE;
    /** Where declarations and deletions are counted; its own until {@link #countChurnIn} (after recovery). */
    private volatile io.skiffmq.core.metrics.QueueChurn churn = new io.skiffmq.core.metrics.QueueChurn();
    /** What every queue of this virtual host is made with: its clock, and where its dead messages go. */
    private final QueueContext queueContext;
    /** Its part of the cluster's shared definitions ({@link #share}); empty on a single node. */
    private final SharedRecords shared = new SharedRecords(this);
    /**
     * Whether a queue is this node's own, for {@code x-local-random}: null on a single node, where all are. Set by
     * {@link #share} before recovery, so before any message is routed.
     */
    private Predicate<String> localQueues;

    /** A virtual host that keeps nothing across restarts. */
    public VirtualHost(String name, Supplier<QueueExecutor> executors) {
        this(name, executors, VirtualHostStore.TRANSIENT);
    }

    /** A virtual host on the system clock. */
    public VirtualHost(String name, Supplier<QueueExecutor> executors, VirtualHostStore store) {
        this(name, executors, store, BrokerClock.SYSTEM, true);
    }

    /**
     * @param executors hands out the executor each new queue will live on (e.g. event loops in turn)
     * @param clock what message TTLs and queue expiry are measured with
     * @param publisherFlow its queues may hold their publishers back ({@link io.skiffmq.core.queue.PublisherFlow})
     */
    public VirtualHost(String name, Supplier<QueueExecutor> executors, VirtualHostStore store, BrokerClock clock,
            boolean publisherFlow) {
        this.name = name;
        this.executors = executors;
        this.store = store;
        this.queueContext = new QueueContext(name, clock, new DeadLetterRouter(this, clock), publisherFlow);
        for (Exchange e : List.of(new Exchange("", Exchange.Type.DIRECT),
                new Exchange("amq.direct", Exchange.Type.DIRECT), new Exchange("amq.fanout", Exchange.Type.FANOUT),
                new Exchange("amq.topic", Exchange.Type.TOPIC), new Exchange("amq.headers", Exchange.Type.HEADERS),
                new Exchange("amq.match", Exchange.Type.HEADERS))) {
            exchanges.put(e.name(), e);
        }
    }

    /**
     * Counts queue declarations, creations and deletions in {@code churn} (the node's) from now on: set once the
     * queues on disk are recovered, so that a restart counts none.
     */
    public void countChurnIn(io.skiffmq.core.metrics.QueueChurn churn) {
        this.churn = churn;
    }

    /**
     * Makes this a clustered node's virtual host: durable exchanges and queues, and the bindings between them, are
     * declared and deleted through {@code shared} ({@link #applyShared}), not the store. Call before recovery.
     */
    public void share(SharedDefinitions definitions) {
        shared.use(definitions);
        localQueues = name -> queues.containsKey(name);
    }

    /**
     * How long its quorum queues wait before trying again the messages they could not dead-letter at least once
     * (RabbitMQ's {@code dead_letter_worker_publisher_confirm_timeout}).
     */
    public void deadLetterRetryMillis(long millis) {
        ((DeadLetterRouter) queueContext.deadLetters()).retryMillis(millis);
    }

    /** Sets the virtual host's {@code max-queues} (-1: none); queues past it are refused, those there stay. */
    public void maxQueues(long limit) {
        maxQueues = limit;
    }

    /**
     * The {@code max-queues} that {@code additional} more queues would pass, -1 when they would not (or there is
     * none), as {@code rabbit_vhost_limit:would_exceed_queue_limit/2}: for checks made before declaring several.
     */
    public long queueLimitPassedBy(int additional) {
        long limit = maxQueues;
        if (limit < 0) {
            return -1;
        }
        synchronized (writeLock) {
            return queues.size() + pendingDeclares.size() + shared.remoteCount() + additional > limit ? limit : -1;
        }
    }

    /**
     * Sets the type a queue declared without {@code x-queue-type} gets from now on (RabbitMQ's
     * {@code default_queue_type}; null for none, which is classic). Queues there stay as they are.
     */
    public void defaultQueueType(QueueType type) {
        defaultQueueType = type;
    }

    /**
     * {@code declaration} with the virtual host's default queue type written into its {@code x-queue-type}, when it
     * names none, as RabbitMQ's {@code rabbit_amqqueue:augment_declare_args/5} does: a declaration the default type
     * cannot take (exclusive, transient or auto-delete, for a quorum queue or a stream) gets classic. As in RabbitMQ,
     * for what clients declare (0-9-1 {@code queue.declare}, the HTTP API, {@code /management}, definitions), not
     * for the queues the broker makes itself (AMQP 1.0 dynamic nodes, JMS subscriptions).
     */
    public QueueDeclaration withDefaultType(QueueDeclaration declaration) {
        QueueType type = defaultQueueType;
        if (type == null || type == QueueType.CLASSIC || declaration.arguments().containsKey("x-queue-type")) {
            return declaration; // classic is what no x-queue-type means; RabbitMQ 4 writes it, we need not
        }
        boolean compatible = declaration.durable() && !declaration.exclusive() && !declaration.autoDelete();
        Map<String, Object> arguments = new java.util.LinkedHashMap<>(declaration.arguments());
        arguments.put("x-queue-type", (compatible ? type : QueueType.CLASSIC).alias());
        return new QueueDeclaration(declaration.name(), declaration.durable(), declaration.exclusive(),
            declaration.autoDelete(), arguments);
    }

    public String name() {
        return name;
    }

    // ---- queues -------------------------------------------------------------------------------------------

    /** The queue, or null. */
    public Queue queue(String queueName) {
        return queues.get(queueName);
    }

    /** Every queue, in no particular order. */
    public java.util.Collection<Queue> queues() {
        return java.util.Collections.unmodifiableCollection(queues.values());
    }

    /** The queue, or a new durable classic queue without arguments when there is none. */
    public Queue declareQueue(String queueName) {
        Queue queue = queues.get(queueName);
        return queue != null ? queue
            : Futures.await(declare(QueueDeclaration.of(queueName, true, Map.of()), null, false));
    }

    /**
     * Declares a plain queue (neither exclusive nor auto-delete), or returns the existing one when it is equivalent.
     * Waits until a durable one is saved.
     *
     * @throws BrokerException PRECONDITION_FAILED when one of that name differs in durability or arguments
     */
    public Queue declareQueue(String queueName, boolean durable, Map<String, Object> arguments) {
        return Futures.await(declare(QueueDeclaration.of(queueName, durable, arguments), null, true));
    }

    /** {@link #declareQueueAsync}, waiting for it. */
    public Queue declareQueue(QueueDeclaration declaration, Object owner) {
        return Futures.await(declareQueueAsync(declaration, owner));
    }

    /**
     * Declares a queue, or finds the existing one when it is equivalent. A new durable queue is saved first, on the
     * store's thread, and becomes routable only then; the future completes at that point, so the caller's thread
     * never waits for the disk.
     *
     * @param owner the declaring connection: the owner of an exclusive queue, and the only one that may redeclare it
     * @return fails with {@link BrokerException} PRECONDITION_FAILED when one of that name differs, RESOURCE_LOCKED
     *         when it is another connection's exclusive queue
     */
    public CompletableFuture<Queue> declareQueueAsync(QueueDeclaration declaration, Object owner) {
        if (declaration.exclusive() && owner == null) {
            throw new IllegalArgumentException("an exclusive queue needs an owner");
        }
        try {
            return declare(declaration, owner, true);
        } catch (BrokerException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    private CompletableFuture<Queue> declare(QueueDeclaration declaration, Object owner, boolean equivalent) {
        return declare(declaration, owner, equivalent, shared.clustered());
    }

    /** @param clustered a durable queue's record goes to the shared definitions (it is declared once committed) */
    private CompletableFuture<Queue> declare(QueueDeclaration declaration, Object owner, boolean equivalent,
            boolean clustered) {
        String queueName = declaration.name();
        // refused before anything else, as RabbitMQ does, by the rules of the queue's type
        QueueType.of(declaration.arguments()).check(name, declaration);
        churn.declared();
        Queue queue;
        CompletableFuture<Void> saved;
        CompletableFuture<Queue> ready;
        synchronized (writeLock) {
            Queue existing = queues.get(queueName);
            if (existing != null) {
                checkAccess(existing, owner);
                checkEquivalent(existing.declaration(), declaration, equivalent);
                existing.touch();
                return CompletableFuture.completedFuture(existing);
            }
            QueueHomed remote = shared.remote(queueName);
            if (remote != null) {
                checkEquivalent(remote.declaration(), declaration, equivalent);
                throw homeNodeDown(remote);
            }
            PendingDeclare pending = pendingDeclares.get(queueName);
            if (pending != null) {
                checkEquivalent(pending.queue.declaration(), declaration, equivalent);
                return pending.ready;
            }
            if (maxQueues >= 0 && queues.size() + pendingDeclares.size() + shared.remoteCount() >= maxQueues) {
                throw new BrokerException(Kind.RESOURCE_LIMIT, "cannot declare queue '" + queueName
                    + "': queue limit in vhost '" + name + "' (" + maxQueues + ") is reached");
            }
            if (clustered && declaration.persistent()) {
                return shared.declare(declaration, equivalent); // this node is its home
            }
            queue = createQueue(declaration);
            if (!declaration.persistent()) {
                register(queue, owner);
                return CompletableFuture.completedFuture(queue);
            }
            // durable before anyone can route to it: a message confirmed into it must find it after a crash
            ready = new CompletableFuture<>();
            pendingDeclares.put(queueName, new PendingDeclare(queue, ready));
            saved = store.queueDeclared(declaration);
        }
        saved.whenComplete((done, failure) -> {
            synchronized (writeLock) {
                pendingDeclares.remove(queueName);
                if (failure == null) {
                    register(queue, owner);
                }
            }
            if (failure == null) {
                ready.complete(queue);
            } else {
                queue.delete();
                ready.completeExceptionally(failure);
            }
        });
        return ready;
    }

    /**
     * A queue homed on another node, used here: RabbitMQ's answer for a durable queue whose node is down
     * ({@code rabbit_amqqueue:priv_absent/4}), as this node cannot reach it yet (docs/cluster.md).
     */
    public BrokerException homeNodeDown(QueueHomed record) {
        return new BrokerException(Kind.NOT_FOUND, "home node '" + record.node() + "' of durable queue '"
            + record.name() + "' in vhost '" + name + "' is down or inaccessible");
    }

    /** The shared record of a queue homed on another node, or null. */
    public QueueHomed remoteQueue(String queueName) {
        return shared.remote(queueName);
    }

    /**
     * What stands on this node for a queue homed on another node (its messages and consumers travel to and from
     * there), or null when no queue of that name is homed elsewhere.
     */
    public Queue remoteQueueProxy(String queueName) {
        return shared.proxy(queueName);
    }

    /**
     * Where a queue of the cluster's shared definitions lives, as RabbitMQ's queue info gives its leader and
     * replicas: the node it is served from first; null when {@code queueName} is not such a queue (a single node's,
     * or an exclusive one).
     */
    public java.util.List<String> queueNodes(String queueName) {
        return shared.nodes(queueName);
    }

    /** The shared records of the queues homed on other nodes. */
    public java.util.Collection<QueueHomed> remoteQueues() {
        return shared.remotes();
    }

    /**
     * Declares a durable queue read back from the store. In a cluster it is this node's own until the shared
     * definitions say it is theirs (it was declared before the node joined, or its record is still to be replayed).
     */
    public void recoverQueue(QueueDeclaration declaration, long incarnation) {
        Futures.await(declare(declaration, null, false, false));
        if (incarnation != 0) {
            synchronized (writeLock) {
                shared.incarnation(declaration.name(), incarnation);
            }
        }
    }

    /** A durable queue declared and not saved yet: not routable, and found by a second declaration. */
    private record PendingDeclare(Queue queue, CompletableFuture<Queue> ready) {
    }

    /** A new queue, under the policy that applies to it before anyone can reach it. Holds the write lock. */
    Queue createQueue(QueueDeclaration declaration) {
        return createQueue(declaration, store::createQueue);
    }

    /** As {@link #createQueue(QueueDeclaration)}, built by {@code make}. Holds the write lock. */
    Queue createQueue(QueueDeclaration declaration, SharedDefinitions.LiveQueueFactory make) {
        Queue queue = make.make(declaration, executors.get(), queueContext);
        EffectivePolicy policy = policies.forQueue(declaration.name(), queue.type());
        if (policy != EffectivePolicy.NONE) {
            queue.applyPolicy(policy);
        }
        return queue;
    }

    /** Makes a new queue visible. Holds the write lock. */
    void register(Queue queue, Object owner) {
        QueueDeclaration declaration = queue.declaration();
        queue.whenUnused(() -> deleteQueue(queue)); // auto-delete, or x-expires
        churn.created();
        if (declaration.exclusive()) {
            exclusiveOwners.put(declaration.name(), owner);
            exclusiveByOwner.computeIfAbsent(owner, o -> new java.util.HashSet<>()).add(declaration.name());
        }
        queues.put(declaration.name(), queue);
    }

    /** Makes a queue invisible without deleting anything of it (a replicated queue's live queue leaving). Locked. */
    void unregister(Queue queue) {
        queues.remove(queue.name(), queue);
    }

    /**
     * This node leads the group of the replicated queue {@code queueName}: its live queue, built by {@code make},
     * becomes this node's (docs/quorum-queues.md, "How it is replicated").
     *
     * @return the live queue; null when there is no such record here or it is live already
     */
    public Queue replicaLive(String queueName, SharedDefinitions.LiveQueueFactory make) {
        return shared.live(queueName, make);
    }

    /**
     * Another node leads the replicated queue {@code queueName} now, or none does: {@code liveHere} (this node's
     * live queue of it, or null) goes, and so does what stood here for the old leader's.
     */
    public void replicaMoved(String queueName, Queue liveHere) {
        shared.moved(queueName, liveHere);
    }

    static void checkEquivalent(QueueDeclaration existing, QueueDeclaration declared, boolean equivalent) {
        if (equivalent && !existing.equivalent(declared)) {
            throw new BrokerException(Kind.PRECONDITION_FAILED, "queue '" + declared.name() + "' exists as "
                + existing.describe());
        }
    }

    /**
     * Checks that the connection {@code owner} may use {@code queue} (consume, declare, delete): true unless it is
     * another connection's exclusive queue.
     *
     * @throws BrokerException RESOURCE_LOCKED when it is another connection's exclusive queue
     */
    public void checkAccess(Queue queue, Object owner) {
        Object exclusiveOwner = exclusiveOwners.get(queue.name());
        if (exclusiveOwner != null && exclusiveOwner != owner) {
            // RabbitMQ's text (rabbit_amqqueue:check_exclusive_access), which its clients match on
            throw new BrokerException(Kind.RESOURCE_LOCKED, "cannot obtain exclusive access to locked queue '"
                + queue.name() + "' in vhost '" + name + "'. It could be originally declared on another connection"
                + " or the exclusive property value does not match that of the original declaration.");
        }
    }

    /**
     * Before a delete or unbind answers that there was nothing to remove: completes once this node has applied every
     * shared change committed before the call, so that what another node acknowledged is seen here (at once on a
     * single node). Fails with {@link Kind#TIMEOUT} and RabbitMQ's {@code timedOut} without a majority.
     */
    public CompletableFuture<Void> caughtUp(String timedOut) {
        return shared.caughtUp(timedOut);
    }

    /**
     * Completes once a replicated quorum queue has a leader serving it: between two leaders, or just declared and
     * not yet live at its leader, neither it nor a stand-in for it is here. At once for any other queue; fails with
     * {@link Kind#TIMEOUT} and {@code timedOut} when no leader serves it within the append timeout.
     */
    public CompletableFuture<Void> led(String queueName, String timedOut) {
        return shared.led(queueName, timedOut);
    }

    /** Whether this virtual host's durable definitions are the cluster's ({@link #share}). */
    public boolean clustered() {
        return shared.clustered();
    }

    /**
     * Deletes the queue and its bindings, and waits until a durable one's deletion is saved; false when there was
     * none. Messages in it are dropped.
     */
    public boolean deleteQueue(String queueName) {
        Queue queue = queues.get(queueName);
        CompletableFuture<Integer> deleted = queue == null ? deleteRemoteQueue(queueName) : deleteQueue(queue);
        if (deleted == null) {
            return false;
        }
        Futures.await(deleted);
        return true;
    }

    /**
     * Deletes a queue homed on another node, through the shared definitions: its home node deletes it, with its
     * messages, once committed.
     *
     * @return completes with 0 (its count is its home node's) once committed and applied here; null when there is no
     *         such record
     */
    public CompletableFuture<Integer> deleteRemoteQueue(String queueName) {
        CompletableFuture<Void> appended;
        synchronized (writeLock) {
            if (shared.remote(queueName) == null) {
                return null;
            }
            Destination gone = Destination.queue(queueName);
            appended = shared.thenDeleted(shared.append(new QueueDeleted(queueName)),
                sharedCascade(bindings.withoutDestination(gone), bindings.bindingsTo(gone)));
        }
        return SharedRecords.timedOut(appended, MetadataTimeouts.QUEUE_DELETE).thenApply(done -> 0);
    }

    /**
     * Deletes that very queue (not a later one of the same name) and its bindings, at once, without waiting for
     * the disk: for threads that must not wait (event loops, queues).
     *
     * @return completes with the number of messages that were ready once a durable queue's deletion is saved; null when it
     *         is gone already
     */
    public CompletableFuture<Integer> deleteQueue(Queue queue) {
        synchronized (writeLock) {
            if (queues.get(queue.name()) != queue) {
                return null;
            }
            if (shared.queue(queue.name())) {
                Destination gone = Destination.queue(queue.name());
                return shared.deleteQueue(queue, sharedCascade(bindings.withoutDestination(gone),
                    bindings.bindingsTo(gone)));
            }
            if (shared.remote(queue.name()) != null) {
                return deleteRemoteQueue(queue.name()); // a replicated queue led here: its record goes
            }
        }
        return deleteLocal(queue, true);
    }

    /**
     * Deletes a queue of this node: its own, or a shared one whose deletion is committed. Called with no lock held.
     *
     * @param initiator the deletion starts here: it appends that of the shared exchanges it auto-deletes
     */
    CompletableFuture<Integer> deleteLocal(Queue queue, boolean initiator) {
        CompletableFuture<Void> saved = null;
        synchronized (writeLock) {
            if (!queues.remove(queue.name(), queue)) {
                return null;
            }
            Object owner = exclusiveOwners.remove(queue.name());
            if (owner != null) {
                Set<String> owned = exclusiveByOwner.get(owner);
                if (owned != null && owned.remove(queue.name()) && owned.isEmpty()) {
                    exclusiveByOwner.remove(owner);
                }
            }
            shared.forget(queue.name());
            List<VhostChange> changes = new ArrayList<>(1);
            if (queue.declaration().persistent()) {
                changes.add(new QueueDeleted(queue.name())); // its bindings go with it
            }
            Destination gone = Destination.queue(queue.name());
            List<String> cascade = replaceBindings(bindings.withoutDestination(gone), bindings.bindingsTo(gone),
                changes);
            if (initiator) {
                shared.appendDeleted(cascade);
            }
            saved = changes.isEmpty() ? null : store.changed(changes);
        }
        churn.deleted();
        CompletableFuture<Integer> messages = queue.delete();
        deletions.deleted(Destination.queue(queue.name()));
        deletions.announce();
        return saved == null ? messages : messages.thenCombine(saved, (count, done) -> count);
    }

    /** The connection {@code owner} closed: its exclusive queues go. */
    public void ownerClosed(Object owner) {
        Set<String> owned;
        synchronized (writeLock) {
            owned = exclusiveByOwner.remove(owner);
        }
        if (owned != null) {
            for (String queueName : owned) {
                Queue queue = queues.get(queueName);
                if (queue != null && exclusiveOwners.get(queueName) == owner) {
                    deleteQueue(queue);
                }
            }
        }
    }

    /**
     * Runs {@code action} (on the deleting thread, once) when the queue or exchange {@code destination} is deleted.
     *
     * @return cancels the watch
     */
    public Runnable whenDeleted(Destination destination, Runnable action) {
        return deletions.watch(destination, action);
    }

    // ---- exchanges ----------------------------------------------------------------------------------------

    /** Every exchange, the predeclared ones included, in no particular order. */
    public java.util.Collection<Exchange> exchanges() {
        return java.util.Collections.unmodifiableCollection(exchanges.values());
    }

    /** The exchange, or null. */
    public Exchange exchange(String exchangeName) {
        return exchanges.get(exchangeName);
    }

    /**
     * Declares an exchange, or returns the existing one when it is equivalent.
     *
     * @throws BrokerException PRECONDITION_FAILED when one of that name differs, ACCESS_REFUSED for {@code amq.*}
     */
    public Exchange declareExchange(Exchange exchange) {
        CompletableFuture<Void> saved;
        CompletableFuture<Void> appended = null;
        synchronized (writeLock) {
            Exchange existing = exchanges.get(exchange.name());
            if (existing != null) {
                return checkEquivalent(existing, exchange);
            }
            if (exchange.name().startsWith("amq.")) {
                throw new BrokerException(Kind.ACCESS_REFUSED, "exchange names starting 'amq.' are reserved");
            }
            if (shared.clustered() && exchange.durable()) {
                // in force once committed, on every node at once (applyShared), never before
                appended = shared.append(new ExchangeDeclared(exchange));
                saved = null;
            } else {
                exchange = exchange.withPolicy(policies.forExchange(exchange.name()));
                exchanges.put(exchange.name(), exchange);
                saved = exchange.durable() ? store.changed(List.of(new ExchangeDeclared(exchange))) : null;
            }
        }
        if (appended != null) {
            SharedRecords.await(appended, "failed to declare exchange '" + exchange.name() + "' in vhost '" + name
                + "' because the operation timed out");
            Exchange applied = exchanges.get(exchange.name());
            // another node's declaration of that name may have been committed first
            return applied == null ? exchange : checkEquivalent(applied, exchange);
        }
        if (saved != null) {
            Futures.await(saved);
        }
        return exchange;
    }

    private static Exchange checkEquivalent(Exchange existing, Exchange declared) {
        if (!existing.equivalent(declared)) {
            throw new BrokerException(Kind.PRECONDITION_FAILED, "exchange '" + declared.name()
                + "' exists with different properties: " + existing);
        }
        return existing;
    }

    /**
     * Declares an exchange read back from the store, as it was saved. In a cluster it stays this node's own (a
     * durable exchange declared before the node joined), unless the shared definitions have one of its name.
     */
    public void recoverExchange(Exchange exchange) {
        synchronized (writeLock) {
            exchanges.putIfAbsent(exchange.name(), exchange.withPolicy(policies.forExchange(exchange.name())));
        }
    }

    /**
     * Deletes an exchange and every binding from or to it (as RabbitMQ does: exchanges bound to it lose that
     * binding, and keep their others). False when there was none.
     */
    public boolean deleteExchange(String exchangeName) {
        if (exchangeName.isEmpty() || exchangeName.startsWith("amq.")) {
            throw new BrokerException(Kind.ACCESS_REFUSED, "exchange '" + exchangeName + "' cannot be deleted");
        }
        CompletableFuture<Void> saved;
        synchronized (writeLock) {
            Destination gone = Destination.exchange(exchangeName);
            BindingTable without = bindings.withoutSource(exchangeName).withoutDestination(gone);
            java.util.Collection<Binding> unbound = bindings.bindingsTo(gone);
            if (shared.exchange(exchangeName)) {
                // gone on every node once committed (applyShared), with the auto-delete exchanges it leaves unbound
                saved = shared.thenDeleted(shared.append(new ExchangeDeleted(exchangeName)),
                    sharedCascade(without, unbound));
            } else {
                Exchange removed = exchanges.remove(exchangeName);
                if (removed == null) {
                    return false;
                }
                List<VhostChange> changes = new ArrayList<>(1);
                if (removed.durable()) {
                    changes.add(new ExchangeDeleted(exchangeName)); // its bindings go with it
                }
                deletions.deletedUnderLock(gone);
                shared.appendDeleted(replaceBindings(without, unbound, changes));
                saved = changes.isEmpty() ? null : store.changed(changes);
            }
        }
        if (saved != null) {
            SharedRecords.await(saved, "failed to delete exchange '" + exchangeName + "' in vhost '" + name
                + "' due to a timeout");
        }
        deletions.announce();
        return true;
    }

    // ---- the shared definitions (a cluster) ------------------------------------------------------------------

    /**
     * Applies a committed change of the shared definitions ({@link #share}): on every node, in the log's order, on
     * the thread that applies it ({@link SharedRecords#apply}).
     */
    public void applyShared(VhostChange change) {
        shared.apply(change);
    }

    /**
     * Makes the shared definitions here exactly {@code definitions} (changes that rebuild them, as a snapshot of the
     * log holds them): shared exchanges and bindings they lack go, the others are {@link #applyShared applied}.
     */
    public void replaceShared(List<VhostChange> definitions) {
        shared.replace(definitions);
    }

    /** Adds an exchange of the shared definitions, under its policy; false when one of its name is here. Locked. */
    boolean addExchange(Exchange exchange) {
        if (exchanges.containsKey(exchange.name())) {
            return false;
        }
        exchanges.put(exchange.name(), exchange.withPolicy(policies.forExchange(exchange.name())));
        return true;
    }

    /** Removes an exchange of the shared definitions, and the bindings from and to it, into {@code local}. Locked. */
    void removeExchange(String exchange, List<VhostChange> local) {
        exchanges.remove(exchange);
        Destination gone = Destination.exchange(exchange);
        deletions.deletedUnderLock(gone);
        replaceBindings(bindings.withoutSource(exchange).withoutDestination(gone), bindings.bindingsTo(gone), local);
    }

    /** Removes the bindings to a queue homed on another node, which is gone. Locked. */
    void removeBindingsTo(Destination gone, List<VhostChange> local) {
        replaceBindings(bindings.withoutDestination(gone), bindings.bindingsTo(gone), local);
        deletions.deletedUnderLock(gone);
    }

    /** Adds a binding of the shared definitions, once. Locked. */
    void addBinding(Binding binding) {
        if (!bindings.contains(binding)) {
            bindings = bindings.with(binding);
        }
    }

    /** Removes a binding of the shared definitions, if here, with the cascade it causes. Locked. */
    void removeBinding(Binding binding, List<VhostChange> local) {
        if (bindings.contains(binding)) {
            replaceBindings(bindings.without(binding), List.of(binding), local);
        }
    }

    /** Runs what watched the queues and exchanges deleted under the lock. Not locked. */
    void announceDeletions() {
        deletions.announce();
    }

    // ---- policies -----------------------------------------------------------------------------------------

    /** Its policies and operator policies. */
    public Policies policies() {
        return policies;
    }

    /**
     * Sets a policy (an operator policy when {@code operator}), checked already ({@link Policy#checked}), replacing
     * the one of its name, and applies what changes to the queues and exchanges it concerns, without redeclaring
     * them. Returns once it is saved; in a cluster, once committed and applied here (on every node alike,
     * {@link #applyShared}), or {@link BrokerException.Kind#TIMEOUT} without a majority.
     *
     * @return true when it replaced one
     */
    public boolean setPolicy(Policy policy, boolean operator) {
        CompletableFuture<Void> saved;
        boolean existed;
        synchronized (writeLock) {
            existed = policies.get(policy.name(), operator) != null;
            if (shared.clustered()) {
                saved = SharedRecords.timedOut(shared.append(new PolicySet(policy, operator)),
                    SharedRecords.POLICY_TIMED_OUT);
            } else {
                putPolicy(policy, operator);
                saved = store.changed(List.of(new PolicySet(policy, operator)));
            }
        }
        Futures.await(saved);
        return existed;
    }

    /**
     * Clears a policy (an operator policy when {@code operator}); what it set goes from the queues and exchanges
     * it applied to (the next policy that matches applies instead). Returns once it is saved (in a cluster, as
     * {@link #setPolicy}).
     *
     * @return false when there was none of that name
     */
    public boolean clearPolicy(String policyName, boolean operator) {
        CompletableFuture<Void> saved;
        synchronized (writeLock) {
            if (policies.get(policyName, operator) == null) {
                return false;
            }
            if (shared.clustered()) {
                saved = SharedRecords.timedOut(shared.append(new PolicyCleared(policyName, operator)),
                    SharedRecords.POLICY_TIMED_OUT);
            } else {
                dropPolicy(policyName, operator);
                saved = store.changed(List.of(new PolicyCleared(policyName, operator)));
            }
        }
        Futures.await(saved);
        return true;
    }

    /** A policy in force from now on, applied to what it concerns. Holds the write lock. */
    void putPolicy(Policy policy, boolean operator) {
        policies = policies.with(policy, operator);
        reapplyPolicies();
    }

    /** A policy no longer in force, if it was. Holds the write lock. */
    void dropPolicy(String policyName, boolean operator) {
        if (policies.get(policyName, operator) != null) {
            policies = policies.without(policyName, operator);
            reapplyPolicies();
        }
    }

    /**
     * Tells every queue and exchange whose policy changed: RabbitMQ's {@code rabbit_policy:update_matched_objects}.
     * A queue takes it into effect on its own thread; an exchange is replaced by one under its new policy. The
     * default exchange takes none: it routes by queue name alone. Holds the write lock.
     */
    private void reapplyPolicies() {
        for (Queue queue : queues.values()) {
            applyPolicy(queue);
        }
        for (PendingDeclare pending : pendingDeclares.values()) {
            applyPolicy(pending.queue);
        }
        for (Exchange exchange : exchanges.values()) {
            if (!exchange.isDefault()) {
                Exchange next = exchange.withPolicy(policies.forExchange(exchange.name()));
                if (next != exchange) {
                    exchanges.put(next.name(), next);
                }
            }
        }
    }

    private void applyPolicy(Queue queue) {
        EffectivePolicy next = policies.forQueue(queue.name(), queue.type());
        if (!next.equals(queue.policy())) {
            queue.applyPolicy(next);
        }
    }

    // ---- bindings -----------------------------------------------------------------------------------------

    public BindingTable bindings() {
        return bindings;
    }

    /**
     * Adds a binding (a second identical one is no change); returns once a durable one is saved.
     *
     * @throws BrokerException NOT_FOUND for a missing source or destination, ACCESS_REFUSED for the default exchange,
     *         PRECONDITION_FAILED for a headers exchange's {@code x-match} RabbitMQ refuses
     *         ({@link HeadersBindingCheck})
     */
    public void bind(Binding binding) {
        Futures.await(bindAsync(binding));
    }

    /**
     * Adds a binding, routable at once; the future completes once a durable one is saved.
     *
     * @return fails with {@link BrokerException} as {@link #bind} throws it
     */
    public CompletableFuture<Void> bindAsync(Binding binding) {
        return bindAsync(binding, true);
    }

    /**
     * Adds a binding read back from the store. Its arguments are not checked again: as RabbitMQ checks a binding
     * when it is added, not when it is recovered ({@code rabbit_binding:recover/0}), one saved before a check
     * existed keeps routing.
     */
    public void recoverBinding(Binding binding) {
        Futures.await(bindAsync(binding, false));
    }

    /**
     * Adds bindings read back from the store, as {@link #recoverBinding} each, in one new table: a restart with n
     * bindings costs O(n), not O(n²). Each must lead from and to what exists.
     */
    public void recoverBindings(java.util.Collection<Binding> recovered) {
        synchronized (writeLock) {
            List<Binding> ready = new ArrayList<>(recovered.size());
            for (Binding binding : recovered) {
                String missing = shared.clustered() ? missingExchange(binding) : null;
                if (missing != null) {
                    // from or to a shared exchange its log has not applied yet on this start
                    shared.awaitExchange(missing, binding);
                    continue;
                }
                checkBindable(binding, false);
                ready.add(binding);
            }
            bindings = bindings.withAll(ready);
        }
    }

    /** Adds the recovered bindings that waited for an exchange now applied, or has them wait for their other end. */
    void recoverAwaiting(List<Binding> awaiting) {
        for (Binding binding : awaiting) {
            String missing = missingExchange(binding);
            if (missing != null) {
                shared.awaitExchange(missing, binding);
            } else if (!bindings.contains(binding)) {
                try {
                    checkBindable(binding, false);
                    bindings = bindings.with(binding);
                } catch (BrokerException e) {
                    // its queue is gone: nothing to bind
                }
            }
        }
    }

    /** The exchange end of {@code binding} that does not exist, or null. */
    private String missingExchange(Binding binding) {
        if (!exchanges.containsKey(binding.source())) {
            return binding.source();
        }
        Destination d = binding.destination();
        return d.isExchange() && !exchanges.containsKey(d.name()) ? d.name() : null;
    }

    private CompletableFuture<Void> bindAsync(Binding binding, boolean checkArguments) {
        synchronized (writeLock) {
            try {
                checkBindable(binding, checkArguments);
            } catch (BrokerException e) {
                return CompletableFuture.failedFuture(e);
            }
            if (!bindings.contains(binding)) {
                if (shared.binding(binding)) {
                    // in force once committed, on every node at once (applyShared)
                    return SharedRecords.timedOut(shared.append(new BindingAdded(binding)),
                        "Could not add binding due to timeout");
                }
                bindings = bindings.with(binding); // adding leaves no auto-delete exchange without bindings
                if (durable(binding)) {
                    return store.changed(List.of(new BindingAdded(binding)));
                }
            }
            return CompletableFuture.completedFuture(null);
        }
    }

    /** Removes a binding; false when there was no such binding (arguments included). */
    public boolean unbind(Binding binding) {
        return unbind(binding, null);
    }

    /**
     * Removes a binding for the connection {@code owner}; false when there was no such binding (arguments included),
     * or no such source or destination, which is no error ({@code rabbit_db_binding:delete/2}).
     *
     * @throws BrokerException RESOURCE_LOCKED when the binding is there and leads to another connection's exclusive
     *         queue (checked only then, as RabbitMQ checks it)
     */
    public boolean unbind(Binding binding, Object owner) {
        CompletableFuture<Void> saved = null;
        CompletableFuture<Void> appended = null;
        synchronized (writeLock) {
            if (!bindings.contains(binding)) {
                return false;
            }
            Queue destination = binding.destination().isExchange() ? null : queues.get(binding.destination().name());
            if (destination != null && owner != null) {
                checkAccess(destination, owner);
            }
            if (shared.binding(binding)) {
                // gone on every node once committed (applyShared), with the auto-delete source it leaves unbound
                appended = shared.thenDeleted(shared.append(new BindingRemoved(binding)),
                    sharedCascade(bindings.without(binding), List.of(binding)));
            } else {
                List<VhostChange> changes = new ArrayList<>(1);
                if (durable(binding)) { // before an auto-delete source goes with it
                    changes.add(new BindingRemoved(binding));
                }
                shared.appendDeleted(replaceBindings(bindings.without(binding), List.of(binding), changes));
                saved = changes.isEmpty() ? null : store.changed(changes);
            }
        }
        if (appended != null) {
            SharedRecords.await(appended, "Could not remove binding due to timeout");
        }
        deletions.announce();
        if (saved != null) {
            Futures.await(saved);
        }
        return true;
    }

    /**
     * A binding survives a restart when both its ends do (as in RabbitMQ): a durable exchange, and a durable exchange
     * or a {@link QueueDeclaration#persistent persistent} queue (an exclusive one goes with its connection).
     */
    public boolean durable(Binding binding) {
        Exchange source = exchanges.get(binding.source());
        Destination d = binding.destination();
        boolean destination;
        if (d.isExchange()) {
            Exchange e = exchanges.get(d.name());
            destination = e != null && e.durable();
        } else {
            Queue q = queues.get(d.name());
            destination = q != null && q.declaration().persistent();
        }
        return source != null && source.durable() && destination;
    }

    private void checkBindable(Binding binding, boolean checkArguments) {
        if (binding.source().isEmpty() || binding.destination().isExchange() && binding.destination().name().isEmpty()) {
            throw new BrokerException(Kind.ACCESS_REFUSED, "the default exchange cannot be bound");
        }
        Exchange source = exchanges.get(binding.source());
        if (source == null) {
            throw new BrokerException(Kind.NOT_FOUND, "no exchange '" + binding.source() + "'");
        }
        Destination d = binding.destination();
        boolean exists = d.isExchange() ? exchanges.containsKey(d.name())
            : queues.containsKey(d.name()) || shared.remote(d.name()) != null;
        if (!exists) {
            throw new BrokerException(Kind.NOT_FOUND, "no " + (d.isExchange() ? "exchange '" : "queue '") + d.name() + "'");
        }
        if (checkArguments && source.type() == Exchange.Type.HEADERS) {
            HeadersBindingCheck.check(binding.arguments());
        }
        if (source.type() == Exchange.Type.LOCAL_RANDOM) {
            // rabbit_exchange_type_local_random:validate_binding/2, in its words
            if (!binding.key().isEmpty()) {
                throw new BrokerException(Kind.INVALID, "Non empty binding '" + binding.key() + "' key not permitted");
            }
            if (d.isExchange()) {
                throw new BrokerException(Kind.INVALID, "Destination not found");
            }
            QueueType type = checkArguments ? queueType(d.name()) : QueueType.CLASSIC; // one recovered keeps routing
            if (type != QueueType.CLASSIC) {
                throw new BrokerException(Kind.INVALID, "Queue type " + type.module() + " not valid for this exchange "
                    + "type");
            }
        }
    }

    /** The type of a queue homed here or on another node; classic for one just gone. */
    private QueueType queueType(String name) {
        Queue queue = queues.get(name);
        QueueHomed homed = queue == null ? shared.remote(name) : null;
        return queue != null ? queue.type() : homed != null ? QueueType.of(homed.arguments()) : QueueType.CLASSIC;
    }

    /**
     * Swaps in a new snapshot, deleting the auto-delete exchanges it leaves without bindings as a source
     * ({@link AutoDeleteCascade}). An exchange of the shared definitions is not deleted here: it goes on every node
     * at once when its deletion is committed. Holds the write lock.
     *
     * @param removed the bindings that {@code table} no longer has
     * @param changes where the deletion of each durable exchange that went with them is added, for the store
     * @return the shared exchanges the cascade would have deleted, whose deletion the caller appends
     */
    private List<String> replaceBindings(BindingTable table, java.util.Collection<Binding> removed,
            List<VhostChange> changes) {
        AutoDeleteCascade local = AutoDeleteCascade.of(table, removed, exchangeLookup, e -> !shared.exchange(e.name()));
        for (Exchange e : local.gone()) {
            exchanges.remove(e.name());
            deletions.deletedUnderLock(Destination.exchange(e.name()));
            if (e.durable()) {
                changes.add(new ExchangeDeleted(e.name()));
            }
        }
        List<String> sharedGone = sharedCascade(local.table(), local.removed());
        bindings = local.table();
        return sharedGone;
    }

    /**
     * The shared auto-delete exchanges that removing {@code removed} (leaving {@code table}) would leave without
     * bindings as a source. Holds the write lock.
     */
    private List<String> sharedCascade(BindingTable table, java.util.Collection<Binding> removed) {
        if (!shared.anyExchange()) {
            return List.of();
        }
        return AutoDeleteCascade.of(table, removed, exchangeLookup, e -> shared.exchange(e.name())).gone().stream()
            .map(Exchange::name).toList();
    }

    // ---- routing ------------------------------------------------------------------------------------------

    /**
     * The queues a message published to {@code exchange} with {@code routingKey} goes to, added to {@code out}
     * (cleared first). {@code router} is the calling thread's own.
     *
     * @param headers the message's headers (the message itself), asked for only when a headers exchange is on
     *        the way
     */
    public List<Queue> route(Exchange exchange, String routingKey, Headers headers,
            Router router, List<Queue> out) {
        return route(exchange, routingKey, null, headers, router, out);
    }

    /**
     * As {@link #route(Exchange, String, Headers, Router, List)}, with the routing keys the message names beside its
     * own ({@link io.skiffmq.core.message.Message#headerRoutes}: CC and BCC), matched too; each queue once.
     *
     * @param moreKeys null for none
     */
    public List<Queue> route(Exchange exchange, String routingKey, List<String> moreKeys, Headers headers,
            Router router, List<Queue> out) {
        out.clear();
        router.localQueues(localQueues);
        ArrayList<String> names = router.route(bindings, exchangeLookup, exchange, routingKey, moreKeys, headers);
        for (int i = 0; i < names.size(); i++) {
            Queue queue = queues.get(names.get(i));
            if (queue == null) {
                queue = shared.routable(names.get(i)); // homed on another node, or gone
            }
            if (queue != null) {
                out.add(queue);
            }
        }
        return out;
    }
}
