package io.skiffmq.server.http;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.ServerChannel;
import io.netty.channel.socket.SocketChannel;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.timeout.IdleStateHandler;
import io.skiffmq.server.Broker;
import io.skiffmq.server.auth.SaslAuthenticator;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.function.Supplier;

/**
 * The HTTP listener of the RabbitMQ-compatible management API and the web console ({@code management-port}):
 * Netty's HTTP/1.1 codec, requests aggregated up to {@value #MAX_REQUEST_BYTES} bytes (a definitions import), idle
 * connections closed after {@value #IDLE_SECONDS} s, each connection on {@code group}'s loops (the broker's boss
 * group: the loops only parse and write, and read the console's files from memory; the work runs elsewhere).
 *
 * <p>{@link #start} and {@link #close} are called by one thread (the listener's owner); they start and stop the
 * {@link RateSampler}, which has a thread of its own.
 */
public final class HttpApiServer implements AutoCloseable {
    static final int MAX_REQUEST_BYTES = 64 << 20;
    /** Seconds without a read after which an HTTP connection with no request in progress is closed. */
    static final int IDLE_SECONDS = 60;

    private final EventLoopGroup group;
    private final Class<? extends ServerChannel> channelClass;
    private final HttpApi api;
    private final ConsoleFiles console = new ConsoleFiles();
    private final RateSampler rates;
    /** Set by {@link #start}; read by the overview and health checks on management threads. */
    private volatile Channel serverChannel;

    /**
     * @param listeners the broker's bound AMQP addresses, for the port-listener health check
     * @param application what {@code POST /api/app/stop} and {@code /start} act on
     * @param statisticsIntervalMillis how often the message rates' counters are sampled
     */
    public HttpApiServer(Broker broker, SaslAuthenticator sasl, EventLoopGroup group,
            Class<? extends ServerChannel> channelClass, Supplier<List<Listener>> listeners,
            NodeApplication application, long statisticsIntervalMillis) {
        this.group = group;
        this.channelClass = channelClass;
        Router router = new Router();
        this.api = new HttpApi(broker, sasl, router);
        Supplier<List<Listener>> all = () -> {
            List<Listener> bound = new java.util.ArrayList<>(listeners.get());
            Channel http = serverChannel;
            if (http != null) {
                bound.add(new Listener("http", (InetSocketAddress) http.localAddress()));
            }
            return bound;
        };
        this.rates = new RateSampler(broker, statisticsIntervalMillis);
        Resources.register(router, broker, api.mapper(), all, application, rates);
    }

    /** Binds and returns the bound address. */
    public InetSocketAddress start(String bindAddress, int port) throws InterruptedException {
        io.netty.channel.ChannelFuture bound = new ServerBootstrap()
            .group(group, group)
            .channel(channelClass)
            .childHandler(new ChannelInitializer<SocketChannel>() {
                @Override
                protected void initChannel(SocketChannel ch) {
                    ch.pipeline().addLast("idle", new IdleStateHandler(IDLE_SECONDS, 0, 0))
                        .addLast("http", new HttpServerCodec())
                        .addLast("aggregate", new HttpObjectAggregator(MAX_REQUEST_BYTES))
                        .addLast("api", new HttpApiHandler(api, console));
                }
            })
            .bind(bindAddress, port);
        serverChannel = io.skiffmq.server.transport.PortBinding.await(bound, bindAddress, port, "management-port");
        rates.start();
        return (InetSocketAddress) serverChannel.localAddress();
    }

    @Override
    public void close() {
        rates.close();
        if (serverChannel != null) {
            serverChannel.close().syncUninterruptibly();
        }
    }
}
