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
import io.skiffmq.core.queue.Queue;
import io.skiffmq.core.queue.QueueDeclaration;
import io.skiffmq.core.routing.Binding;
import io.skiffmq.core.routing.Destination;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeoutException;

/**
 * A virtual host's part of the cluster's shared definitions ({@link VirtualHost#share}): which of its exchanges,
 * queues, bindings and policies are shared, the records of the queues homed on other nodes, and the committed
 * changes applied here ({@link #apply}), on every node in the log's order. The objects themselves (queues,
 * exchanges, the binding table) stay the virtual host's: a change reaches them under its write lock. A single node's
 * virtual host has one too, never {@link #clustered} and empty, so that the local path asks it without a null check.
 *
 * <p>Thread-safe. The exchanges, shared queues and remote records are read on any thread (concurrent sets and maps)
 * and changed under the virtual host's write lock, as are the incarnations and the bindings awaiting an exchange.
 * {@link #apply} runs on the thread that applies the cluster's log.
 */
final class SharedRecords {
    private static final System.Logger LOG = System.getLogger(SharedRecords.class.getName());
    /** RabbitMQ has no words of its own for this one: a runtime parameter's change fails with Khepri's timeout. */
    static final String POLICY_TIMED_OUT = "Could not change the policy: the metadata store operation timed out";

    private final VirtualHost vhost;
    /** Where changes are appended; null until {@link #use} (a single node: never). */
    private volatile SharedDefinitions definitions;
    /** The exchanges applied from the shared definitions. */
    private final Set<String> exchanges = ConcurrentHashMap.newKeySet();
    /**
     * Bindings read back from this node's store whose exchange end the log has not applied yet on this start, by
     * that exchange's name: added once it is ({@link VirtualHost#recoverBindings}).
     */
    private final Map<String, List<Binding>> awaitingExchange = new HashMap<>();
    /** This node's queues that are the queue of a shared record (homed here). */
    private final Set<String> queues = ConcurrentHashMap.newKeySet();
    /** The incarnation of each local queue made from a shared record, as its store keeps it. */
    private final Map<String, Long> incarnations = new HashMap<>();
    /** The shared policies ({@link #policyKey}): those a snapshot of the log lacks go. */
    private final Set<String> policies = ConcurrentHashMap.newKeySet();
    /** The records of the queues homed on another node: known here, not local. */
    private final Map<String, QueueHomed> remoteQueues = new ConcurrentHashMap<>();
    /** What stands here for each remote record's queue ({@link SharedDefinitions#remoteQueue}), made when first used. */
    private final Map<String, Queue> remoteProxies = new ConcurrentHashMap<>();
    /** A deletion of a shared queue this node asked for, completed by {@link #apply} with its message count. */
    private final Map<Queue, CompletableFuture<Integer>> deletions = new ConcurrentHashMap<>();

    SharedRecords(VirtualHost vhost) {
        this.vhost = vhost;
    }

    void use(SharedDefinitions shared) {
        definitions = shared;
    }

    boolean clustered() {
        return definitions != null;
    }

    String node() {
        return definitions.node();
    }

    boolean exchange(String name) {
        return exchanges.contains(name);
    }

    boolean anyExchange() {
        return !exchanges.isEmpty();
    }

    /** A policy's name with what it is: {@code o} before an operator policy's, {@code p} before a policy's. */
    private static String policyKey(String name, boolean operator) {
        return (operator ? "o" : "p") + name;
    }

    /** Whether this node's queue of that name is a shared record's. */
    boolean queue(String name) {
        return queues.contains(name);
    }

    QueueHomed remote(String name) {
        return remoteQueues.get(name);
    }

    /**
     * What stands here for the queue homed on another node under that name, or null when there is no such record
     * (or nothing to reach it yet). Read on any thread.
     */
    Queue proxy(String name) {
        Queue proxy = remoteProxies.get(name);
        if (proxy != null) {
            return proxy;
        }
        QueueHomed record = remoteQueues.get(name);
        if (record == null || definitions == null) {
            return null;
        }
        proxy = definitions.remoteQueue(vhost.name(), record);
        if (proxy == null) {
            return null;
        }
        synchronized (vhost.writeLock) {
            if (remoteQueues.get(name) != record) {
                return null; // deleted or homed elsewhere meanwhile
            }
            Queue raced = remoteProxies.putIfAbsent(name, proxy);
            return raced != null ? raced : proxy;
        }
    }

