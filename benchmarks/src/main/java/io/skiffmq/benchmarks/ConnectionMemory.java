package io.skiffmq.benchmarks;

import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
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
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.qpid.proton.amqp.Binary;
import org.apache.qpid.proton.amqp.Symbol;
import org.apache.qpid.proton.amqp.UnsignedInteger;
import org.apache.qpid.proton.amqp.security.SaslInit;
import org.apache.qpid.proton.amqp.transport.Begin;
import org.apache.qpid.proton.amqp.transport.Open;

/**
 * Memory per idle connection, the shape RabbitMQ measured for native AMQP 1.0 (seed 003): N connections, each
 * SASL ANONYMOUS ({@code --mechanism=PLAIN}: as guest), {@code open} and two sessions, no links. The broker runs as a
 * child JVM with native memory tracking; one Netty client thread opens the connections (pre-encoded frames, a few
 * bytes of state each) and keeps them alive with empty frames. Reported, from {@code jcmd} before and after: heap
 * used after a full GC, and native memory committed outside the Java heap (NMT: Netty's direct buffers, thread
 * stacks, metaspace…), each per connection.
 *
 * <pre>
 * java -cp benchmarks/target/benchmarks.jar io.skiffmq.benchmarks.ConnectionMemory --connections=10000 \
 *     [--broker=skiffmq|artemis] [--mechanism=ANONYMOUS|PLAIN]
 * </pre>
 *
 * Artemis ({@link ArtemisBroker}) runs without persistence and with its default JVM settings; SkiffMQ with the
 * flags of its launcher.
 */
public final class ConnectionMemory {
    private static final Pattern HEAP_USED = Pattern.compile("used (\\d+)K");
    private static final Pattern NMT_TOTAL = Pattern.compile("Total: reserved=\\d+KB, committed=(\\d+)KB");
    private static final Pattern NMT_HEAP = Pattern.compile("Java Heap \\(reserved=\\d+KB, committed=(\\d+)KB\\)");

    private ConnectionMemory() {
    }

    public static void main(String[] args) throws Exception {
        Map<String, String> options = CommandLine.parseOrExit("ConnectionMemory", Map.of("connections", "10000",
            "mechanism", "ANONYMOUS", "broker", "skiffmq"), args);
        int connections = Integer.parseInt(options.get("connections"));
        boolean anonymous = options.get("mechanism").equals("ANONYMOUS");
        List<String> settings = options.get("broker").equals("skiffmq") ? List.<String>of()
            : List.of("--persistence=false");
        try (BrokerProcess broker = BrokerProcess.start(options.get("broker"),
                List.of("-XX:NativeMemoryTracking=summary"), settings)) {
            int port = broker.port;
            Thread.sleep(2000); // let start-up settle (JIT, lazily loaded classes) before the baseline
            long[] before = measure(broker.pid());
            EventLoopGroup group = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
            try {
                long started = System.nanoTime();
                List<Channel> open = connect(group, port, connections, anonymous);
                System.out.printf("%s: %,d connections (SASL %s) with 2 sessions each opened in %.1f s%n",
                    options.get("broker"), open.size(), options.get("mechanism"), (System.nanoTime() - started) / 1e9);
                long[] after = measure(broker.pid());
                System.out.printf("broker heap used after GC: %,d KB before, %,d KB after: %.1f KB per connection%n",
                    before[0], after[0], (after[0] - before[0]) / (double) connections);
                System.out.printf("broker native committed outside the heap (NMT): %,d KB before, %,d KB after: "
                    + "%.1f KB per connection%n", before[1], after[1], (after[1] - before[1]) / (double) connections);
                System.out.printf("total: %.1f KB per connection%n",
                    (after[0] - before[0] + after[1] - before[1]) / (double) connections);
                for (Channel c : open) {
                    c.close();
                }
            } finally {
                group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
            }
        }
    }

    /** {heap used after a full GC, native committed outside the heap}, in KB. */
    static long[] measure(long pid) throws Exception {
        jcmd(pid, "GC.run");
        String heap = jcmd(pid, "GC.heap_info");
        String nmt = jcmd(pid, "VM.native_memory", "summary");
        return new long[] {find(HEAP_USED, heap), find(NMT_TOTAL, nmt) - find(NMT_HEAP, nmt)};
    }

    private static long find(Pattern pattern, String text) {
        Matcher m = pattern.matcher(text);
        if (!m.find()) {
            throw new IllegalStateException("no " + pattern + " in:\n" + text);
        }
        return Long.parseLong(m.group(1));
    }

