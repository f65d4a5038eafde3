package io.skiffmq.core.routing;

import static org.assertj.core.api.Assertions.assertThat;

import io.skiffmq.core.Exchange;
import java.lang.management.ManagementFactory;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import org.junit.jupiter.api.Test;

/**
 * The binding table on its own: what it holds and routes after adds and removes, that an older snapshot never sees a
 * later change, and that a change to a table of 100,000 bindings, and a route through it, cost what one binding
 * costs (measured as bytes allocated by this thread, so a copy of the table cannot pass).
 */
class BindingTableTest {
    private final Map<String, Exchange> exchanges = new HashMap<>();
    private final Router router = new Router();

    BindingTableTest() {
        for (Exchange e : List.of(new Exchange("d", Exchange.Type.DIRECT), new Exchange("f", Exchange.Type.FANOUT),
                new Exchange("t", Exchange.Type.TOPIC), new Exchange("h", Exchange.Type.HEADERS))) {
            exchanges.put(e.name(), e);
        }
    }

    private static Binding binding(String source, String queue, String key) {
        return new Binding(source, Destination.queue(queue), key, Map.of());
    }

    private List<String> route(BindingTable table, String exchange, String key) {
        return List.copyOf(router.route(table, exchanges::get, exchanges.get(exchange), key, Map::of));
    }

    @Test
    void addsRoutesAndListsInBindingOrder() {
        BindingTable table = BindingTable.EMPTY
            .with(binding("d", "q2", "k"))
            .with(binding("d", "q1", "k"))
            .with(binding("d", "q3", "other"))
            .with(binding("f", "q1", ""))
            .with(binding("t", "q3", "a.*"));
        assertThat(route(table, "d", "k")).containsExactly("q2", "q1");
        assertThat(route(table, "d", "other")).containsExactly("q3");
        assertThat(route(table, "d", "none")).isEmpty();
        assertThat(route(table, "f", "anything")).containsExactly("q1");
        assertThat(route(table, "t", "a.b")).containsExactly("q3");
        assertThat(table.bindingsFrom("d")).containsExactly(binding("d", "q2", "k"), binding("d", "q1", "k"),
            binding("d", "q3", "other"));
        assertThat(table.bindingsTo(Destination.queue("q1"))).containsExactly(binding("d", "q1", "k"),
            binding("f", "q1", ""));
        assertThat(table.all()).hasSize(5).startsWith(binding("d", "q2", "k")).endsWith(binding("t", "q3", "a.*"));
        assertThat(table.contains(binding("d", "q1", "k"))).isTrue();
        assertThat(table.contains(binding("d", "q1", "other"))).isFalse();
        assertThat(table.with(binding("d", "q1", "k"))).isSameAs(table);
        assertThat(table.without(binding("d", "q9", "k"))).isSameAs(table);
    }

    @Test
    void aDestinationStaysUnderItsKeyWhileAnyBindingWithThatKeyLeadsThere() {
        Binding plain = binding("d", "q", "k");
        Binding withArguments = new Binding("d", Destination.queue("q"), "k", Map.of("x", "y"));
        BindingTable both = BindingTable.EMPTY.with(plain).with(withArguments);
        assertThat(route(both, "d", "k")).containsExactly("q");
        assertThat(route(both.without(plain), "d", "k")).containsExactly("q");
        assertThat(route(both.without(withArguments), "d", "k")).containsExactly("q");
        BindingTable none = both.without(plain).without(withArguments);
        assertThat(route(none, "d", "k")).isEmpty();
        assertThat(none.hasBindingsFrom("d")).isFalse();
        assertThat(none.bindingsTo(Destination.queue("q"))).isEmpty();
        // fanout counts bindings to a destination the same way
        BindingTable fanout = BindingTable.EMPTY.with(binding("f", "q", "a")).with(binding("f", "q", "b"));
        assertThat(route(fanout, "f", "")).containsExactly("q");
        assertThat(route(fanout.without(binding("f", "q", "a")), "f", "")).containsExactly("q");
        assertThat(route(fanout.without(binding("f", "q", "a")).without(binding("f", "q", "b")), "f", "")).isEmpty();
    }

