package io.skiffmq.server.metrics;

import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.binder.jvm.ClassLoaderMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmGcMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmMemoryMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmThreadMetrics;
import io.micrometer.core.instrument.binder.netty4.NettyAllocatorMetrics;
import io.micrometer.core.instrument.binder.system.FileDescriptorMetrics;
import io.micrometer.core.instrument.binder.system.ProcessorMetrics;
import io.micrometer.core.instrument.binder.system.UptimeMetrics;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufAllocatorMetricProvider;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.channel.Channel;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.skiffmq.server.Broker;
import io.skiffmq.store.Journal;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * The Prometheus endpoint: {@code GET /metrics} and {@code /metrics/per-object} on {@code prometheus-port}, in
 * Prometheus' text format, from a Micrometer {@link PrometheusMeterRegistry} holding the JVM's metrics (memory, GC,
 * threads, classes, CPU, uptime, file descriptors), Netty's buffer allocators (used and pinned memory, heap and
 * direct), each journal's sync latency histogram ({@code skiffmq_journal_sync_seconds}), and the broker's own
 * ({@link BrokerCollector}).
 *
 * <p>It has one event loop of its own, so a scrape (which walks every queue and connection, and lists the
 * journals' directories) never runs on a loop that serves AMQP. {@link #start} and {@link #close} are called by one
 * thread (the listener's owner).
 */
public final class MetricsServer implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(MetricsServer.class.getName());

    /**
     * The sync histogram's buckets: 50 µs (a fast SSD's flush) to 10 s (a disk in trouble), 1-2.5-5 per decade, 17
     * buckets rather than Micrometer's 80-odd percentile buckets.
     */
    private static final Duration[] SYNC_BUCKETS = java.util.stream.Stream.of(50_000L, 100_000L, 250_000L, 500_000L,
        1_000_000L, 2_500_000L, 5_000_000L, 10_000_000L, 25_000_000L, 50_000_000L, 100_000_000L, 250_000_000L,
        500_000_000L, 1_000_000_000L, 2_500_000_000L, 5_000_000_000L, 10_000_000_000L)
        .map(Duration::ofNanos).toArray(Duration[]::new);

    /** How long {@link #close} waits for the port to close and the loop to stop. */
    static final long CLOSE_WAIT_NANOS = TimeUnit.SECONDS.toNanos(5);

    private final PrometheusSettings settings;
    private final String bindAddress;
    private final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT,
        new PrometheusRegistry(), io.micrometer.core.instrument.Clock.SYSTEM);
    private final JvmGcMetrics gc = new JvmGcMetrics();
    /** Journals whose syncs are timed already. */
    private final Set<Journal> timed = ConcurrentHashMap.newKeySet();
    private final BrokerCollector collector;
    private EventLoopGroup group;
    private Channel channel;

    public MetricsServer(Broker broker, PrometheusSettings settings, String bindAddress) {
        this.settings = settings;
        this.bindAddress = bindAddress;
        new JvmMemoryMetrics().bindTo(registry);
        gc.bindTo(registry);
        new JvmThreadMetrics().bindTo(registry);
        new ClassLoaderMetrics().bindTo(registry);
        new ProcessorMetrics().bindTo(registry);
        new UptimeMetrics().bindTo(registry);
        new FileDescriptorMetrics().bindTo(registry);
        new NettyAllocatorMetrics(PooledByteBufAllocator.DEFAULT).bindTo(registry);
        if (ByteBufAllocator.DEFAULT != PooledByteBufAllocator.DEFAULT
                && ByteBufAllocator.DEFAULT instanceof ByteBufAllocatorMetricProvider provider) {
            new NettyAllocatorMetrics(provider).bindTo(registry); // Netty 4.2's adaptive allocator, the default
        }
        this.collector = new BrokerCollector(broker, settings.perQueue(), this::timeSyncs);
        registry.getPrometheusRegistry().register(collector);
    }

    /** Times each sync of {@code journal} in the histogram {@code skiffmq_journal_sync_seconds{vhost}}, once. */
    private void timeSyncs(Map.Entry<String, Journal> journal) {
        if (timed.add(journal.getValue())) {
            Timer timer = Timer.builder("skiffmq.journal.sync")
                .description("Time a journal sync (fsync of a batch) took")
                .tags(Tags.of("vhost", journal.getKey()))
                .serviceLevelObjectives(SYNC_BUCKETS)
                .register(registry);
            journal.getValue().counters().onSync(nanos -> timer.record(nanos, TimeUnit.NANOSECONDS));
        }
    }

    /** The registry, for other parts that add meters of their own. */
    public PrometheusMeterRegistry registry() {
        return registry;
    }

    /** Binds {@code prometheus-port} and returns the bound address (the real port when it is 0). */
    public InetSocketAddress start() throws InterruptedException {
        collector.collect(false); // hooks up the journals open now: their first syncs are timed too
        group = new MultiThreadIoEventLoopGroup(1, new DefaultThreadFactory("skiffmq-metrics", true),
            NioIoHandler.newFactory());
        ScrapeHandler scrapes = new ScrapeHandler(registry.getPrometheusRegistry());
        io.netty.channel.ChannelFuture bound = new ServerBootstrap()
            .group(group)
            .channel(NioServerSocketChannel.class)
            .childHandler(new ChannelInitializer<SocketChannel>() {
                @Override
                protected void initChannel(SocketChannel ch) {
                    ch.pipeline().addLast(new HttpServerCodec(), new HttpObjectAggregator(8192), scrapes);
                }
            })
            .bind(bindAddress, settings.port());
        channel = io.skiffmq.server.transport.PortBinding.await(bound, bindAddress, settings.port(), "prometheus-port");
        InetSocketAddress address = (InetSocketAddress) channel.localAddress();
        LOG.log(System.Logger.Level.INFO, "serving Prometheus metrics on http://{0}:{1}/metrics", bindAddress,
            String.valueOf(address.getPort()));
        return address;
    }

    /**
     * Closes the port and stops the loop, waiting for them at most {@link #CLOSE_WAIT_NANOS}: a scrape that hangs in
     * a collector (the loop never gets to the close) must not hold a stopping broker, as SIGTERM sometimes was. The
     * loop's thread is a daemon, so one left behind does not keep the JVM alive.
     */
    @Override
    public void close() {
        long deadline = System.nanoTime() + CLOSE_WAIT_NANOS;
        boolean stopped = true;
        if (channel != null) {
            stopped = channel.close().awaitUninterruptibly(CLOSE_WAIT_NANOS, TimeUnit.NANOSECONDS);
        }
        if (group != null) {
            io.netty.util.concurrent.Future<?> terminated = group.shutdownGracefully(0, 2, TimeUnit.SECONDS);
            stopped &= terminated.awaitUninterruptibly(Math.max(0, deadline - System.nanoTime()),
                TimeUnit.NANOSECONDS);
        }
        if (!stopped) {
            LOG.log(System.Logger.Level.WARNING, "the metrics server did not stop within {0} s (a scrape in progress "
                + "did not end); the broker stops without waiting for it", TimeUnit.NANOSECONDS.toSeconds(
                CLOSE_WAIT_NANOS));
        }
        for (Journal journal : timed) {
            journal.counters().onSync(null);
        }
        gc.close();
        registry.close();
    }
}
