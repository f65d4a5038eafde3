package io.skiffmq.benchmarks;

import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.skiffmq.codec.amqp10.AmqpFrame;
import io.skiffmq.codec.amqp10.PerformativeCodec;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.qpid.proton.amqp.Binary;
import org.apache.qpid.proton.amqp.Symbol;
import org.apache.qpid.proton.amqp.security.SaslInit;
import org.apache.qpid.proton.amqp.transport.Close;
import org.apache.qpid.proton.amqp.transport.Open;

/**
 * Logins per second: AMQP 1.0 connections that each authenticate with SASL PLAIN as guest, get the broker's
 * {@code open}, close and go, {@code --concurrency} of them at a time, for {@code --connections} in all (the first
 * tenth is warm-up, not counted). The client pipelines SASL header, {@code sasl-init}, AMQP header, {@code open} in
 * one write, so each connection costs one round trip plus the TCP handshake. The broker runs as a child JVM.
 *
 * <pre>
 * java -cp benchmarks/target/benchmarks.jar io.skiffmq.benchmarks.ConnectionRate --connections=50000 \
 *     [--concurrency=100] [--mechanism=PLAIN|ANONYMOUS] [--client-threads=1]
 * </pre>
 */
public final class ConnectionRate {
    private ConnectionRate() {
    }

    public static void main(String[] args) throws Exception {
        Map<String, String> options = CommandLine.parseOrExit("ConnectionRate", Map.of("connections", "50000",
            "concurrency", "100", "mechanism", "PLAIN", "client-threads", "1"), args);
        int connections = Integer.parseInt(options.get("connections"));
        int concurrency = Integer.parseInt(options.get("concurrency"));
        String mechanism = options.get("mechanism");
        byte[] hello = hello(mechanism);
        try (BrokerProcess broker = BrokerProcess.start("skiffmq", List.of(), List.of())) {
            EventLoopGroup group = new MultiThreadIoEventLoopGroup(Integer.parseInt(options.get("client-threads")),
                NioIoHandler.newFactory());
            try {
                Bootstrap bootstrap = new Bootstrap().group(group).channel(NioSocketChannel.class)
                    .option(ChannelOption.TCP_NODELAY, true).option(ChannelOption.SO_LINGER, 0);
                int warmUp = connections / 10;
                run(bootstrap, broker.port, warmUp, concurrency, hello);
                long started = System.nanoTime();
                long failed = run(bootstrap, broker.port, connections - warmUp, concurrency, hello);
                double seconds = (System.nanoTime() - started) / 1e9;
                System.out.printf("%,d connections (SASL %s, %d at a time) in %.2f s: %,.0f per second, %d failed%n",
                    connections - warmUp, mechanism, concurrency, seconds, (connections - warmUp) / seconds, failed);
            } finally {
                group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
            }
        }
    }

    /** Opens {@code count} connections, {@code concurrency} at a time; returns how many did not get an open. */
    private static long run(Bootstrap bootstrap, int port, int count, int concurrency, byte[] hello)
            throws InterruptedException {
        Semaphore window = new Semaphore(concurrency);
        AtomicLong failed = new AtomicLong();
        for (int i = 0; i < count; i++) {
            window.acquire();
            bootstrap.clone().handler(new Login(hello, window, failed)).connect("127.0.0.1", port)
                .addListener((ChannelFutureListener) f -> {
                    if (!f.isSuccess()) {
                        failed.incrementAndGet();
                        window.release();
                    }
                });
        }
        window.acquire(concurrency);
        return failed.get();
    }

    private static byte[] hello(String mechanism) {
        SaslInit init = new SaslInit();
        init.setMechanism(Symbol.valueOf(mechanism));
        init.setInitialResponse(new Binary(mechanism.equals("PLAIN")
            ? "\0guest\0guest".getBytes(StandardCharsets.US_ASCII) : new byte[0]));
        Open open = new Open();
        open.setContainerId("connection-rate");
        ByteBuf buf = Unpooled.buffer();
        buf.writeBytes(new byte[] {'A', 'M', 'Q', 'P', 3, 1, 0, 0});
        PerformativeCodec.writeFrame(buf, AmqpFrame.TYPE_SASL, 0, init, 0);
        buf.writeBytes(new byte[] {'A', 'M', 'Q', 'P', 0, 1, 0, 0});
        PerformativeCodec.writeFrame(buf, AmqpFrame.TYPE_AMQP, 0, open, 0);
        byte[] bytes = new byte[buf.readableBytes()];
        buf.readBytes(bytes);
        return bytes;
    }

    private static byte[] close() {
        ByteBuf buf = Unpooled.buffer();
        PerformativeCodec.writeFrame(buf, AmqpFrame.TYPE_AMQP, 0, new Close(), 0);
        byte[] bytes = new byte[buf.readableBytes()];
        buf.readBytes(bytes);
        return bytes;
    }

    private static final byte[] CLOSE = close();

    /**
     * One connection: sends the whole hello, counts what comes back by size fields (headers are 8 bytes starting
     * with 'A'): SASL header, mechanisms, outcome, AMQP header, open. The open means logged in: it closes.
     */
    private static final class Login extends ChannelInboundHandlerAdapter {
        private final byte[] hello;
        private final Semaphore window;
        private final AtomicLong failed;
        private ByteBuf pending = Unpooled.EMPTY_BUFFER;
        private int frames;
        private boolean done;

        Login(byte[] hello, Semaphore window, AtomicLong failed) {
            this.hello = hello;
            this.window = window;
            this.failed = failed;
        }

        @Override
        public void channelActive(ChannelHandlerContext ctx) {
            ctx.writeAndFlush(Unpooled.wrappedBuffer(hello));
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            ByteBuf in = (ByteBuf) msg;
            if (done) {
                in.release();
                return;
            }
            ByteBuf all = Unpooled.wrappedBuffer(pending, in);
            for (int kind; !done && (kind = HandshakeFrames.skip(all)) != HandshakeFrames.INCOMPLETE; ) {
                if (kind == HandshakeFrames.FRAME && ++frames == 3) {
                    done = true; // mechanisms, outcome, open
                    ctx.writeAndFlush(Unpooled.wrappedBuffer(CLOSE)).addListener(ChannelFutureListener.CLOSE);
                }
            }
            pending = done ? Unpooled.EMPTY_BUFFER : Unpooled.copiedBuffer(all);
            all.release();
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            pending.release();
            if (!done) {
                failed.incrementAndGet();
            }
            window.release();
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            ctx.close();
        }
    }
}