    @Test
    void removesEveryBindingToADestinationOrFromASource() {
        BindingTable table = BindingTable.EMPTY
            .with(binding("d", "q1", "k"))
            .with(binding("f", "q1", ""))
            .with(binding("d", "q2", "k"))
            .with(new Binding("f", Destination.exchange("d"), "", Map.of()));
        BindingTable withoutQ1 = table.withoutDestination(Destination.queue("q1"));
        assertThat(route(withoutQ1, "d", "k")).containsExactly("q2");
        assertThat(route(withoutQ1, "f", "k")).containsExactly("q2");
        assertThat(withoutQ1.bindingsTo(Destination.queue("q1"))).isEmpty();

        BindingTable withoutD = table.withoutSource("d").withoutDestination(Destination.exchange("d"));
        assertThat(withoutD.hasBindingsFrom("d")).isFalse();
        assertThat(route(withoutD, "f", "k")).containsExactly("q1");
        assertThat(withoutD.bindingsTo(Destination.queue("q2"))).isEmpty();
        assertThat(withoutD.bindingsTo(Destination.queue("q1"))).containsExactly(binding("f", "q1", ""));
        assertThat(withoutD.all()).containsExactly(binding("f", "q1", ""));
    }

    @Test
    void aSnapshotNeverSeesALaterChange() {
        BindingTable before = BindingTable.EMPTY.with(binding("d", "q1", "k")).with(binding("t", "q1", "#"));
        BindingTable after = before.with(binding("d", "q2", "k")).without(binding("d", "q1", "k"))
            .with(binding("t", "q2", "a")).withoutDestination(Destination.queue("q1"));
        assertThat(route(before, "d", "k")).containsExactly("q1");
        assertThat(route(before, "t", "a")).containsExactly("q1");
        assertThat(before.all()).containsExactly(binding("d", "q1", "k"), binding("t", "q1", "#"));
        assertThat(route(after, "d", "k")).containsExactly("q2");
        assertThat(route(after, "t", "a")).containsExactly("q2");
    }

    @Test
    void aTopicTrieOnceBuiltFollowsEachChangeAndOldSnapshotsKeepTheirs() {
        BindingTable table = BindingTable.EMPTY.with(binding("t", "q1", "a.*")).with(binding("t", "q2", "#"));
        assertThat(route(table, "t", "a.b")).containsExactlyInAnyOrder("q1", "q2"); // builds the trie
        BindingTable more = table.with(binding("t", "q3", "a.b")).with(binding("t", "q3", "*.b"));
        BindingTable less = more.without(binding("t", "q2", "#")).without(binding("t", "q3", "a.b"));
        assertThat(route(table, "t", "a.b")).containsExactlyInAnyOrder("q1", "q2");
        assertThat(route(more, "t", "a.b")).containsExactlyInAnyOrder("q1", "q2", "q3");
        assertThat(route(less, "t", "a.b")).containsExactlyInAnyOrder("q1", "q3");
        assertThat(route(less, "t", "x")).isEmpty();
        BindingTable none = less.without(binding("t", "q1", "a.*")).without(binding("t", "q3", "*.b"));
        assertThat(route(none, "t", "a.b")).isEmpty();
        assertThat(route(none.with(binding("t", "q4", "a.b")), "t", "a.b")).containsExactly("q4");
    }

