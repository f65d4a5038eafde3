package io.skiffmq.core.routing;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * All bindings of a virtual host, keyed by source exchange, and by destination for deleting a queue or exchange:
 * looking up a fanout exchange's destinations is one trie read, a direct exchange's one more, whatever the number of
 * bindings elsewhere. Immutable and persistent: a change returns a new table that shares all but one path of each
 * {@link HashTrie} it touches, so adding or removing a binding costs O(log n) in the bindings of the table, and
 * deleting a queue or exchange O(k log n) in its own k bindings; readers use whichever snapshot they hold, without
 * locks.
 *
 * <p>Each binding is numbered as it is added, so listings come in binding order (super streams order partitions
 * bound without an order that way).
 */
public final class BindingTable {
    private static final Binding[] NONE = new Binding[0];
    public static final BindingTable EMPTY = new BindingTable(HashTrie.empty(), HashTrie.empty(), 0);

    private final HashTrie<String, SourceBindings> bySource;
    /** Every binding to each destination, in binding order: a queue usually has one or two. */
    private final HashTrie<Destination, Binding[]> byDestination;
    private final long nextSequence;

    private BindingTable(HashTrie<String, SourceBindings> bySource, HashTrie<Destination, Binding[]> byDestination,
            long nextSequence) {
        this.bySource = bySource;
        this.byDestination = byDestination;
        this.nextSequence = nextSequence;
    }

    SourceBindings of(String source) {
        SourceBindings bindings = bySource.getString(source);
        return bindings == null ? SourceBindings.EMPTY : bindings;
    }

    private Binding[] to(Destination destination) {
        Binding[] bindings = byDestination.get(destination);
        return bindings == null ? NONE : bindings;
    }

    public boolean contains(Binding binding) {
        return of(binding.source()).bindings.containsKey(binding);
    }

    /** True when {@code source} has a binding as a source. */
    public boolean hasBindingsFrom(String source) {
        return bySource.containsKey(source);
    }

    /** Bindings whose source is {@code source}, in binding order. */
    public List<Binding> bindingsFrom(String source) {
        return inOrder(of(source).bindings);
    }

    /** Bindings whose destination is {@code destination}, in binding order. */
    public List<Binding> bindingsTo(Destination destination) {
        return List.of(to(destination));
    }

    /** Every binding, in binding order, for listing. */
    public List<Binding> all() {
        List<Map.Entry<Binding, Long>> numbered = new ArrayList<>();
        bySource.forEach((source, bindings) -> bindings.bindings.forEach((b, n) -> numbered.add(Map.entry(b, n))));
        return sorted(numbered);
    }

    private static List<Binding> inOrder(HashTrie<Binding, Long> bindings) {
        List<Map.Entry<Binding, Long>> numbered = new ArrayList<>(bindings.size());
        bindings.forEach((b, n) -> numbered.add(Map.entry(b, n)));
        return sorted(numbered);
    }

    private static List<Binding> sorted(List<Map.Entry<Binding, Long>> numbered) {
        numbered.sort(Map.Entry.comparingByValue(Comparator.naturalOrder()));
        List<Binding> list = new ArrayList<>(numbered.size());
        numbered.forEach(e -> list.add(e.getKey()));
        return list;
    }

    public BindingTable with(Binding binding) {
        SourceBindings before = of(binding.source());
        SourceBindings after = before.with(binding, nextSequence);
        if (after == before) {
            return this;
        }
        Binding[] to = to(binding.destination());
        Binding[] grown = Arrays.copyOf(to, to.length + 1);
        grown[to.length] = binding;
        return new BindingTable(bySource.put(binding.source(), after),
            byDestination.put(binding.destination(), grown), nextSequence + 1);
    }

    /** With all of {@code added}, numbered in their order. */
    public BindingTable withAll(Collection<Binding> added) {
        BindingTable table = this;
        for (Binding binding : added) {
            table = table.with(binding);
        }
        return table;
    }

    public BindingTable without(Binding binding) {
        SourceBindings before = of(binding.source());
        Binding[] to = to(binding.destination());
        SourceBindings after = before.without(binding, sameKeyElsewhere(binding, to));
        if (after == before) {
            return this;
        }
        return new BindingTable(
            after.isEmpty() ? bySource.remove(binding.source()) : bySource.put(binding.source(), after),
            to.length == 1 ? byDestination.remove(binding.destination())
                : byDestination.put(binding.destination(), minus(to, binding)), nextSequence);
    }

    /** True when another binding in {@code toDestination} has {@code binding}'s source and key (other arguments). */
    private static boolean sameKeyElsewhere(Binding binding, Binding[] toDestination) {
        for (Binding other : toDestination) {
            if (!other.equals(binding) && other.source().equals(binding.source())
                    && other.key().equals(binding.key())) {
                return true;
            }
        }
        return false;
    }

    /**
     * Without any binding to {@code destination} (a deleted queue or exchange): O(k log n) for its k bindings. The
     * destination's own list goes at once, not one binding at a time, which would copy it k times.
     */
    public BindingTable withoutDestination(Destination destination) {
        Binding[] to = to(destination);
        if (to.length == 0) {
            return this;
        }
        // how many of the destination's bindings each source has under each key: the destination leaves that key
        // of the source's index with the last of them
        Map<Map.Entry<String, String>, int[]> underKey = new HashMap<>();
        for (Binding binding : to) {
            underKey.computeIfAbsent(Map.entry(binding.source(), binding.key()), k -> new int[1])[0]++;
        }
        HashTrie<String, SourceBindings> sources = bySource;
        for (Binding binding : to) {
            SourceBindings before = sources.getString(binding.source());
            boolean keyStays = --underKey.get(Map.entry(binding.source(), binding.key()))[0] > 0;
            SourceBindings after = before.without(binding, keyStays);
            sources = after.isEmpty() ? sources.remove(binding.source()) : sources.put(binding.source(), after);
        }
        return new BindingTable(sources, byDestination.remove(destination), nextSequence);
    }

    /**
     * Without any binding from {@code source} (a deleted exchange): O(k log n) for its k bindings, each destination's
     * list filtered once.
     */
    public BindingTable withoutSource(String source) {
        SourceBindings removed = bySource.get(source);
        if (removed == null) {
            return this;
        }
        Map<Destination, Set<Binding>> gone = new HashMap<>();
        removed.bindings.forEach((b, n) -> gone.computeIfAbsent(b.destination(), d -> new HashSet<>()).add(b));
        HashTrie<Destination, Binding[]> to = byDestination;
        for (Map.Entry<Destination, Set<Binding>> each : gone.entrySet()) {
            Binding[] bindings = to.get(each.getKey());
            Binding[] kept = Arrays.stream(bindings).filter(b -> !each.getValue().contains(b)).toArray(Binding[]::new);
            to = kept.length == 0 ? to.remove(each.getKey()) : to.put(each.getKey(), kept);
        }
        return new BindingTable(bySource.remove(source), to, nextSequence);
    }

    private static Binding[] minus(Binding[] bindings, Binding binding) {
        Binding[] shrunk = new Binding[bindings.length - 1];
        int j = 0;
        for (Binding each : bindings) {
            if (!each.equals(binding)) {
                shrunk[j++] = each;
            }
        }
        return shrunk;
    }
}
