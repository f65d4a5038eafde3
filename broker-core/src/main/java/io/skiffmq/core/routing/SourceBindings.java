package io.skiffmq.core.routing;

import java.util.Arrays;

/**
 * Every binding of one source exchange, with the indexes routing reads: the bindings themselves (headers), each
 * distinct destination with the number of bindings to it (fanout, x-local-random), the destinations by key
 * (direct), and a topic trie ({@link TopicTrie}, persistent too). Immutable.
 *
 * <p><b>Why these structures.</b> A change used to copy and re-index all of the source's bindings, so binding n
 * queues to {@code amq.direct} cost O(n²). Now the bindings, the destinations and the keys are each a
 * {@link HashTrie}, a persistent map: a change copies one path of at most 7 small nodes and shares the rest, so
 * adding or removing a binding costs O(log n) whatever the source holds. Under each key, the destinations are a
 * small array copied on write: direct routing is then one trie lookup and a loop over a plain array, allocating
 * nothing; the copy costs O(k) for the k destinations of that key, usually one. (A per-key array alone, inside a
 * copied {@code HashMap}, would still copy the map of keys; a trie of destinations under each key would make the
 * common one-destination read walk a node more.) Measured in {@code RoutingBenchmark}, see docs/benchmarks.md.
 *
 * <p>Bindings carry the sequence number the table gave them when added, so listings keep binding order.
 */
final class SourceBindings {
    static final SourceBindings EMPTY = new SourceBindings(HashTrie.empty(), HashTrie.empty(), HashTrie.empty(), null);

    /** Each binding, with its sequence number. */
    final HashTrie<Binding, Long> bindings;
    /** Each destination, with the number of this source's bindings to it. */
    final HashTrie<Destination, Integer> destinations;
    /** The distinct destinations of each key. */
    final HashTrie<String, Destination[]> byKey;
    private volatile TopicTrie trie;

    private SourceBindings(HashTrie<Binding, Long> bindings, HashTrie<Destination, Integer> destinations,
            HashTrie<String, Destination[]> byKey, TopicTrie trie) {
        this.bindings = bindings;
        this.destinations = destinations;
        this.byKey = byKey;
        this.trie = trie;
    }

    /**
     * The next version after a change to {@code key}'s destinations: the trie follows, path-copied, once one was
     * built (only topic exchanges build one), so a topic bind costs O(log n) too.
     */
    private SourceBindings next(HashTrie<Binding, Long> bindings, HashTrie<Destination, Integer> destinations,
            HashTrie<String, Destination[]> byKey, String key) {
        TopicTrie t = trie;
        if (t != null && byKey != this.byKey) {
            t = t.with(key, byKey.get(key));
        }
        return new SourceBindings(bindings, destinations, byKey, t);
    }

    boolean isEmpty() {
        return bindings.isEmpty();
    }

    /**
     * The topic trie, built on first use (only topic exchanges need it): O(n) in this source's bindings, once; each
     * later version updates it along one path.
     */
    TopicTrie trie() {
        TopicTrie t = trie;
        if (t == null) {
            t = TopicTrie.of(byKey);
            trie = t;
        }
        return t;
    }

    /**
     * With {@code binding}, numbered {@code sequence}; this very one when it is there already.
     */
    SourceBindings with(Binding binding, long sequence) {
        if (bindings.containsKey(binding)) {
            return this;
        }
        Destination d = binding.destination();
        Integer count = destinations.get(d);
        Destination[] keyed = byKey.get(binding.key());
        HashTrie<String, Destination[]> nextByKey = byKey;
        if (keyed == null) {
            nextByKey = byKey.put(binding.key(), new Destination[] {d});
        } else if (!contains(keyed, d)) {
            Destination[] grown = Arrays.copyOf(keyed, keyed.length + 1);
            grown[keyed.length] = d;
            nextByKey = byKey.put(binding.key(), grown);
        }
        return next(bindings.put(binding, sequence), destinations.put(d, count == null ? 1 : count + 1), nextByKey,
            binding.key());
    }

    /**
     * Without {@code binding}; this very one when it was not there.
     *
     * @param keyStays another binding of this source with the same key (and other arguments) still leads to the
     *        binding's destination, which so stays under that key
     */
    SourceBindings without(Binding binding, boolean keyStays) {
        if (!bindings.containsKey(binding)) {
            return this;
        }
        Destination d = binding.destination();
        int count = destinations.get(d);
        HashTrie<String, Destination[]> nextByKey = byKey;
        if (!keyStays) {
            Destination[] keyed = byKey.get(binding.key());
            nextByKey = keyed.length == 1 ? byKey.remove(binding.key()) : byKey.put(binding.key(), minus(keyed, d));
        }
        return next(bindings.remove(binding), count == 1 ? destinations.remove(d) : destinations.put(d, count - 1),
            nextByKey, binding.key());
    }

    private static boolean contains(Destination[] array, Destination d) {
        for (Destination each : array) {
            if (each.equals(d)) {
                return true;
            }
        }
        return false;
    }

    private static Destination[] minus(Destination[] array, Destination d) {
        Destination[] shrunk = new Destination[array.length - 1];
        int j = 0;
        for (Destination each : array) {
            if (!each.equals(d)) {
                shrunk[j++] = each;
            }
        }
        return shrunk;
    }
}
