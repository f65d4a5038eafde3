package io.skiffmq.core.routing;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Every binding of one source exchange, with the indexes routing reads: all distinct destinations (fanout), the
 * destinations by key (direct), a topic trie, and the bindings themselves (headers). Immutable; a change builds a
 * new one for that source only.
 */
final class SourceBindings {
    static final SourceBindings EMPTY = new SourceBindings(Set.of());

    final Set<Binding> bindings;
    final Destination[] destinations;
    final Map<String, Destination[]> byKey;
    private volatile TopicTrie trie;

    SourceBindings(Set<Binding> bindings) {
        this.bindings = Collections.unmodifiableSet(bindings);
        Set<Destination> all = new LinkedHashSet<>();
        Map<String, Set<Destination>> keyed = new HashMap<>();
        for (Binding b : bindings) {
            all.add(b.destination());
            keyed.computeIfAbsent(b.key(), k -> new LinkedHashSet<>()).add(b.destination());
        }
        this.destinations = all.toArray(new Destination[0]);
        Map<String, Destination[]> index = new HashMap<>();
        keyed.forEach((k, v) -> index.put(k, v.toArray(new Destination[0])));
        this.byKey = index;
    }

    /** The topic trie, built on first use (only topic exchanges need it). */
    TopicTrie trie() {
        TopicTrie t = trie;
        if (t == null) {
            t = new TopicTrie(bindings);
            trie = t;
        }
        return t;
    }

    SourceBindings with(Binding binding) {
        Set<Binding> copy = new LinkedHashSet<>(bindings);
        return copy.add(binding) ? new SourceBindings(copy) : this;
    }

    SourceBindings without(Binding binding) {
        Set<Binding> copy = new LinkedHashSet<>(bindings);
        return copy.remove(binding) ? new SourceBindings(copy) : this;
    }

    SourceBindings withoutDestination(Destination destination) {
        List<Binding> kept = new ArrayList<>();
        for (Binding b : bindings) {
            if (!b.destination().equals(destination)) {
                kept.add(b);
            }
        }
        return kept.size() == bindings.size() ? this : new SourceBindings(new LinkedHashSet<>(kept));
    }
}