    /**
     * What a message routed to {@code name}, not a queue of this node, goes to: the record's {@link #proxy}, or,
     * when there is a record but nothing reaches its queue now, what holds it for a replicated queue's next leader
     * ({@link SharedDefinitions#unled}) or an {@link UnreachableQueue} that refuses it; null
     * when there is no such record. Read on any thread.
     */
    Queue routable(String name) {
        Queue proxy = proxy(name);
        if (proxy != null) {
            return proxy;
        }
        QueueHomed record = remoteQueues.get(name);
        if (record == null) {
            return null;
        }
        Queue held = definitions == null ? null : definitions.unled(vhost.name(), record);
        return held != null ? held : new UnreachableQueue(record.declaration());
    }

    /**
     * The nodes of a queue of the shared definitions, where it lives first (a replicated queue's leader, when
     * known, then its other members; a queue homed on one node, that node); null when {@code name} is no such queue.
     */
    List<String> nodes(String name) {
        QueueHomed record = remoteQueues.get(name);
        if (record == null || definitions == null) {
            return null;
        }
        List<String> replicas = definitions.replicaNodes(vhost.name(), record);
        return replicas != null ? replicas : List.of(record.node());
    }

    /** The record's queue is gone from here: what stood for it tells its consumers. Locked. */
    private void dropProxy(String name) {
        Queue proxy = remoteProxies.remove(name);
        if (proxy != null) {
            proxy.delete();
        }
    }

    /**
     * Makes the live queue of a replicated record here, this node leading its group: {@code make} builds it (from
     * the replica), and it is routable and found before any proxy. Null when there is no such record, or it is live
     * already.
     */
    Queue live(String name, SharedDefinitions.LiveQueueFactory make) {
        synchronized (vhost.writeLock) {
            QueueHomed record = remoteQueues.get(name);
            if (record == null || vhost.queue(name) != null) {
                return null;
            }
            Queue queue = vhost.createQueue(record.declaration(), make);
            dropProxy(name);
            vhost.register(queue, null);
            return queue;
        }
    }

    /**
     * A replicated queue's leader is another node now (or none): its live queue here, if any, goes without touching
     * its replica, and what stood for it on the old leader goes, so that the next use reaches the new one.
     */
    void moved(String name, Queue liveHere) {
        synchronized (vhost.writeLock) {
            if (liveHere != null) {
                vhost.unregister(liveHere);
            }
            dropProxy(name);
        }
        if (liveHere != null) {
            liveHere.delete();
        }
    }

    Collection<QueueHomed> remotes() {
        return java.util.Collections.unmodifiableCollection(remoteQueues.values());
    }

    int remoteCount() {
        return remoteQueues.size();
    }

    /**
     * A binding of the shared definitions: from an exchange that is to an exchange or queue that is. The built-in
     * {@code amq.*} exchanges count as shared: every node has them (nobody can declare or delete one), so their
     * bindings to shared queues are the cluster's, as in RabbitMQ.
     */
    boolean binding(Binding binding) {
        if (!sharedEnd(binding.source())) {
            return false;
        }
        String destination = binding.destination().name();
        return binding.destination().isExchange() ? sharedEnd(destination)
            : queues.contains(destination) || remoteQueues.containsKey(destination);
    }

    /** A shared exchange, or a built-in one that every node has: either end of a shared binding. */
    private boolean sharedEnd(String exchange) {
        return exchanges.contains(exchange) || definitions != null && exchange.startsWith("amq.")
            && vhost.exchange(exchange) != null;
    }

    /** A queue recovered from this node's store was made from the shared record of that incarnation. Locked. */
    void incarnation(String queue, long incarnation) {
        incarnations.put(queue, incarnation);
    }

    /** The local queue is gone. Locked. */
    void forget(String queue) {
        incarnations.remove(queue);
    }

    /** A recovered binding waits for the shared exchange {@code missing}. Locked. */
    void awaitExchange(String missing, Binding binding) {
        awaitingExchange.computeIfAbsent(missing, m -> new ArrayList<>()).add(binding);
    }

    CompletableFuture<Void> append(VhostChange change) {
        return definitions.append(vhost.name(), change);
    }