    @Test
    void aChangeToAHundredThousandBindingsAllocatesWhatOneBindingNeeds() {
        BindingTable table = BindingTable.EMPTY;
        for (int i = 0; i < 100_000; i++) {
            table = table.with(binding("d", "q" + i, "q" + i));
        }
        Binding added = binding("d", "new", "new");
        Binding existing = binding("d", "q5", "q5");
        BindingTable[] result = new BindingTable[3];
        BindingTable big = table;
        // a copy of the source's bindings would allocate megabytes; a path of a persistent map, a few hundred bytes
        assertThat(allocatedBy(() -> result[0] = big.with(added))).isLessThan(16 * 1024);
        assertThat(allocatedBy(() -> result[1] = big.without(existing))).isLessThan(16 * 1024);
        assertThat(allocatedBy(() -> result[2] = big.withoutDestination(existing.destination())))
            .isLessThan(16 * 1024);
        assertThat(route(result[0], "d", "new")).containsExactly("new");
        assertThat(route(result[1], "d", "q5")).isEmpty();
        assertThat(route(result[2], "d", "q5")).isEmpty();
        assertThat(route(big, "d", "q5")).containsExactly("q5");

        BindingTable topics = BindingTable.EMPTY;
        for (int i = 0; i < 100_000; i++) {
            topics = topics.with(binding("t", "q" + i, "orders." + i + ".#"));
        }
        assertThat(route(topics, "t", "orders.7.x")).containsExactly("q7"); // the trie is built once, here
        BindingTable bigTopics = topics;
        assertThat(allocatedBy(() -> result[0] = bigTopics.with(binding("t", "new", "orders.new.*"))))
            .isLessThan(16 * 1024);
        assertThat(route(result[0], "t", "orders.new.x")).containsExactly("new");
        assertThat(allocatedBy(() -> result[1] = result[0].without(binding("t", "q7", "orders.7.#"))))
            .isLessThan(16 * 1024);
        assertThat(route(result[1], "t", "orders.7.x")).isEmpty();
    }

    /**
     * A queue (or exchange) with k bindings goes in O(k log n): removing them one at a time copied its list of
     * bindings each time, O(k²) (a queue with 100,000 topic bindings took minutes to delete, on the deleting loop).
     */
    @Test
    void deletingADestinationOrSourceWithManyBindingsCostsWhatEachBindingNeeds() {
        int k = 10_000;
        BindingTable table = BindingTable.EMPTY.with(binding("t", "other", "orders.*.created"));
        for (int i = 0; i < k; i++) {
            table = table.with(binding("t", "sink", "r" + i + ".#")).with(binding("d", "sink", "k" + i));
        }
        // under one key from two sources, and twice under one key with other arguments: it stays until the last
        table = table.with(binding("t", "sink", "orders.*.created")).with(binding("f", "sink", ""))
            .with(new Binding("f", Destination.queue("sink"), "", Map.of("x", "y")));
        assertThat(route(table, "t", "r7.a")).containsExactly("sink"); // the trie is built
        BindingTable big = table;
        BindingTable[] result = new BindingTable[2];
        // O(k²): a list of 2k bindings copied 2k times, about 40 KB per binding; O(k log n): a path per binding
        long perBinding = allocatedBy(() -> result[0] = big.withoutDestination(Destination.queue("sink"))) / (2L * k);
        assertThat(perBinding).isLessThan(4 * 1024);
        assertThat(result[0].bindingsTo(Destination.queue("sink"))).isEmpty();
        assertThat(route(result[0], "t", "orders.eu.created")).containsExactly("other");
        assertThat(route(result[0], "t", "r7.a")).isEmpty();
        assertThat(route(result[0], "f", "")).isEmpty();
        assertThat(result[0].hasBindingsFrom("d")).isFalse();
        assertThat(result[0].hasBindingsFrom("f")).isFalse();
        assertThat(result[0].all()).containsExactly(binding("t", "other", "orders.*.created"));

        perBinding = allocatedBy(() -> result[1] = big.withoutSource("t")) / k;
        assertThat(perBinding).isLessThan(4 * 1024);
        assertThat(result[1].hasBindingsFrom("t")).isFalse();
        assertThat(result[1].bindingsTo(Destination.queue("other"))).isEmpty();
        assertThat(result[1].bindingsTo(Destination.queue("sink"))).hasSize(k + 2).doesNotContain(
            binding("t", "sink", "orders.*.created")).startsWith(binding("d", "sink", "k0"));
        assertThat(route(result[1], "d", "k5")).containsExactly("sink");
        assertThat(route(big, "t", "r7.a")).containsExactly("sink");
    }

