package io.skiffmq.store.definitions;

import io.skiffmq.core.Exchange;
import io.skiffmq.core.definitions.DefinitionChange;
import io.skiffmq.core.definitions.DefinitionChange.BindingAdded;
import io.skiffmq.core.definitions.DefinitionChange.BindingRemoved;
import io.skiffmq.core.definitions.DefinitionChange.ExchangeDeclared;
import io.skiffmq.core.definitions.DefinitionChange.ExchangeDeleted;
import io.skiffmq.core.definitions.DefinitionChange.NextQueueId;
import io.skiffmq.core.definitions.DefinitionChange.PolicyCleared;
import io.skiffmq.core.definitions.DefinitionChange.PolicySet;
import io.skiffmq.core.definitions.DefinitionChange.QueueDeclared;
import io.skiffmq.core.definitions.DefinitionChange.QueueDeleted;
import io.skiffmq.core.definitions.DefinitionChange.QueueHomed;
import io.skiffmq.core.routing.Binding;
import io.skiffmq.core.routing.Destination;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Consumer;

/**
 * A virtual host's durable definitions as {@link DefinitionChange.VhostChange}s build them: exchanges, queues
 * (with their ids), bindings, policies and operator policies, and the next queue id. Bindings are indexed by
 * source and by destination, so a deletion takes its bindings along in time proportional to those alone. Owned
 * by one thread at a time (see {@link ChangeLog}).
 */
public final class VhostReplica implements ChangeLog.Replica {
    private final Map<String, Exchange> exchanges = new LinkedHashMap<>();
    private final Map<String, QueueDeclared> queues = new LinkedHashMap<>();
    /** In a cluster's shared definitions: the durable queues and their home nodes. */
    private final Map<String, QueueHomed> homed = new LinkedHashMap<>();
    private final Map<String, Set<Binding>> bySource = new LinkedHashMap<>();
    private final Map<Destination, Set<Binding>> byDestination = new HashMap<>();
    private long nextQueueId = 1;
    /** Policies and operator policies by name, each as its last {@link PolicySet}. */
    private final Map<String, PolicySet> policies = new LinkedHashMap<>();
    private final Map<String, PolicySet> operatorPolicies = new LinkedHashMap<>();

    @Override
    public void apply(DefinitionChange change) {
        if (change instanceof QueueDeclared q) {
            queues.put(q.name(), q);
            nextQueueId = Math.max(nextQueueId, q.id() + 1);
        } else if (change instanceof QueueHomed q) {
            homed.put(q.name(), q);
        } else if (change instanceof QueueDeleted q) {
            queues.remove(q.name());
            homed.remove(q.name());
            removeAll(byDestination.get(Destination.queue(q.name())));
        } else if (change instanceof ExchangeDeclared e) {
            exchanges.put(e.exchange().name(), e.exchange());
        } else if (change instanceof ExchangeDeleted e) {
            exchanges.remove(e.name());
            removeAll(bySource.get(e.name()));
            removeAll(byDestination.get(Destination.exchange(e.name())));
        } else if (change instanceof BindingAdded b) {
            add(b.binding());
        } else if (change instanceof BindingRemoved b) {
            remove(b.binding());
        } else if (change instanceof NextQueueId n) {
            nextQueueId = Math.max(nextQueueId, n.next());
        } else if (change instanceof PolicySet p) {
            (p.operator() ? operatorPolicies : policies).put(p.policy().name(), p);
        } else if (change instanceof PolicyCleared p) {
            (p.operator() ? operatorPolicies : policies).remove(p.name());
        } else {
            throw new IllegalArgumentException("not a virtual host's change: " + change);
        }
    }

    private void add(Binding binding) {
        bySource.computeIfAbsent(binding.source(), s -> new LinkedHashSet<>()).add(binding);
        byDestination.computeIfAbsent(binding.destination(), d -> new LinkedHashSet<>()).add(binding);
    }

    private void remove(Binding binding) {
        drop(bySource, binding.source(), binding);
        drop(byDestination, binding.destination(), binding);
    }

    private void removeAll(Collection<Binding> bindings) {
        if (bindings != null) {
            new ArrayList<>(bindings).forEach(this::remove);
        }
    }

    private static <K> void drop(Map<K, Set<Binding>> index, K key, Binding binding) {
        Set<Binding> set = index.get(key);
        if (set != null && set.remove(binding) && set.isEmpty()) {
            index.remove(key);
        }
    }

    @Override
    public void snapshot(Consumer<DefinitionChange> out) {
        out.accept(new NextQueueId(nextQueueId));
        exchanges.values().forEach(e -> out.accept(new ExchangeDeclared(e)));
        queues.values().forEach(out);
        homed.values().forEach(out);
        bySource.values().forEach(set -> set.forEach(b -> out.accept(new BindingAdded(b))));
        policies.values().forEach(out);
        operatorPolicies.values().forEach(out);
    }

    /** The policies, then the operator policies. */
    public List<PolicySet> policies() {
        List<PolicySet> all = new ArrayList<>(policies.values());
        all.addAll(operatorPolicies.values());
        return all;
    }

    public long nextQueueId() {
        return nextQueueId;
    }

    public Collection<Exchange> exchanges() {
        return exchanges.values();
    }

    public Collection<QueueDeclared> queues() {
        return queues.values();
    }

    public List<Binding> bindings() {
        List<Binding> all = new ArrayList<>();
        bySource.values().forEach(all::addAll);
        return all;
    }
}
