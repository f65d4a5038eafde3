package io.skiffmq.benchmarks;

import io.netty.bootstrap.Bootstrap;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.IoHandlerFactory;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.skiffmq.benchmarks.LeanConnection.Endpoint;
import java.net.URI;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * The lean load engine: AMQP 1.0 straight on the project's codec and Netty, no JMS and no client library, so the
 * client takes as little of the cores it shares with the broker as it can. Each sender and each receiver is a
 * connection of its own ({@link LeanSender}, {@link LeanReceiver}); all of them share {@code --io-threads} event
 * loops (1 by default: on a small machine every client thread takes a core from the broker), epoll when it loads.
 *
 * <p>Queues are addressed by name with the {@code queue} capability; topics ({@code --topic=true}) by name with
 * the {@code topic} capability, a non-durable subscription per receiver: what Qpid JMS sends for
 * {@code createQueue} and {@code createTopic}, so SkiffMQ maps a topic to {@code amq.topic} and Artemis to a
 * multicast address, as with the JMS engine.
 *
 * <p>Used by the thread that runs the load; the connections are on their event loops.
 */
final class LeanEngine implements LoadEngine {
    private static final long CONNECT_SECONDS = 30;

    private final Map<String, String> options;
    private final LoadCounters counters;
    private final EventLoopGroup group;
    private final Bootstrap bootstrap;
    private final String host;
    private final int port;
    private final List<LeanConnection> connections = new ArrayList<>();
    private final List<LeanSender> senders = new ArrayList<>();

    LeanEngine(Map<String, String> options, LoadCounters counters) {
        this.options = options;
        this.counters = counters;
        URI uri = URI.create(options.get("uri"));
        this.host = uri.getHost();
        this.port = uri.getPort() < 0 ? 5672 : uri.getPort();
        boolean epoll = Epoll.isAvailable();
        IoHandlerFactory io = epoll ? EpollIoHandler.newFactory() : NioIoHandler.newFactory();
        this.group = new MultiThreadIoEventLoopGroup(Integer.parseInt(options.get("io-threads")), io);
        this.bootstrap = new Bootstrap().group(group)
            .channel(epoll ? EpollSocketChannel.class : NioSocketChannel.class)
            .option(ChannelOption.TCP_NODELAY, true);
    }

    @Override
    public void startReceivers() throws Exception {
        int receivers = Integer.parseInt(options.get("receivers"));
        boolean topic = Boolean.parseBoolean(options.get("topic"));
        String address = topic ? LoadTool.target(options) : options.get("queue");
        List<LeanConnection> started = new ArrayList<>();
        for (int r = 0; r < receivers; r++) {
            started.add(connect(new LeanReceiver(counters, "load-receiver-" + r, endpoint(address, topic),
                Integer.parseInt(options.get("credit")), LoadTool.bodySize(options), topic || receivers == 1)));
        }
        await(started);
    }

    @Override
    public void startSenders(long measureFrom, long end) throws Exception {
        int count = Integer.parseInt(options.get("senders"));
        LeanSender.Publishing publishing = new LeanSender.Publishing(Boolean.parseBoolean(options.get("durable")),
            Boolean.parseBoolean(options.get("settled")), LoadTool.bodySize(options),
            Integer.parseInt(options.get("in-flight")), Long.parseLong(options.get("count")),
            Long.parseLong(options.get("rate")) / count);
        Endpoint endpoint = endpoint(LoadTool.target(options), Boolean.parseBoolean(options.get("topic")));
        for (int s = 0; s < count; s++) {
            senders.add((LeanSender) connect(new LeanSender(counters, "load-sender-" + s, endpoint, s, publishing)));
        }
        await(senders);
        for (LeanSender sender : senders) {
            sender.start(measureFrom, end);
        }
    }

    private Endpoint endpoint(String address, boolean topic) {
        return new Endpoint(host, port, options.get("user"), options.get("password"), address, topic);
    }

    private LeanConnection connect(LeanConnection connection) {
        connections.add(connection);
        bootstrap.clone().handler(connection).connect(host, port).addListener(f -> {
            if (!f.isSuccess()) {
                connection.ready().completeExceptionally(f.cause());
            }
        });
        return connection;
    }

    private static void await(List<? extends LeanConnection> connections) throws Exception {
        CompletableFuture.allOf(connections.stream().map(LeanConnection::ready).toArray(CompletableFuture[]::new))
            .get(CONNECT_SECONDS, TimeUnit.SECONDS);
    }

    @Override
    public boolean sending() {
        return senders.stream().anyMatch(s -> !s.done().isDone());
    }

    @Override
    public void close() throws Exception {
        try {
            List<CompletableFuture<Void>> closed = new ArrayList<>();
            for (LeanConnection connection : connections) {
                if (connection.ctx != null) {
                    closed.add(connection.close());
                }
            }
            try {
                CompletableFuture.allOf(closed.toArray(CompletableFuture[]::new)).get(5, TimeUnit.SECONDS);
            } catch (java.util.concurrent.TimeoutException e) {
                // a broker that does not answer close: the sockets go with the event loops
            }
        } finally {
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS).sync();
        }
    }
}