    /** Direct, fanout and topic routing through 100,000 bindings allocate nothing per message. */
    @Test
    void routingAllocatesNothing() {
        BindingTable table = BindingTable.EMPTY;
        for (int i = 0; i < 100_000; i++) {
            table = table.with(binding("d", "q" + i, "q" + i));
            if (i < 10) {
                table = table.with(binding("f", "q" + i, ""));
            }
            if (i < 1000) {
                table = table.with(binding("t", "q" + i, i % 2 == 0 ? "orders." + i + ".#" : "*.shipped." + i));
            }
        }
        BindingTable routed = table;
        Exchange direct = exchanges.get("d");
        Exchange fanout = exchanges.get("f");
        Exchange topic = exchanges.get("t");
        Function<String, Exchange> lookup = exchanges::get;
        Runnable routes = () -> {
            for (int i = 0; i < 10_000; i++) {
                router.route(routed, lookup, direct, "q42", null);
                router.route(routed, lookup, fanout, "", null);
                router.route(routed, lookup, topic, "orders.500.created.now", null);
            }
        };
        routes.run(); // the lists grow, the trie is built, the lambdas are made
        assertThat(route(routed, "t", "orders.500.created.now")).containsExactly("q500");
        assertThat(route(routed, "t", "x.shipped.501")).containsExactly("q501");
        assertThat(allocatedBy(routes)).isLessThan(1024);
    }

    /**
     * A route through 50,000 bindings costs about what a route through ten costs: a direct lookup and a topic walk
     * look at the routing key's own bindings, not at every binding. Measured as this thread's CPU time (the best of
     * several rounds, so the machine's load cannot fail it); a route that walked every binding would cost thousands
     * of times more, far past the factor allowed here for a large table's cache misses.
     */
    @Test
    void aRouteThroughFiftyThousandBindingsCostsWhatARouteThroughTenCosts() {
        long small = routeCost(10);
        long large = routeCost(50_000);
        assertThat(large).as("CPU ns for a batch of routes: %d bindings %d, 10 bindings %d", 50_000, large, small)
            .isLessThan(20 * small);
    }

    /** The least CPU time, over rounds, of 20,000 direct and 20,000 topic routes through {@code count} bindings each. */
    private long routeCost(int count) {
        BindingTable table = BindingTable.EMPTY;
        for (int i = 0; i < count; i++) {
            table = table.with(binding("d", "q" + i, "q" + i)).with(binding("t", "q" + i, "orders." + i + ".#"));
        }
        BindingTable routed = table;
        Exchange direct = exchanges.get("d");
        Exchange topic = exchanges.get("t");
        Function<String, Exchange> lookup = exchanges::get;
        String key = "q" + (count / 2);
        String topicKey = "orders." + (count / 2) + ".created";
        assertThat(route(routed, "d", key)).containsExactly(key);
        assertThat(route(routed, "t", topicKey)).containsExactly(key);
        java.lang.management.ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        long best = Long.MAX_VALUE;
        for (int round = 0; round < 7; round++) {
            long start = threads.getCurrentThreadCpuTime();
            for (int i = 0; i < 20_000; i++) {
                router.route(routed, lookup, direct, key, null);
                router.route(routed, lookup, topic, topicKey, null);
            }
            best = Math.min(best, threads.getCurrentThreadCpuTime() - start);
        }
        return best;
    }

    private static long allocatedBy(Runnable action) {
        com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        long id = Thread.currentThread().getId();
        long before = threads.getThreadAllocatedBytes(id);
        action.run();
        return threads.getThreadAllocatedBytes(id) - before;
    }
}