    /**
     * Declares a durable queue homed on this node through the shared definitions: it exists, here and as a record
     * on every node, once committed ({@link #apply}). Locked.
     */
    CompletableFuture<Queue> declare(QueueDeclaration declaration, boolean equivalent) {
        String queueName = declaration.name();
        String node = node();
        long incarnation = ThreadLocalRandom.current().nextLong(1, Long.MAX_VALUE);
        String timedOut = "Could not declare queue '" + queueName + "' in vhost '" + vhost.name() + "' on node '"
            + node + "' because the metadata store operation timed out";
        return timedOut(append(new QueueHomed(queueName, declaration.autoDelete(), declaration.arguments(), node,
            incarnation)), timedOut)
            .thenCompose(done -> {
                QueueHomed record = remoteQueues.get(queueName);
                return record != null && record.incarnation() == incarnation
                    && definitions.replicated(vhost.name(), record)
                    ? timedOut(definitions.whenLed(vhost.name(), record), timedOut)
                    : CompletableFuture.completedFuture(null);
            })
            .thenApply(done -> {
                Queue declared = vhost.queue(queueName);
                QueueHomed replicated = remoteQueues.get(queueName);
                if (declared == null && replicated != null && replicated.incarnation() == incarnation) {
                    declared = proxy(queueName); // a replicated queue led from another node
                    if (declared == null) {
                        throw vhost.homeNodeDown(replicated);
                    }
                }
                if (declared == null) {
                    QueueHomed other = remoteQueues.get(queueName);
                    if (other == null) {
                        throw new BrokerException(Kind.NOT_FOUND, "no queue '" + queueName + "' in vhost '"
                            + vhost.name() + "'"); // deleted as soon as declared
                    }
                    VirtualHost.checkEquivalent(other.declaration(), declaration, equivalent);
                    throw vhost.homeNodeDown(other); // another node's declaration was committed first
                }
                VirtualHost.checkEquivalent(declared.declaration(), declaration, equivalent);
                return declared;
            });
    }

    /**
     * Deletes a shared queue of this node through the shared definitions (then {@code cascade}, the shared exchanges
     * it leaves unbound): gone from every node once committed, here with its messages ({@link #apply}). Locked.
     *
     * @return completes with its count of ready messages once committed and applied
     */
    CompletableFuture<Integer> deleteQueue(Queue queue, List<String> cascade) {
        CompletableFuture<Integer> counted = deletions.computeIfAbsent(queue, q -> new CompletableFuture<>());
        CompletableFuture<Void> appended = thenDeleted(append(new QueueDeleted(queue.name())), cascade);
        return timedOut(appended, MetadataTimeouts.QUEUE_DELETE).thenCompose(done -> counted)
            .whenComplete((n, failure) -> deletions.remove(queue, counted));
    }

    /** After {@code first} (null: at once), the shared deletion of each exchange, in turn. */
    CompletableFuture<Void> thenDeleted(CompletableFuture<Void> first, List<String> exchangeNames) {
        CompletableFuture<Void> last = first != null ? first : CompletableFuture.completedFuture(null);
        for (String exchange : exchangeNames) {
            last = last.thenCompose(done -> append(new ExchangeDeleted(exchange)));
        }
        return last;
    }

    /**
     * Appends the shared deletion of auto-delete exchanges a local change left unbound (a queue deleted), without
     * waiting: the change that caused it must not wait for a majority. Without one they stay, as any change the
     * cluster did not commit.
     */
    void appendDeleted(List<String> exchangeNames) {
        if (!exchangeNames.isEmpty()) {
            thenDeleted(null, exchangeNames);
        }
    }

    /**
     * Completes once this node has applied every shared change committed before the call (at once on a single
     * node); without a majority fails with {@link Kind#TIMEOUT} and RabbitMQ's {@code timedOut}.
     */
    CompletableFuture<Void> caughtUp(String timedOut) {
        SharedDefinitions shared = definitions;
        return shared == null ? CompletableFuture.completedFuture(null) : timedOut(shared.caughtUp(), timedOut);
    }

