package io.skiffmq.core.routing;

import java.util.function.BiConsumer;
import java.util.function.Consumer;

/**
 * An immutable hash map that shares structure between versions: a hash array mapped trie (Bagwell's HAMT, as in
 * Clojure's {@code PersistentHashMap}), 5 bits of the hash per level, each node a bitmap and a packed array of
 * entries and subnodes; keys whose whole hashes collide share a list node below the last level.
 *
 * <p>{@link #put} and {@link #remove} copy only the path to the key, at most 7 nodes of at most 32 slots, and share
 * the rest, so a change costs O(log<sub>32</sub> n) whatever the size; {@link #get} reads that path and allocates
 * nothing, nor does {@link #forEachKey}. This is what lets the binding table change one binding in a table of
 * 100,000 without copying the other 99,999, while routing reads a snapshot without locks.
 *
 * <p>Keys must have stable {@code hashCode} and {@code equals}; null keys and values are not allowed. Iteration order
 * follows the hashes, not insertion. Immutable; safe from any thread once published.
 */
final class HashTrie<K, V> {
    private static final int BITS = 5;
    private static final int MASK = (1 << BITS) - 1;
    private static final HashTrie<?, ?> EMPTY = new HashTrie<>(null);

    /**
     * A level of the trie. At shifts below 32: {@code bitmap} marks which of 32 hash slices are present, and
     * {@code array} holds, per present slice in order, a key and its value, or null and a subnode. At shift 32 and
     * beyond (the hash used up), a list node: {@code array} is key, value pairs, searched in turn.
     */
    private static final class Node {
        final int bitmap;
        final Object[] array;
        /** The entries in this subtree, for {@link #keyAt}. */
        final int size;

        Node(int bitmap, Object[] array, int size) {
            this.bitmap = bitmap;
            this.array = array;
            this.size = size;
        }
    }

    private final Node root;

    private HashTrie(Node root) {
        this.root = root;
    }

    @SuppressWarnings("unchecked")
    static <K, V> HashTrie<K, V> empty() {
        return (HashTrie<K, V>) EMPTY;
    }

    int size() {
        return root == null ? 0 : root.size;
    }

    boolean isEmpty() {
        return root == null;
    }

    boolean containsKey(Object key) {
        return get(key) != null;
    }

    /** The value for {@code key}, or null. */
    @SuppressWarnings("unchecked")
    V get(Object key) {
        int hash = hash(key.hashCode());
        Node node = root;
        for (int shift = 0; node != null; shift += BITS) {
            Object[] array = node.array;
            if (shift >= Integer.SIZE) {
                for (int i = 0; i < array.length; i += 2) {
                    if (key.equals(array[i])) {
                        return (V) array[i + 1];
                    }
                }
                return null;
            }
            int bit = 1 << ((hash >>> shift) & MASK);
            if ((node.bitmap & bit) == 0) {
                return null;
            }
            int index = 2 * Integer.bitCount(node.bitmap & (bit - 1));
            Object k = array[index];
            if (k == null) {
                node = (Node) array[index + 1];
            } else {
                return key.equals(k) ? (V) array[index + 1] : null;
            }
        }
        return null;
    }

    /**
     * As {@link #get}, for a map whose keys are Strings: {@code equals} is then String's own, inlined, rather than a
     * call through whatever key types share {@link #get}'s profile (bindings, destinations). For routing lookups.
     */
    @SuppressWarnings("unchecked")
    V getString(String key) {
        int hash = hash(key.hashCode());
        Node node = root;
        for (int shift = 0; node != null; shift += BITS) {
            Object[] array = node.array;
            if (shift >= Integer.SIZE) {
                for (int i = 0; i < array.length; i += 2) {
                    if (key.equals(array[i])) {
                        return (V) array[i + 1];
                    }
                }
                return null;
            }
            int bit = 1 << ((hash >>> shift) & MASK);
            if ((node.bitmap & bit) == 0) {
                return null;
            }
            int index = 2 * Integer.bitCount(node.bitmap & (bit - 1));
            Object k = array[index];
            if (k == null) {
                node = (Node) array[index + 1];
            } else {
                return key.equals(k) ? (V) array[index + 1] : null;
            }
        }
        return null;
    }

