package io.skiffmq.core.routing;

import java.util.function.Consumer;

/**
 * The topic bindings of one exchange as a trie of words, with RabbitMQ's semantics: keys are {@code .}-separated
 * words, {@code *} matches exactly one word, {@code #} zero or more; the empty key is zero words (so it matches
 * only the empty key, and {@code #}). The node at a binding key's path holds that key's distinct destinations.
 *
 * <p>Immutable and persistent, as the rest of the binding table: {@link #with} copies the path of one key (its words,
 * each a {@link HashTrie} path) and shares the rest, so a topic bind or unbind costs O(words × log n) once the trie
 * exists. Matching allocates nothing: it walks the routing key by word offsets rather than splitting it, and finds a
 * word's child through {@link HashTrie#getRegion} rather than a substring. Safe from any thread.
 */
final class TopicTrie {
    private static final Destination[] NONE = new Destination[0];
    static final TopicTrie EMPTY = new TopicTrie(new Node(HashTrie.empty(), null, null, NONE));

    private record Node(HashTrie<String, Node> children, Node star, Node hash, Destination[] destinations) {
        boolean isEmpty() {
            return children.isEmpty() && star == null && hash == null && destinations.length == 0;
        }
    }

    private final Node root;

    private TopicTrie(Node root) {
        this.root = root;
    }

    /** The trie of {@code byKey}, each binding key with its destinations: O(n) (when first needed). */
    static TopicTrie of(HashTrie<String, Destination[]> byKey) {
        TopicTrie[] trie = {EMPTY};
        byKey.forEach((key, destinations) -> trie[0] = trie[0].with(key, destinations));
        return trie[0];
    }

    /** This trie with {@code destinations} (null or empty for none) as the binding key {@code key}'s. */
    TopicTrie with(String key, Destination[] destinations) {
        Node changed = with(root, words(key), 0, destinations == null ? NONE : destinations);
        return new TopicTrie(changed == null ? EMPTY.root : changed);
    }

    /** The node with the path from {@code words[index]} on leading to {@code destinations}; null when left empty. */
    private static Node with(Node node, String[] words, int index, Destination[] destinations) {
        if (node == null) {
            node = EMPTY.root;
        }
        Node changed;
        if (index == words.length) {
            changed = new Node(node.children, node.star, node.hash, destinations);
        } else {
            String word = words[index];
            switch (word) {
                case "*" -> changed = new Node(node.children, with(node.star, words, index + 1, destinations), node.hash,
                    node.destinations);
                case "#" -> changed = new Node(node.children, node.star, with(node.hash, words, index + 1, destinations),
                    node.destinations);
                default -> {
                    Node child = with(node.children.get(word), words, index + 1, destinations);
                    changed = new Node(child == null ? node.children.remove(word) : node.children.put(word, child),
                        node.star, node.hash, node.destinations);
                }
            }
        }
        return changed.isEmpty() ? null : changed;
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