    /**
     * Completes once the replicated queue {@code name} has a leader that serves it, here or on another node; at once
     * for any other queue. Fails with {@link Kind#TIMEOUT} and {@code timedOut} when none does in time.
     */
    CompletableFuture<Void> led(String name, String timedOut) {
        SharedDefinitions shared = definitions;
        QueueHomed record = remoteQueues.get(name);
        if (shared == null || record == null || !shared.replicated(vhost.name(), record)) {
            return CompletableFuture.completedFuture(null);
        }
        return timedOut(shared.whenLed(vhost.name(), record), timedOut);
    }

    /** Waits for a change appended to the shared definitions; without a majority, RabbitMQ's {@code timedOut}. */
    static void await(CompletableFuture<Void> appended, String timedOut) {
        Futures.await(timedOut(appended, timedOut));
    }

    /** {@code appended}, failing with {@link Kind#TIMEOUT} and RabbitMQ's {@code text} when it timed out. */
    static <T> CompletableFuture<T> timedOut(CompletableFuture<T> appended, String text) {
        return appended.exceptionallyCompose(failure -> {
            Throwable cause = failure instanceof CompletionException && failure.getCause() != null
                ? failure.getCause() : failure;
            return CompletableFuture.failedFuture(cause instanceof TimeoutException
                ? new BrokerException(Kind.TIMEOUT, text) : cause);
        });
    }

    /**
     * Applies a committed change: on every node, in the log's order, on the thread that applies it. Idempotent, as a
     * log replayed after a restart applies its entries again: a declaration of what exists, or a deletion of what
     * does not, changes nothing. A binding whose ends are not both here is left out.
     */
    void apply(VhostChange change) {
        List<VhostChange> local = new ArrayList<>(0);
        QueueHomed homedHere = null;
        Queue deletedHere = null;
        Queue replicaGone = null;
        synchronized (vhost.writeLock) {
            if (change instanceof QueueHomed homed) {
                // a replicated queue's live queue is its group leader's ({@link #live}): a record on every node
                if (definitions.replicated(vhost.name(), homed) || !homed.node().equals(node())) {
                    QueueHomed before = remoteQueues.put(homed.name(), homed);
                    if (before != null && !before.equals(homed)) {
                        dropProxy(homed.name());
                    }
                } else if (vhost.queue(homed.name()) != null) {
                    // recovered from this node's store at start: this record's queue, or a later one's
                    if (incarnations.getOrDefault(homed.name(), 0L) == homed.incarnation()) {
                        queues.add(homed.name());
                    }
                } else {
                    homedHere = homed;
                }
            } else if (change instanceof QueueDeleted deleted) {
                String queue = deleted.name();
                QueueHomed record = remoteQueues.remove(queue);
                if (record != null) {
                    dropProxy(queue);
                    if (definitions.replicated(vhost.name(), record)) {
                        Queue live = vhost.queue(queue);
                        if (live != null) {
                            vhost.unregister(live);
                            replicaGone = live;
                        }
                        definitions.replicaDeleted(vhost.name(), record);
                    }
                    vhost.removeBindingsTo(Destination.queue(queue), local);
                } else if (queues.remove(queue)) {
                    deletedHere = vhost.queue(queue);
                }
            } else if (change instanceof ExchangeDeclared declared) {
                Exchange exchange = declared.exchange();
                if (vhost.addExchange(exchange)) {
                    exchanges.add(exchange.name());
                    List<Binding> awaiting = awaitingExchange.remove(exchange.name());
                    if (awaiting != null) {
                        vhost.recoverAwaiting(awaiting);
                    }
                }
            } else if (change instanceof ExchangeDeleted deleted) {
                String exchange = deleted.name();
                awaitingExchange.remove(exchange);
                if (exchanges.remove(exchange)) {
                    vhost.removeExchange(exchange, local);
                }
                // this node's store forgets its bindings from or to it (to a local queue)
                local.add(deleted);
            } else if (change instanceof BindingAdded added) {
                if (binding(added.binding())) {
                    vhost.addBinding(added.binding());
                }
            } else if (change instanceof BindingRemoved removed) {
                vhost.removeBinding(removed.binding(), local);
            } else if (change instanceof PolicySet set) {
                policies.add(policyKey(set.policy().name(), set.operator()));
                vhost.putPolicy(set.policy(), set.operator());
            } else if (change instanceof PolicyCleared cleared) {
                policies.remove(policyKey(cleared.name(), cleared.operator()));
                vhost.dropPolicy(cleared.name(), cleared.operator());
                local.add(cleared); // nor does this node's store keep one of that name from before it joined
            }
            if (!local.isEmpty()) {
                vhost.store.changed(local); // this node's own part; the log has the rest
            }
        }
        vhost.announceDeletions();
        if (replicaGone != null) {
            replicaGone.delete();
        }
        if (homedHere != null) {
            try {
                createHomed(homedHere);
            } catch (RuntimeException e) {
                // the log goes on: the record stays, without its queue here, as for a queue whose node failed
                LOG.log(System.Logger.Level.ERROR, "cannot make queue '" + homedHere.name() + "' in vhost '"
                    + vhost.name() + "', homed on this node", e);
            }
        }
        if (change instanceof QueueDeleted deleted) {
            CompletableFuture<Integer> count = deletedHere == null ? null : vhost.deleteLocal(deletedHere, false);
            deletions.forEach((queue, asked) -> {
                if (queue.name().equals(deleted.name())) {
                    if (count == null) {
                        asked.complete(0);
                    } else {
                        count.whenComplete((n, failure) -> asked.complete(failure == null ? n : 0));
                    }
                }
            });
        }
    }

