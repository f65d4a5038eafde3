package io.skiffmq.core.routing;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

/**
 * The topic bindings of one exchange as a trie of words, with RabbitMQ's semantics: keys are {@code .}-separated
 * words, {@code *} matches exactly one word, {@code #} zero or more; the empty key is zero words (so it matches
 * only the empty key, and {@code #}). Immutable once built; safe from any thread.
 */
final class TopicTrie {
    private static final class Node {
        final Map<String, Node> children = new HashMap<>();
        Node star;
        Node hash;
        final List<Destination> destinations = new ArrayList<>(1);
    }

    private final Node root = new Node();

    TopicTrie(Iterable<Binding> bindings) {
        for (Binding binding : bindings) {
            Node node = root;
            for (String word : words(binding.key())) {
                node = switch (word) {
                    case "*" -> node.star == null ? (node.star = new Node()) : node.star;
                    case "#" -> node.hash == null ? (node.hash = new Node()) : node.hash;
                    default -> node.children.computeIfAbsent(word, w -> new Node());
                };
            }
            if (!node.destinations.contains(binding.destination())) {
                node.destinations.add(binding.destination());
            }
        }
    }

    static String[] words(String key) {
        return key.isEmpty() ? new String[0] : key.split("\\.", -1);
    }

    /** Calls {@code out} with each destination whose binding key matches {@code routingKey} (maybe repeatedly). */
    void match(String routingKey, Consumer<Destination> out) {
        match(root, words(routingKey), 0, out);
    }

    private static void match(Node node, String[] words, int index, Consumer<Destination> out) {
        if (node.hash != null) {
            // '#' takes zero or more of the remaining words
            for (int next = index; next <= words.length; next++) {
                match(node.hash, words, next, out);
            }
        }
        if (index == words.length) {
            node.destinations.forEach(out);
            return;
        }
        Node child = node.children.get(words[index]);
        if (child != null) {
            match(child, words, index + 1, out);
        }
        if (node.star != null) {
            match(node.star, words, index + 1, out);
        }
    }
}
