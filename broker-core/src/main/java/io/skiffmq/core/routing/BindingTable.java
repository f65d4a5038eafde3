package io.skiffmq.core.routing;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * All bindings of a virtual host, keyed by source exchange: looking up a fanout exchange's destinations is one
 * map read, a direct exchange's one more, whatever the number of bindings elsewhere. Immutable: a change returns
 * a new table that shares every other source's bindings; readers use whichever snapshot they hold, without locks.
 */
public final class BindingTable {
    public static final BindingTable EMPTY = new BindingTable(Map.of());

    private final Map<String, SourceBindings> bySource;

    private BindingTable(Map<String, SourceBindings> bySource) {
        this.bySource = bySource;
    }

    SourceBindings of(String source) {
        return bySource.getOrDefault(source, SourceBindings.EMPTY);
    }

    public boolean contains(Binding binding) {
        return of(binding.source()).bindings.contains(binding);
    }

    /** True when {@code source} has a binding as a source. */
    public boolean hasBindingsFrom(String source) {
        return bySource.containsKey(source);
    }

    /** Bindings whose source is {@code source}. */
    public List<Binding> bindingsFrom(String source) {
        return new ArrayList<>(of(source).bindings);
    }

    /** Every binding, for listing. */
    public List<Binding> all() {
        List<Binding> all = new ArrayList<>();
        bySource.values().forEach(s -> all.addAll(s.bindings));
        return all;
    }

    public BindingTable with(Binding binding) {
        return replace(binding.source(), of(binding.source()).with(binding));
    }

    /** With all of {@code added}: each source's bindings built once, however many are added to it. */
    public BindingTable withAll(java.util.Collection<Binding> added) {
        Map<String, java.util.LinkedHashSet<Binding>> bySourceAdded = new HashMap<>();
        for (Binding binding : added) {
            bySourceAdded.computeIfAbsent(binding.source(), s -> new java.util.LinkedHashSet<>(of(s).bindings))
                .add(binding);
        }
        if (bySourceAdded.isEmpty()) {
            return this;
        }
        Map<String, SourceBindings> copy = new HashMap<>(bySource);
        bySourceAdded.forEach((source, bindings) -> put(copy, source, new SourceBindings(bindings)));
        return new BindingTable(copy);
    }

    public BindingTable without(Binding binding) {
        return replace(binding.source(), of(binding.source()).without(binding));
    }

    /** Without any binding to {@code destination} (a deleted queue or exchange). */
    public BindingTable withoutDestination(Destination destination) {
        Map<String, SourceBindings> copy = null;
        for (Map.Entry<String, SourceBindings> e : bySource.entrySet()) {
            SourceBindings kept = e.getValue().withoutDestination(destination);
            if (kept != e.getValue()) {
                if (copy == null) {
                    copy = new HashMap<>(bySource);
                }
                put(copy, e.getKey(), kept);
            }
        }
        return copy == null ? this : new BindingTable(copy);
    }

    /** Without any binding from {@code source} (a deleted exchange). */
    public BindingTable withoutSource(String source) {
        return replace(source, SourceBindings.EMPTY);
    }

    private BindingTable replace(String source, SourceBindings bindings) {
        if (bindings == of(source)) {
            return this;
        }
        Map<String, SourceBindings> copy = new HashMap<>(bySource);
        put(copy, source, bindings);
        return new BindingTable(copy);
    }

    private static void put(Map<String, SourceBindings> map, String source, SourceBindings bindings) {
        if (bindings.bindings.isEmpty()) {
            map.remove(source);
        } else {
            map.put(source, bindings);
        }
    }
}
