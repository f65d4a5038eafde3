package io.skiffmq.core.routing;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;
import java.util.Map;

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
        SourceBindings after = before.without(binding, to);
        if (after == before) {
            return this;
        }
        return new BindingTable(
            after.isEmpty() ? bySource.remove(binding.source()) : bySource.put(binding.source(), after),
            to.length == 1 ? byDestination.remove(binding.destination())
                : byDestination.put(binding.destination(), minus(to, binding)), nextSequence);
    }

    /** Without any binding to {@code destination} (a deleted queue or exchange): O(k log n) for its k bindings. */
    public BindingTable withoutDestination(Destination destination) {
        BindingTable table = this;
        for (Binding binding : to(destination)) {
            table = table.without(binding);
        }
        return table;
    }

    /** Without any binding from {@code source} (a deleted exchange): O(k log n) for its k bindings. */
    public BindingTable withoutSource(String source) {
        SourceBindings removed = bySource.get(source);
        if (removed == null) {
            return this;
        }
        HashTrie<Destination, Binding[]> to = byDestination;
        for (Binding b : inOrder(removed.bindings)) {
            Binding[] bindings = to.get(b.destination());
            to = bindings.length == 1 ? to.remove(b.destination()) : to.put(b.destination(), minus(bindings, b));
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