    /**
     * Makes the queue a committed record homes on this node: durable in this node's store (its id there) before it
     * is routable, as on a single node. Waits for the disk, on the log's thread.
     */
    private void createHomed(QueueHomed homed) {
        QueueDeclaration declaration = homed.declaration();
        Queue queue;
        CompletableFuture<Void> saved;
        synchronized (vhost.writeLock) {
            queue = vhost.createQueue(declaration);
            saved = vhost.store.queueDeclared(declaration, homed.incarnation());
        }
        try {
            Futures.await(saved);
        } catch (RuntimeException e) {
            queue.delete();
            throw e;
        }
        synchronized (vhost.writeLock) {
            vhost.register(queue, null);
            incarnations.put(homed.name(), homed.incarnation());
            queues.add(homed.name());
        }
    }

    /**
     * Makes the shared definitions here exactly {@code definitions} (changes that rebuild them, as a snapshot of the
     * log holds them): shared exchanges and bindings they lack go, the others are {@link #apply applied}.
     */
    void replace(List<VhostChange> definitions) {
        Set<String> keptExchanges = new HashSet<>();
        Set<Binding> keptBindings = new HashSet<>();
        Set<String> keptQueues = new HashSet<>();
        Set<String> keptPolicies = new HashSet<>();
        for (VhostChange change : definitions) {
            if (change instanceof PolicySet set) {
                keptPolicies.add(policyKey(set.policy().name(), set.operator()));
            } else if (change instanceof QueueHomed homed) {
                keptQueues.add(homed.name());
            } else if (change instanceof ExchangeDeclared declared) {
                keptExchanges.add(declared.exchange().name());
            } else if (change instanceof BindingAdded added) {
                keptBindings.add(added.binding());
            }
        }
        List<VhostChange> gone = new ArrayList<>();
        synchronized (vhost.writeLock) {
            Set<String> queueRecords = new HashSet<>(queues);
            queueRecords.addAll(remoteQueues.keySet());
            for (String queue : queueRecords) {
                if (!keptQueues.contains(queue)) {
                    gone.add(new QueueDeleted(queue));
                }
            }
            for (String exchange : exchanges) {
                if (!keptExchanges.contains(exchange)) {
                    gone.add(new ExchangeDeleted(exchange));
                }
            }
            Set<String> sources = new HashSet<>(exchanges);
            for (Exchange exchange : vhost.exchanges()) {
                if (sharedEnd(exchange.name())) {
                    sources.add(exchange.name()); // the built-in ones
                }
            }
            for (String source : sources) {
                for (Binding binding : vhost.bindings().bindingsFrom(source)) {
                    if (binding(binding) && !keptBindings.contains(binding)) {
                        gone.add(new BindingRemoved(binding));
                    }
                }
            }
            for (String policy : policies) {
                if (!keptPolicies.contains(policy)) {
                    gone.add(new PolicyCleared(policy.substring(1), policy.charAt(0) == 'o'));
                }
            }
        }
        gone.forEach(this::apply);
        definitions.forEach(this::apply);
    }
}