    private static String jcmd(long pid, String... command) throws Exception {
        List<String> line = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "jcmd").toString(),
            Long.toString(pid)));
        line.addAll(List.of(command));
        Process p = new ProcessBuilder(line).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        p.waitFor();
        return out;
    }

    private static byte[] frame(int type, int channel, Object performative) {
        ByteBuf buf = Unpooled.buffer();
        PerformativeCodec.writeFrame(buf, type, channel, performative, 0);
        byte[] bytes = new byte[buf.readableBytes()];
        buf.readBytes(bytes);
        return bytes;
    }

    private static byte[] concat(byte[]... parts) {
        ByteBuf buf = Unpooled.buffer();
        for (byte[] part : parts) {
            buf.writeBytes(part);
        }
        byte[] bytes = new byte[buf.readableBytes()];
        buf.readBytes(bytes);
        return bytes;
    }

    /** Opens the connections, a few hundred at a time; returns once all have both sessions. */
    private static List<Channel> connect(EventLoopGroup group, int port, int count, boolean anonymous)
            throws Exception {
        SaslInit init = new SaslInit();
        // PLAIN costs the broker a PBKDF2 check (about 15 ms here) per connection; ANONYMOUS measures the rest
        init.setMechanism(Symbol.valueOf(anonymous ? "ANONYMOUS" : "PLAIN"));
        init.setInitialResponse(new Binary(anonymous ? new byte[0]
            : "\0guest\0guest".getBytes(StandardCharsets.US_ASCII)));
        byte[] sasl = concat(new byte[] {'A', 'M', 'Q', 'P', 3, 1, 0, 0}, frame(AmqpFrame.TYPE_SASL, 0, init));
        Open openFrame = new Open();
        openFrame.setContainerId("connection-memory");
        Begin begin = new Begin();
        begin.setNextOutgoingId(UnsignedInteger.ZERO);
        begin.setIncomingWindow(UnsignedInteger.valueOf(100));
        begin.setOutgoingWindow(UnsignedInteger.valueOf(100));
        byte[] amqp = concat(new byte[] {'A', 'M', 'Q', 'P', 0, 1, 0, 0}, frame(AmqpFrame.TYPE_AMQP, 0, openFrame),
            frame(AmqpFrame.TYPE_AMQP, 0, begin), frame(AmqpFrame.TYPE_AMQP, 1, begin));
        byte[] empty = {0, 0, 0, 8, 2, 0, 0, 0};

        List<Channel> channels = new ArrayList<>();
        Bootstrap bootstrap = new Bootstrap().group(group).channel(NioSocketChannel.class)
            .option(ChannelOption.TCP_NODELAY, true);
        int batch = 200;
        for (int first = 0; first < count; first += batch) {
            int n = Math.min(batch, count - first);
            CountDownLatch ready = new CountDownLatch(n);
            for (int i = 0; i < n; i++) {
                Channel channel = bootstrap.handler(new Handshake(sasl, amqp, empty, ready)).connect("127.0.0.1", port)
                    .sync().channel();
                channels.add(channel);
            }
            if (!ready.await(60, TimeUnit.SECONDS)) {
                throw new IllegalStateException("connections " + first + ".." + (first + n) + " did not all open");
            }
        }
        return channels;
    }

    /**
     * One connection's client side: SASL, then open and two begins once the outcome is in; counts frames by their
     * size fields only (protocol headers are 8 bytes starting with 'A'). Keeps the connection alive with empty
     * frames, as a real client does, so the broker's idle timeout stays armed as in production.
     */
    private static final class Handshake extends ChannelInboundHandlerAdapter {
        private final byte[] sasl;
        private final byte[] amqp;
        private final byte[] empty;
        private final CountDownLatch ready;
        private ByteBuf pending = Unpooled.EMPTY_BUFFER;
        private int frames;
        private boolean done;

        Handshake(byte[] sasl, byte[] amqp, byte[] empty, CountDownLatch ready) {
            this.sasl = sasl;
            this.amqp = amqp;
            this.empty = empty;
            this.ready = ready;
        }

        @Override
        public void channelActive(ChannelHandlerContext ctx) {
            ctx.writeAndFlush(Unpooled.wrappedBuffer(sasl));
            ctx.executor().scheduleAtFixedRate(() -> ctx.writeAndFlush(Unpooled.wrappedBuffer(empty)), 20, 20,
                TimeUnit.SECONDS);
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            ByteBuf in = (ByteBuf) msg;
            if (done) {
                in.release();
                return;
            }
            ByteBuf all = Unpooled.wrappedBuffer(pending, in);
            for (int kind; (kind = HandshakeFrames.skip(all)) != HandshakeFrames.INCOMPLETE; ) {
                if (kind == HandshakeFrames.FRAME) {
                    frames++;
                    if (frames == 2) {
                        ctx.writeAndFlush(Unpooled.wrappedBuffer(amqp)); // after mechanisms and outcome
                    } else if (frames == 5) {
                        done = true; // open and both begins
                        ready.countDown();
                    }
                }
            }
            pending = done ? Unpooled.EMPTY_BUFFER : Unpooled.copiedBuffer(all);
            all.release();
        }
    }
}
