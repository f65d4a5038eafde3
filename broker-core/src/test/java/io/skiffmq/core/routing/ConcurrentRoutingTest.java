package io.skiffmq.core.routing;

import static org.assertj.core.api.Assertions.assertThat;

import io.skiffmq.core.Exchange;
import io.skiffmq.core.VirtualHost;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Writers bind and unbind at random while readers route; every route, computed on one snapshot, must equal what a
 * brute-force reference router finds in that same snapshot's bindings.
 */
class ConcurrentRoutingTest {
    private static final String[] KEYS = {"", "a", "b", "a.b", "a.c", "x.y.z", "a.b.c"};
    private static final String[] PATTERNS = {"#", "*", "a.#", "*.b", "a.*", "#.c", "x.y.z", "a.b", "", "#.b.#"};

    /** All queues a direct/fanout/topic exchange reaches by scanning every binding (no exchange-to-exchange). */
    static Set<String> reference(List<Binding> all, Exchange exchange, String key) {
        Set<String> out = new LinkedHashSet<>();
        for (Binding b : all) {
            if (!b.source().equals(exchange.name())) {
                continue;
            }
            boolean matches = switch (exchange.type()) {
                case FANOUT -> true;
                case DIRECT -> b.key().equals(key);
                case TOPIC -> topicMatches(TopicTrie.words(b.key()), 0, TopicTrie.words(key), 0);
                default -> false;
            };
            if (matches) {
                out.add(b.destination().name());
            }
        }
        return out;
    }

    /** A plain recursive matcher, written independently of the trie. */
    static boolean topicMatches(String[] pattern, int p, String[] words, int w) {
        if (p == pattern.length) {
            return w == words.length;
        }
        if (pattern[p].equals("#")) {
            for (int k = w; k <= words.length; k++) {
                if (topicMatches(pattern, p + 1, words, k)) {
                    return true;
                }
            }
            return false;
        }
        return w < words.length && (pattern[p].equals("*") || pattern[p].equals(words[w]))
            && topicMatches(pattern, p + 1, words, w + 1);
    }

    @ParameterizedTest
    @ValueSource(longs = {1, 2, 3})
    void routesMatchTheReferenceOnEverySnapshot(long seed) throws Exception {
        VirtualHost vhost = new VirtualHost("/", () -> io.skiffmq.core.queue.QueueExecutor.CALLER_THREAD);
        for (int i = 0; i < 20; i++) {
            vhost.declareQueue("q" + i);
        }
        Exchange[] exchanges = {vhost.exchange("amq.direct"), vhost.exchange("amq.fanout"), vhost.exchange("amq.topic")};
        AtomicBoolean stop = new AtomicBoolean();
        ConcurrentLinkedQueue<String> failures = new ConcurrentLinkedQueue<>();
        CountDownLatch done = new CountDownLatch(4);
        List<Thread> threads = new ArrayList<>();
        for (int t = 0; t < 2; t++) {
            Random random = new Random(seed * 31 + t);
            threads.add(new Thread(() -> {
                try {
                    for (int i = 0; i < 5000; i++) {
                        Exchange e = exchanges[random.nextInt(exchanges.length)];
                        String key = e.type() == Exchange.Type.TOPIC ? PATTERNS[random.nextInt(PATTERNS.length)]
                            : KEYS[random.nextInt(KEYS.length)];
                        Binding b = new Binding(e.name(), Destination.queue("q" + random.nextInt(20)), key,
                            random.nextBoolean() ? Map.of() : Map.of("v", (long) random.nextInt(3)));
                        if (random.nextInt(3) == 0) {
                            vhost.unbind(b);
                        } else {
                            vhost.bind(b);
                        }
                    }
                } finally {
                    done.countDown();
                }
            }));
        }
        for (int t = 0; t < 2; t++) {
            Random random = new Random(seed * 17 + t);
            threads.add(new Thread(() -> {
                Router router = new Router();
                try {
                    while (!stop.get()) {
                        BindingTable snapshot = vhost.bindings();
                        Exchange e = exchanges[random.nextInt(exchanges.length)];
                        String key = KEYS[random.nextInt(KEYS.length)];
                        Set<String> routed = new LinkedHashSet<>(router.route(snapshot, vhost::exchange, e, key, Map::of));
                        Set<String> expected = reference(snapshot.all(), e, key);
                        if (!routed.equals(expected)) {
                            failures.add(e.name() + " '" + key + "': routed " + routed + ", expected " + expected);
                        }
                    }
                } finally {
                    done.countDown();
                }
            }));
        }
        threads.forEach(Thread::start);
        threads.get(0).join();
        threads.get(1).join();
        stop.set(true);
        assertThat(done.await(30, TimeUnit.SECONDS)).isTrue();
        assertThat(failures).isEmpty();
    }
}