    /**
     * The value whose key is the String {@code text.substring(from, to)}, without making that substring (for keys
     * that are Strings: a topic key's words).
     */
    @SuppressWarnings("unchecked")
    V getRegion(String text, int from, int to) {
        int h = 0;
        for (int i = from; i < to; i++) {
            h = 31 * h + text.charAt(i); // String.hashCode's formula
        }
        int hash = hash(h);
        int length = to - from;
        Node node = root;
        for (int shift = 0; node != null; shift += BITS) {
            Object[] array = node.array;
            if (shift >= Integer.SIZE) {
                for (int i = 0; i < array.length; i += 2) {
                    if (regionEquals(array[i], text, from, length)) {
                        return (V) array[i + 1];
                    }
                }
                return null;
            }
            int bit = 1 << ((hash >>> shift) & MASK);
            if ((node.bitmap & bit) == 0) {
                return null;
            }
            int index = 2 * Integer.bitCount(node.bitmap & (bit - 1));
            Object k = array[index];
            if (k == null) {
                node = (Node) array[index + 1];
            } else {
                return regionEquals(k, text, from, length) ? (V) array[index + 1] : null;
            }
        }
        return null;
    }

    private static boolean regionEquals(Object key, String text, int from, int length) {
        return key instanceof String s && s.length() == length && s.regionMatches(0, text, from, length);
    }

    /** This map with {@code key} mapped to {@code value}; this very map when it already was. */
    HashTrie<K, V> put(K key, V value) {
        Node next = put(root, 0, key, hash(key.hashCode()), value);
        return next == root ? this : new HashTrie<>(next);
    }

    /** This map without {@code key}; this very map when it had none. */
    HashTrie<K, V> remove(Object key) {
        if (root == null) {
            return this;
        }
        Node next = remove(root, 0, key, hash(key.hashCode()));
        return next == root ? this : next == null ? empty() : new HashTrie<>(next);
    }

    /** Calls {@code action} with each key; allocates nothing (beyond what {@code action} does). */
    @SuppressWarnings("unchecked")
    void forEachKey(Consumer<? super K> action) {
        if (root != null) {
            forEach(root, (Consumer<Object>) action, null);
        }
    }

    @SuppressWarnings("unchecked")
    void forEach(BiConsumer<? super K, ? super V> action) {
        if (root != null) {
            forEach(root, null, (BiConsumer<Object, Object>) action);
        }
    }

    /** The key at {@code index} (0 ≤ index < size) in iteration order: O(log n), for a pick at random. */
    @SuppressWarnings("unchecked")
    K keyAt(int index) {
        if (index < 0 || index >= size()) {
            throw new IndexOutOfBoundsException(index);
        }
        Node node = root;
        while (true) {
            Object[] array = node.array;
            for (int i = 0; i < array.length; i += 2) {
                if (array[i] != null) {
                    if (index == 0) {
                        return (K) array[i];
                    }
                    index--;
                } else {
                    Node child = (Node) array[i + 1];
                    if (index < child.size) {
                        node = child;
                        break;
                    }
                    index -= child.size;
                }
            }
        }
    }

    private static void forEach(Node node, Consumer<Object> keys, BiConsumer<Object, Object> entries) {
        Object[] array = node.array;
        for (int i = 0; i < array.length; i += 2) {
            Object k = array[i];
            if (k == null) {
                forEach((Node) array[i + 1], keys, entries);
            } else if (keys != null) {
                keys.accept(k);
            } else {
                entries.accept(k, array[i + 1]);
            }
        }
    }

    /** Spreads the high bits into the low ones, which pick the first levels' slots. */
    private static int hash(int h) {
        return h ^ (h >>> 16);
    }

