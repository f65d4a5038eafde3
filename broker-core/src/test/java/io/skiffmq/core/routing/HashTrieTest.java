package io.skiffmq.core.routing;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The persistent map against {@link HashMap}, old versions left intact, and a change's cost independent of size. */
class HashTrieTest {

    /** A key whose hash is chosen, so that whole-hash collisions happen; counts the calls a lookup makes. */
    record Key(int hash, int id) {
        static int calls;

        @Override
        public int hashCode() {
            calls++;
            return hash;
        }

        @Override
        public boolean equals(Object o) {
            calls++;
            return o instanceof Key k && k.hash == hash && k.id == id;
        }
    }

    @Test
    void randomChangesMatchAHashMapAndLeaveEveryOlderVersionAsItWas() {
        Random random = new Random(30);
        HashTrie<Key, Integer> trie = HashTrie.empty();
        Map<Key, Integer> reference = new HashMap<>();
        List<HashTrie<Key, Integer>> versions = new ArrayList<>();
        List<Map<Key, Integer>> expected = new ArrayList<>();
        for (int step = 0; step < 20_000; step++) {
            // few distinct hashes in part of the key space: collisions at every level, and whole-hash ones
            int hash = random.nextBoolean() ? random.nextInt(1 << 20) : random.nextInt(8) * 0x01010101;
            Key key = new Key(hash, random.nextInt(3));
            if (random.nextInt(3) == 0) {
                trie = trie.remove(key);
                reference.remove(key);
            } else {
                int value = random.nextInt(5);
                trie = trie.put(key, value);
                reference.put(key, value);
            }
            if (step % 1000 == 0) {
                versions.add(trie);
                expected.add(new HashMap<>(reference));
            }
        }
        assertSame(trie, reference);
        for (int i = 0; i < versions.size(); i++) {
            assertSame(versions.get(i), expected.get(i));
        }
        // down to nothing again
        for (Key key : new ArrayList<>(reference.keySet())) {
            trie = trie.remove(key);
        }
        assertThat(trie.isEmpty()).isTrue();
        assertThat(trie.size()).isZero();
    }

    private static void assertSame(HashTrie<Key, Integer> trie, Map<Key, Integer> reference) {
        assertThat(trie.size()).isEqualTo(reference.size());
        Map<Key, Integer> seen = new HashMap<>();
        trie.forEach((k, v) -> assertThat(seen.put(k, v)).isNull());
        assertThat(seen).isEqualTo(reference);
        for (Map.Entry<Key, Integer> e : reference.entrySet()) {
            assertThat(trie.get(e.getKey())).isEqualTo(e.getValue());
        }
        assertThat(trie.get(new Key(7, 99))).isNull();
        Set<Key> byIndex = new HashSet<>();
        for (int i = 0; i < trie.size(); i++) {
            byIndex.add(trie.keyAt(i));
        }
        assertThat(byIndex).isEqualTo(reference.keySet());
    }

    @Test
    void puttingTheSameValueOrRemovingWhatIsNotThereIsTheSameMap() {
        HashTrie<String, String> trie = HashTrie.<String, String>empty().put("a", "1");
        assertThat(trie.put("a", "1")).isSameAs(trie);
        assertThat(trie.remove("b")).isSameAs(trie);
        assertThat(trie.put("a", "2").get("a")).isEqualTo("2");
        assertThat(trie.get("a")).isEqualTo("1");
    }

    @Test
    void findsAStringKeyByARegionOfAnotherString() {
        HashTrie<String, Integer> trie = HashTrie.empty();
        for (int i = 0; i < 1000; i++) {
            trie = trie.put("w" + i, i);
        }
        trie = trie.put("", -1);
        String text = "x.w517.w9.";
        assertThat(trie.getRegion(text, 2, 6)).isEqualTo(517);
        assertThat(trie.getRegion(text, 7, 9)).isEqualTo(9);
        assertThat(trie.getRegion(text, 2, 5)).isEqualTo(51);
        assertThat(trie.getRegion(text, 10, 10)).isEqualTo(-1);
        assertThat(trie.getRegion(text, 0, 1)).isNull();
    }

    /** A copy-on-write map would look at every key on each change; this one looks at one path. */
    @Test
    void aChangeToAMapOfAHundredThousandLooksAtAFewKeysOnly() {
        HashTrie<Key, Integer> trie = HashTrie.empty();
        for (int i = 0; i < 100_000; i++) {
            trie = trie.put(new Key(i * 0x9E3779B9, 0), i);
        }
        Key.calls = 0;
        HashTrie<Key, Integer> added = trie.put(new Key(-1, 1), 1);
        HashTrie<Key, Integer> removed = added.remove(new Key(5 * 0x9E3779B9, 0));
        assertThat(added.get(new Key(-1, 1))).isEqualTo(1);
        assertThat(removed.get(new Key(5 * 0x9E3779B9, 0))).isNull();
        assertThat(Key.calls).isLessThan(50);
        assertThat(trie.size()).isEqualTo(100_000);
        assertThat(removed.size()).isEqualTo(100_000);
    }
}
