package io.skiffmq.server.transport;

import io.skiffmq.core.metrics.BrokerCounters;
import io.skiffmq.core.metrics.ConnectionCounters;

import io.skiffmq.server.Broker;
import io.skiffmq.server.config.BrokerConfig;
import io.skiffmq.server.connection.ClientConnection;
import io.skiffmq.server.loop.EventLoops;
import io.skiffmq.server.amqp10.Amqp10ConnectionHandler;
import io.skiffmq.server.amqp091.Amqp091ConnectionHandler;
import io.skiffmq.server.amqp091.DirectReplyTo;
import io.skiffmq.server.auth.SaslAuthenticator;
import io.skiffmq.server.auth.UserStore;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.IoHandlerFactory;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.ServerChannel;
import io.netty.channel.WriteBufferWaterMark;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.skiffmq.codec.amqp10.Amqp10FrameDecoder;
import io.skiffmq.codec.amqp10.ProtocolHeader;
import io.skiffmq.codec.amqp091.Amqp091FrameDecoder;
import io.skiffmq.codec.stream.Peer;
import io.skiffmq.codec.stream.StreamFrameDecoder;
import io.skiffmq.server.peer.PeerLinks;
import io.skiffmq.server.stream.StreamServer;
import io.skiffmq.server.http.HttpApiServer;
import io.skiffmq.server.http.Listener;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.EnumSet;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The TCP listener: one port for AMQP 1.0 and 0-9-1 (told apart by {@link ProtocolDetector}), optionally a
 * second for 0-9-1 alone, and optionally an AMQPS port for both over TLS ({@link TlsContext}: the protocol is told
 * apart after the handshake); RabbitMQ's stream protocol on its own port ({@code stream-port}, 5552) and optionally
 * over TLS ({@code stream-tls-port}, the AMQPS certificates; {@link StreamServer}); and the HTTP API ({@link HttpApiServer}, on the boss group); epoll when the native transport loads and NIO otherwise. Each accepted
 * connection lives on one event loop for its whole life.
 *
 * <p>{@link #start()} and {@link #close()} are called by one thread (main or the shutdown hook),
 * {@link #stopApp()} and {@link #startApp()} by the HTTP API's; all four hold this object's lock, which guards the
 * listeners' state.
 */
public final class AmqpListener implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(AmqpListener.class.getName());

    /**
     * A connection's outbound buffer bounds (bytes written, not yet taken by the socket). High is four flushes'
     * worth ({@code FrameWriter.FLUSH_THRESHOLD}, 64 KiB), so a consumer that keeps up never pauses between them;
     * a consumer that stops reading holds at most this much (plus one message) in the broker, the rest waits in
     * its queue or link.
     */
    static final int WRITE_LOW = 64 * 1024;
    static final int WRITE_HIGH = 256 * 1024;
    /**
     * How long a stopping broker waits for its connections' sockets to close after their forced closes: ample for
     * a peer that reads (one frame each) and answers (0-9-1's close-ok), short enough for a service manager's stop
     * timeout (systemd's default is 90 s).
     */
    static final long CLOSE_WAIT_NANOS = TimeUnit.SECONDS.toNanos(10);

    private final BrokerConfig config;
    private final EventLoopGroup bossGroup;
    private final EventLoopGroup workerGroup;
    private final Class<? extends ServerChannel> channelClass;
    private final Broker broker;
    private final SaslAuthenticator sasl;
    private final DirectReplyTo directReplyTo = new DirectReplyTo();
    /** Written by start(), read by the HTTP API's threads too. */
    private volatile Channel serverChannel;
    private volatile Channel amqp091Channel;
    private volatile Channel amqpsChannel;
    private volatile Channel streamChannel;
    private volatile Channel streamTlsChannel;
    /** The node port, where the other nodes of the cluster reach this node's queues; null on a single node. */
    private volatile Channel peerChannel;
    private PeerLinks peers;
    /** What the stream connections share, once the stream ports are bound; null when there are none. */
    private volatile StreamServer streams;
    /** The Prometheus endpoint, or null when {@code prometheus-port} is none or before {@link #start()}. */
    private io.skiffmq.server.metrics.MetricsServer metrics;
    private InetSocketAddress metricsAddress;
    /** The HTTP API ({@code management-port}), or null when it is off. */
    private HttpApiServer httpApi;
    private InetSocketAddress httpApiAddress;
    /** The TLS of the AMQPS and stream TLS listeners, or null when there is neither. */
    private final TlsContext tls;
    /** What a connection detected as AMQP 1.0 or 0-9-1 gets; set by {@link #start()}, used again by startApp. */
    private ProtocolDetector.Protocol amqp10;
    private ProtocolDetector.Protocol amqp091;
    /** Between stopApp and startApp; guarded by this object's lock. */
    private boolean appStopped;
    /** Set by {@link #close()}: the application cannot start again. */
    private boolean closed;
    /** rabbitmqctl's stop_app and start_app, for the HTTP API. */
    private final io.skiffmq.server.http.NodeApplication application = new io.skiffmq.server.http.NodeApplication() {
        @Override
        public void stop() {
            stopApp();
        }

        @Override
        public void start() throws InterruptedException {
            startApp();
        }
    };

    public AmqpListener(BrokerConfig config) throws java.io.IOException {
        this(config, io.skiffmq.core.time.BrokerClock.SYSTEM);
    }

    /** @param clock what message TTLs and queue expiry run on */
    public AmqpListener(BrokerConfig config, io.skiffmq.core.time.BrokerClock clock) throws java.io.IOException {
        this.config = config;
        this.tls = config.tls().enabled() ? TlsContext.of(config.tls(), "amqps-port")
            : config.stream().tlsEnabled() ? TlsContext.of(config.tls(), "stream-tls-port") : null;
        boolean epoll = Epoll.isAvailable();
        IoHandlerFactory io = epoll ? EpollIoHandler.newFactory() : NioIoHandler.newFactory();
        this.bossGroup = new MultiThreadIoEventLoopGroup(1, io);
        this.workerGroup = new MultiThreadIoEventLoopGroup(config.eventLoops(), io);
        this.channelClass = epoll ? EpollServerSocketChannel.class : NioServerSocketChannel.class;
        UserStore users = UserStore.withUser(config.auth().defaultUser());
        if (config.usersFile() != null) {
            users.load(config.usersFile());
        }
        users.restrictToLoopback(config.auth().loopbackUsers());
        try {
            this.broker = new Broker(config, users, new EventLoops(workerGroup), clock);
        } catch (java.io.IOException | RuntimeException e) {
            bossGroup.shutdownGracefully(0, 0, TimeUnit.SECONDS);
            workerGroup.shutdownGracefully(0, 0, TimeUnit.SECONDS);
            throw e;
        }
        this.sasl = new SaslAuthenticator(users, config.anonymousUser(), config.auth());
    }

    public Broker broker() {
        return broker;
    }

    /** What checks this listener's logins. */
    public SaslAuthenticator authenticator() {
        return sasl;
    }

    /** Binds and returns the bound address (the real port when the configured port is 0). */
    public synchronized InetSocketAddress start() throws InterruptedException {
        EnumSet<ProtocolHeader> first = config.allowPlainAmqp()
            ? EnumSet.of(ProtocolHeader.SASL, ProtocolHeader.AMQP) : EnumSet.of(ProtocolHeader.SASL);
        amqp10 = detector -> {
            ConnectionCounters counters = new ConnectionCounters(BrokerCounters.AMQP10);
            detector.pipeline()
                .addAfter(detector.name(), "bytes", new ByteCounter(counters, broker.resourceMonitor()))
                .addAfter("bytes", "frames", new Amqp10FrameDecoder(first, config.initialMaxFrameSize()))
                .addAfter("frames", "amqp", new Amqp10ConnectionHandler(broker, sasl, counters));
        };
        amqp091 = detector -> {
            ConnectionCounters counters = new ConnectionCounters(BrokerCounters.AMQP091);
            detector.pipeline()
                .addAfter(detector.name(), "bytes", new ByteCounter(counters, broker.resourceMonitor()))
                .addAfter("bytes", "frames", new Amqp091FrameDecoder(config.amqp091InitialFrameMax()))
                .addAfter("frames", "amqp", new Amqp091ConnectionHandler(broker, sasl, directReplyTo, counters));
        };
        serverChannel = bind("port", config.port(), amqp10, amqp091, null);
        broker.startResourceMonitor();
        InetSocketAddress address = (InetSocketAddress) serverChannel.localAddress();
        // harnesses wait for this line, as it is (benchmarks, the crash test)
        LOG.log(System.Logger.Level.INFO, "listening for AMQP 1.0 on {0} ({1})", address, channelClass.getSimpleName());
        LOG.log(System.Logger.Level.INFO, "listening for AMQP 0-9-1 on {0} too", address);
        if (config.amqp091Port() != BrokerConfig.NO_PORT) {
            amqp091Channel = bind("amqp091-port", config.amqp091Port(), null, amqp091, null);
            LOG.log(System.Logger.Level.INFO, "listening for AMQP 0-9-1 on {0}", amqp091Channel.localAddress());
        }
        if (broker.cluster() != null) {
            startPeers();
        }
        if (config.prometheus().enabled()) {
            metrics = new io.skiffmq.server.metrics.MetricsServer(broker, config.prometheus(), config.bindAddress());
            metricsAddress = metrics.start();
        }
        if (config.tls().enabled()) {
            amqpsChannel = bind("amqps-port", config.tls().port(), amqp10, amqp091, tls);
            LOG.log(System.Logger.Level.INFO, "listening for AMQP 1.0 and 0-9-1 over TLS on {0}",
                amqpsChannel.localAddress());
        }
        if (config.stream().enabled() || config.stream().tlsEnabled()) {
            streams = new StreamServer(broker, sasl);
            bindStreams();
        }
        if (config.management().enabled()) {
            // on the boss group's loop: the HTTP loop only parses and writes, the work runs on other threads
            httpApi = new HttpApiServer(broker, sasl, bossGroup, channelClass, this::listeners, application,
                config.management().statisticsIntervalMillis());
            httpApiAddress = httpApi.start(config.bindAddress(), config.management().port());
            LOG.log(System.Logger.Level.INFO, "listening for HTTP API requests on {0}", httpApiAddress);
        }
        return address;
    }

    /**
     * The node port (the cluster port plus {@link PeerLinks#PORT_OFFSET}): AMQP 1.0 from the
     * other nodes, over mutual TLS whose trust is the cluster secret; and this node's links to the queues homed on
     * them (docs/cluster.md, "Messages between nodes").
     */
    private void startPeers() throws InterruptedException {
        var cluster = broker.cluster();
        io.netty.handler.ssl.SslContext serverTls;
        try {
            serverTls = PeerLinks.serverTls(cluster.tls());
            peers = new PeerLinks(broker, workerGroup, epollClient()
                ? io.netty.channel.epoll.EpollSocketChannel.class : io.netty.channel.socket.nio.NioSocketChannel.class,
                cluster.tls(), cluster::members, cluster::nodeLinkLost);
        } catch (javax.net.ssl.SSLException e) {
            throw new IllegalStateException("cannot set up TLS between nodes", e);
        }
        int port = config.cluster().port() + PeerLinks.PORT_OFFSET;
        peerChannel = bind("cluster-port", port, null, ch -> {
            ConnectionCounters counters = new ConnectionCounters(BrokerCounters.AMQP10);
            ch.pipeline()
                .addLast("tls", serverTls.newHandler(ch.alloc()))
                .addLast("bytes", new ByteCounter(counters, broker.resourceMonitor()))
                .addLast("frames", new Amqp10FrameDecoder(EnumSet.of(ProtocolHeader.AMQP), config.initialMaxFrameSize()))
                .addLast("amqp", Amqp10ConnectionHandler.forNode(broker, counters));
        });
        cluster.definitions().remoteQueues(peers::remoteQueue);
        LOG.log(System.Logger.Level.INFO, "listening for the other nodes'' messages on {0}", peerChannel.localAddress());
    }

    private boolean epollClient() {
        return channelClass == EpollServerSocketChannel.class;
    }

    /** RabbitMQ's stream protocol, on {@code stream-port} and (over TLS) {@code stream-tls-port}. */
    private void bindStreams() throws InterruptedException {
        if (config.stream().enabled()) {
            streamChannel = bind("stream-port", boundPort(streamChannel, config.stream().port()), null,
                ch -> installStream(ch, streams, false));
            LOG.log(System.Logger.Level.INFO, "listening for RabbitMQ streams on {0}", streamChannel.localAddress());
        }
        if (config.stream().tlsEnabled()) {
            streamTlsChannel = bind("stream-tls-port", boundPort(streamTlsChannel, config.stream().tlsPort()), tls,
                ch -> installStream(ch, streams, true));
            LOG.log(System.Logger.Level.INFO, "listening for RabbitMQ streams over TLS on {0}",
                streamTlsChannel.localAddress());
        }
    }

    private void installStream(SocketChannel ch, StreamServer streams, boolean overTls) {
        ConnectionCounters counters = StreamServer.counters();
        ch.pipeline()
            .addLast("bytes", new ByteCounter(counters, broker.resourceMonitor()))
            .addLast("frames", new StreamFrameDecoder(Peer.CLIENT, config.stream().initialFrameMax()))
            .addLast("stream", streams.newConnection(counters, overTls));
    }

    /** What the stream protocol's connections share (its consumer groups), or null when it has no port. */
    public StreamServer streams() {
        return streams;
    }

    /** Where the stream protocol is spoken ({@code stream-port}), or null. */
    public InetSocketAddress streamAddress() {
        return streamChannel == null ? null : (InetSocketAddress) streamChannel.localAddress();
    }

    /** Where the stream protocol is spoken over TLS ({@code stream-tls-port}), or null. */
    public InetSocketAddress streamTlsAddress() {
        return streamTlsChannel == null ? null : (InetSocketAddress) streamTlsChannel.localAddress();
    }

    /** Where Prometheus metrics are served ({@code prometheus-port}), or null. */
    public InetSocketAddress metricsAddress() {
        return metricsAddress;
    }

    /** Where the HTTP API listens ({@code management-port}), or null. */
    public InetSocketAddress managementAddress() {
        return httpApiAddress;
    }

    /** The bound AMQP listeners, as the HTTP API's overview and port-listener health check name them. */
    private List<Listener> listeners() {
        List<Listener> bound = new ArrayList<>();
        for (Channel channel : new Channel[] {serverChannel, amqp091Channel}) {
            if (channel != null && channel.isActive()) {
                bound.add(new Listener("amqp", (InetSocketAddress) channel.localAddress()));
            }
        }
        if (amqpsChannel != null && amqpsChannel.isActive()) {
            bound.add(new Listener("amqp/ssl", (InetSocketAddress) amqpsChannel.localAddress()));
        }
        if (streamChannel != null && streamChannel.isActive()) {
            bound.add(new Listener("stream", (InetSocketAddress) streamChannel.localAddress()));
        }
        if (streamTlsChannel != null && streamTlsChannel.isActive()) {
            bound.add(new Listener("stream/ssl", (InetSocketAddress) streamTlsChannel.localAddress()));
        }
        return bound;
    }

    /** Where AMQP 0-9-1 alone is spoken ({@code amqp091-port}), or null. */
    public InetSocketAddress amqp091Address() {
        return amqp091Channel == null ? null : (InetSocketAddress) amqp091Channel.localAddress();
    }

    /** Where AMQP 1.0 and 0-9-1 are spoken over TLS ({@code amqps-port}), or null. */
    public InetSocketAddress amqpsAddress() {
        return amqpsChannel == null ? null : (InetSocketAddress) amqpsChannel.localAddress();
    }

    /** @param tls null for plain TCP; else each connection's TLS handshake comes before the protocol header */
    private Channel bind(String setting, int port, ProtocolDetector.Protocol amqp10, ProtocolDetector.Protocol amqp091,
            TlsContext tls) throws InterruptedException {
        return bind(setting, port, tls, ch -> ch.pipeline().addLast("detect", new ProtocolDetector(amqp10, amqp091,
            config.handshakeTimeoutMillis(), broker.ends())));
    }

    /**
     * Binds a port whose connections get {@code protocol}'s handlers, after TLS when {@code tls} is not null.
     * Accepted connections are counted against {@code max-preauth-connections} and their handshake timed from now.
     */
    private Channel bind(String setting, int port, TlsContext tls, java.util.function.Consumer<SocketChannel> protocol)
            throws InterruptedException {
        ServerBootstrap bootstrap = new ServerBootstrap()
            .group(bossGroup, workerGroup)
            .channel(channelClass)
            .option(ChannelOption.SO_BACKLOG, 1024)
            .childOption(ChannelOption.TCP_NODELAY, true)
            // writes past HIGH make the channel unwritable: consumers' deliveries wait until it drains under LOW
            .childOption(ChannelOption.WRITE_BUFFER_WATER_MARK, new WriteBufferWaterMark(WRITE_LOW, WRITE_HIGH))
            .childHandler(new ChannelInitializer<SocketChannel>() {
                @Override
                protected void initChannel(SocketChannel ch) {
                    if (!broker.preAuth().enter(ch)) {
                        // over max-preauth-connections: closed before any read (and before a TLS handshake)
                        ch.config().setAutoRead(false);
                        ch.close();
                        return;
                    }
                    io.skiffmq.server.connection.HandshakeDeadline.accepted(ch);
                    if (tls != null) {
                        ch.pipeline().addLast("plain-on-tls", new PlainAmqpOnTlsPort(broker.ends()));
                        ch.pipeline().addLast("tls", tls.newHandler(ch.alloc()));
                    }
                    protocol.accept(ch);
                }
            });
        return PortBinding.await(bootstrap.bind(config.bindAddress(), port), config.bindAddress(), port, setting);
    }

    /**
     * Enters the stopping state ({@link Broker#beginStopping}: the HTTP API's health checks fail with "node is
     * stopping"), stops accepting, closes every connection as forced and waits (at most {@link #CLOSE_WAIT_NANOS})
     * for their sockets to close, closes the HTTP API, which stayed up to show all this, then the queues and the
     * journal, and waits for the event loops to finish.
     */
    @Override
    public synchronized void close() {
        closed = true;
        broker.beginStopping();
        closeClientPorts();
        if (peers != null) {
            peers.close();
            peerChannel.close().syncUninterruptibly();
        }
        if (metrics != null) {
            metrics.close();
        }
        awaitClosed(broker.stopAccepting());
        if (httpApi != null) {
            httpApi.close();
        }
        // queues let go of their messages and write nothing more; then the journal writes what is pending and
        // confirms it while the event loops still run to take the confirms; then the loops stop
        sasl.close();
        broker.closeQueues();
        try {
            broker.close();
        } catch (java.io.IOException e) {
            LOG.log(System.Logger.Level.WARNING, "closing the data directory failed", e);
        }
        bossGroup.shutdownGracefully(0, 2, TimeUnit.SECONDS).syncUninterruptibly();
        workerGroup.shutdownGracefully(0, 5, TimeUnit.SECONDS).syncUninterruptibly();
    }

    /**
     * rabbitmqctl's stop_app, as far as it can go without stopping the JVM: the AMQP, AMQPS and stream ports close,
     * every connection is closed as forced (as {@link #close()} does) and none is accepted until {@link #startApp}.
     * Queues, their messages, definitions, the HTTP API and the metrics stay. Nothing happens when already stopped.
     */
    public synchronized void stopApp() {
        if (appStopped || closed) {
            return;
        }
        appStopped = true;
        LOG.log(System.Logger.Level.INFO, "stopping the application (stop_app): closing listeners and connections");
        closeClientPorts();
        awaitClosed(broker.suspendAccepting());
    }

    /**
     * rabbitmqctl's start_app: binds again the ports {@link #stopApp} closed, on the ports they had, and accepts
     * connections. Nothing happens when running.
     *
     * @throws IllegalStateException when the broker is shutting down, or a port cannot be bound again
     */
    public synchronized void startApp() throws InterruptedException {
        if (closed) {
            throw new IllegalStateException("the node is stopping");
        }
        if (!appStopped) {
            return;
        }
        broker.resumeAccepting();
        serverChannel = bind("port", boundPort(serverChannel, config.port()), amqp10, amqp091, null);
        if (amqp091Channel != null) {
            amqp091Channel = bind("amqp091-port", boundPort(amqp091Channel, config.amqp091Port()), null, amqp091,
                null);
        }
        if (amqpsChannel != null) {
            amqpsChannel = bind("amqps-port", boundPort(amqpsChannel, config.tls().port()), amqp10, amqp091, tls);
        }
        if (streams != null) {
            bindStreams();
        }
        appStopped = false;
        LOG.log(System.Logger.Level.INFO, "application started again (start_app): {0}", listeners());
    }

    /** The port {@code channel} was bound to (a configured 0 stays the port it got), or {@code configured}. */
    private static int boundPort(Channel channel, int configured) {
        return channel == null ? configured : ((InetSocketAddress) channel.localAddress()).getPort();
    }

    /** Closes the ports clients connect to (not the HTTP API's or the metrics'). */
    private void closeClientPorts() {
        for (Channel channel : new Channel[] {serverChannel, amqp091Channel, amqpsChannel, streamChannel,
                streamTlsChannel}) {
            if (channel != null) {
                channel.close().syncUninterruptibly();
            }
        }
    }

    /**
     * Closes {@code connections} as forced and waits for their sockets. All closes at once, each on its connection's
     * loop; a peer that reads nothing (its socket buffer full) or never answers would hold its close back forever,
     * so the wait is bounded: such a connection is cut when its loop stops (0-9-1 cuts one that sends no close-ok
     * sooner, Amqp091ConnectionHandler.CLOSE_OK_TIMEOUT_MILLIS).
     */
    private static void awaitClosed(List<ClientConnection> connections) {
        List<io.netty.util.concurrent.Future<?>> closes = new ArrayList<>();
        for (ClientConnection connection : connections) {
            closes.add(connection.closeForShutdown());
        }
        long deadline = System.nanoTime() + CLOSE_WAIT_NANOS;
        for (io.netty.util.concurrent.Future<?> close : closes) {
            close.awaitUninterruptibly(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
        }
    }
}