    private static Node put(Node node, int shift, Object key, int hash, Object value) {
        if (node == null) {
            return shift >= Integer.SIZE ? new Node(0, new Object[] {key, value}, 1)
                : new Node(1 << ((hash >>> shift) & MASK), new Object[] {key, value}, 1);
        }
        Object[] array = node.array;
        if (shift >= Integer.SIZE) {
            for (int i = 0; i < array.length; i += 2) {
                if (key.equals(array[i])) {
                    return array[i + 1] == value ? node : new Node(0, with(array, i + 1, value), node.size);
                }
            }
            Object[] grown = java.util.Arrays.copyOf(array, array.length + 2);
            grown[array.length] = key;
            grown[array.length + 1] = value;
            return new Node(0, grown, node.size + 1);
        }
        int bit = 1 << ((hash >>> shift) & MASK);
        int index = 2 * Integer.bitCount(node.bitmap & (bit - 1));
        if ((node.bitmap & bit) == 0) {
            Object[] grown = new Object[array.length + 2];
            System.arraycopy(array, 0, grown, 0, index);
            grown[index] = key;
            grown[index + 1] = value;
            System.arraycopy(array, index, grown, index + 2, array.length - index);
            return new Node(node.bitmap | bit, grown, node.size + 1);
        }
        Object k = array[index];
        if (k == null) {
            Node child = (Node) array[index + 1];
            Node changed = put(child, shift + BITS, key, hash, value);
            return changed == child ? node
                : new Node(node.bitmap, with(array, index + 1, changed), node.size - child.size + changed.size);
        }
        if (key.equals(k)) {
            return array[index + 1] == value ? node : new Node(node.bitmap, with(array, index + 1, value), node.size);
        }
        // two keys in one slot: push both a level down
        Node pair = put(put(null, shift + BITS, k, hash(k.hashCode()), array[index + 1]), shift + BITS, key, hash,
            value);
        Object[] changed = with(array, index, null);
        changed[index + 1] = pair;
        return new Node(node.bitmap, changed, node.size + 1);
    }

    /** The node without {@code key}: the same node when it had none, null when nothing is left. */
    private static Node remove(Node node, int shift, Object key, int hash) {
        Object[] array = node.array;
        if (shift >= Integer.SIZE) {
            for (int i = 0; i < array.length; i += 2) {
                if (key.equals(array[i])) {
                    return array.length == 2 ? null : new Node(0, without(array, i), node.size - 1);
                }
            }
            return node;
        }
        int bit = 1 << ((hash >>> shift) & MASK);
        if ((node.bitmap & bit) == 0) {
            return node;
        }
        int index = 2 * Integer.bitCount(node.bitmap & (bit - 1));
        Object k = array[index];
        if (k != null) {
            if (!key.equals(k)) {
                return node;
            }
            return array.length == 2 ? null : new Node(node.bitmap & ~bit, without(array, index), node.size - 1);
        }
        Node child = (Node) array[index + 1];
        Node changed = remove(child, shift + BITS, key, hash);
        if (changed == child) {
            return node;
        }
        if (changed == null) {
            return array.length == 2 ? null : new Node(node.bitmap & ~bit, without(array, index), node.size - 1);
        }
        Object[] copy;
        if (changed.size == 1 && changed.array[0] != null) {
            // a subnode down to one entry folds back into this level, so the trie stays as shallow as it can
            copy = with(array, index, changed.array[0]);
            copy[index + 1] = changed.array[1];
        } else {
            copy = with(array, index + 1, changed);
        }
        return new Node(node.bitmap, copy, node.size - 1);
    }

    private static Object[] with(Object[] array, int index, Object value) {
        Object[] copy = array.clone();
        copy[index] = value;
        return copy;
    }

    private static Object[] without(Object[] array, int index) {
        Object[] shrunk = new Object[array.length - 2];
        System.arraycopy(array, 0, shrunk, 0, index);
        System.arraycopy(array, index + 2, shrunk, index, array.length - index - 2);
        return shrunk;
    }
}
