package io.skiffmq.core.routing;

import java.util.Arrays;
import java.util.function.Consumer;

/**
 * The topic bindings of one exchange as a trie of words, with RabbitMQ's semantics: keys are {@code .}-separated
 * words, {@code *} matches exactly one word, {@code #} zero or more; the empty key is zero words (so it matches
 * only the empty key, and {@code #}). Immutable once built; safe from any thread.
 *
 * <p>Matching allocates nothing: it walks the routing key by word offsets rather than splitting it, and finds a
 * word's child through {@link HashTrie#getRegion} rather than a substring.
 */
final class TopicTrie {
    private static final Destination[] NONE = new Destination[0];

    /** Mutable only while the constructor builds the trie. */
    private static final class Node {
        HashTrie<String, Node> children = HashTrie.empty();
        Node star;
        Node hash;
        Destination[] destinations = NONE;
    }

    private final Node root = new Node();

    TopicTrie(SourceBindings bindings) {
        bindings.bindings.forEachKey(this::add);
    }

    private void add(Binding binding) {
        Node node = root;
        for (String word : words(binding.key())) {
            node = switch (word) {
                case "*" -> node.star == null ? (node.star = new Node()) : node.star;
                case "#" -> node.hash == null ? (node.hash = new Node()) : node.hash;
                default -> {
                    Node child = node.children.get(word);
                    if (child == null) {
                        child = new Node();
                        node.children = node.children.put(word, child);
                    }
                    yield child;
                }
            };
        }
        if (!Arrays.asList(node.destinations).contains(binding.destination())) {
            node.destinations = Arrays.copyOf(node.destinations, node.destinations.length + 1);
            node.destinations[node.destinations.length - 1] = binding.destination();
        }
    }

    static String[] words(String key) {
        return key.isEmpty() ? new String[0] : key.split("\\.", -1);
    }

    /** Calls {@code out} with each destination whose binding key matches {@code routingKey} (maybe repeatedly). */
    void match(String routingKey, Consumer<Destination> out) {
        match(root, routingKey, routingKey.isEmpty() ? 1 : 0, out);
    }

    /**
     * @param start where the next word of {@code key} starts; past the end ({@code > key.length()}) when no word
     *        is left (so {@code "a."} is the words "a" and "", and {@code ""} none)
     */
    private static void match(Node node, String key, int start, Consumer<Destination> out) {
        int length = key.length();
        if (node.hash != null) {
            // '#' takes zero or more of the remaining words
            for (int next = start; ; next = next(key, next)) {
                match(node.hash, key, next, out);
                if (next > length) {
                    break;
                }
            }
        }
        if (start > length) {
            for (Destination d : node.destinations) {
                out.accept(d);
            }
            return;
        }
        int after = next(key, start);
        Node child = node.children.getRegion(key, start, after - 1);
        if (child != null) {
            match(child, key, after, out);
        }
        if (node.star != null) {
            match(node.star, key, after, out);
        }
    }

    /** Where the word after the one at {@code start} starts: one past the dot that ends it, or past the end. */
    private static int next(String key, int start) {
        int dot = key.indexOf('.', start);
        return (dot < 0 ? key.length() : dot) + 1;
    }
}
