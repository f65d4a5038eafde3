package io.skiffmq.core.routing;

import io.skiffmq.benchmarks.AbstractMicrobenchmark;
import io.skiffmq.core.Exchange;
import io.skiffmq.core.VirtualHost;
import io.skiffmq.core.message.Headers;
import io.skiffmq.core.queue.Queue;
import io.skiffmq.core.queue.QueueExecutor;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Setup;

/**
 * Route lookups through the binding table: fanout (10 bindings), direct, topic (1,000 patterns) and headers, each
 * beside {@code unrelated} bindings on other exchanges. Fanout and direct must not slow down as those grow, and
 * must allocate nothing ({@code -prof gc}).
 */
public class RoutingBenchmark extends AbstractMicrobenchmark {

    @Param({"0", "100000"})
    int unrelated;

    private VirtualHost vhost;
    private final Router router = new Router();
    private final List<Queue> out = new ArrayList<>();
    private Exchange fanout;
    private Exchange direct;
    private Exchange topic;
    private Exchange headers;
    private final Map<String, Object> messageHeaders = Map.of("region", "eu", "kind", "order");
    private final Headers headerSupplier = () -> messageHeaders;

    @Setup(Level.Trial)
    public void bind() {
        vhost = new VirtualHost("/", () -> QueueExecutor.CALLER_THREAD);
        for (int i = 0; i < 1000; i++) {
            vhost.declareQueue("q" + i);
        }
        fanout = vhost.declareExchange(new Exchange("bench.fanout", Exchange.Type.FANOUT));
        direct = vhost.declareExchange(new Exchange("bench.direct", Exchange.Type.DIRECT));
        topic = vhost.declareExchange(new Exchange("bench.topic", Exchange.Type.TOPIC));
        headers = vhost.declareExchange(new Exchange("bench.headers", Exchange.Type.HEADERS));
        for (int i = 0; i < 10; i++) {
            vhost.bind(new Binding(fanout.name(), Destination.queue("q" + i), "", Map.of()));
            vhost.bind(new Binding(headers.name(), Destination.queue("q" + i), "",
                Map.of("x-match", "all", "region", i % 2 == 0 ? "eu" : "us", "kind", "order")));
        }
        for (int i = 0; i < 100; i++) {
            vhost.bind(new Binding(direct.name(), Destination.queue("q" + i), "key-" + i, Map.of()));
        }
        for (int i = 0; i < 1000; i++) {
            String pattern = switch (i % 4) {
                case 0 -> "orders." + i + ".created";
                case 1 -> "orders.*.updated." + i;
                case 2 -> "invoices." + i + ".#";
                default -> "#.shipped." + i;
            };
            vhost.bind(new Binding(topic.name(), Destination.queue("q" + i), pattern, Map.of()));
        }
        for (int i = 0; i < unrelated; i++) {
            String source = "other-" + (i % 1000);
            if (vhost.exchange(source) == null) {
                vhost.declareExchange(new Exchange(source, Exchange.Type.DIRECT));
            }
            vhost.bind(new Binding(source, Destination.queue("q" + (i % 1000)), "k" + i, Map.of()));
        }
    }

    @Benchmark
    public List<Queue> fanout() {
        return vhost.route(fanout, "", headerSupplier, router, out);
    }

    @Benchmark
    public List<Queue> direct() {
        return vhost.route(direct, "key-42", headerSupplier, router, out);
    }

    @Benchmark
    public List<Queue> topic() {
        return vhost.route(topic, "orders.500.created", headerSupplier, router, out);
    }

    @Benchmark
    public List<Queue> headers() {
        return vhost.route(headers, "", headerSupplier, router, out);
    }
}
