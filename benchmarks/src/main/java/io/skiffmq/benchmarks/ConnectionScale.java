package io.skiffmq.benchmarks;

import com.rabbitmq.client.ConnectionFactory;
import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollSocketChannel;
import io.skiffmq.codec.amqp10.AmqpFrame;
import io.skiffmq.codec.amqp10.PerformativeCodec;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Semaphore;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import org.HdrHistogram.Histogram;
import org.apache.qpid.proton.amqp.Binary;
import org.apache.qpid.proton.amqp.Symbol;
import org.apache.qpid.proton.amqp.UnsignedInteger;
import org.apache.qpid.proton.amqp.security.SaslInit;
import org.apache.qpid.proton.amqp.transport.Begin;
import org.apache.qpid.proton.amqp.transport.Open;

/**
 * Issue 30's many connections: {@code --connections} (15,000) idle connections over AMQP 1.0 or 0-9-1
 * ({@code --protocol}), each logged in with SASL PLAIN as guest, with one session or channel and heartbeats on
 * ({@code --heartbeat} seconds: 0-9-1's negotiated heartbeat, AMQP 1.0's idle-time-out is twice it; the client sends
 * a heartbeat or an empty frame every {@code heartbeat / 2} seconds, at a random phase per connection). Reported:
 * <ul>
 *   <li>the opening rate: connections from TCP connect to the channel or session open, at most
 *       {@code --concurrency} handshakes in flight, from {@code --client-threads} Netty threads;</li>
 *   <li>the broker's resident set ({@code VmRSS}) before and after, per connection; for a JVM, also its heap used
 *       after a full GC and its native memory outside the heap (NMT), per connection;</li>
 *   <li>the broker's CPU over {@code --idle} seconds of idleness (every connection open, only heartbeats);</li>
 *   <li>then one bystander (0-9-1, the RabbitMQ Java client; Qpid JMS over AMQP 1.0 for Artemis) publishing
 *       {@code --bystander-rate} msg/s to a queue of its own and consuming them, for {@code --bystander} seconds: its
 *       publish→consume latency.</li>
 * </ul>
 * The broker is a fresh SkiffMQ or Artemis ({@code --broker}; {@link BrokerProcess}) or, with {@code --port} and
 * {@code --pid}, one already running (a RabbitMQ node from {@code benchmarks/rabbitmq-node}; AMQP 1.0 needs its
 * {@code rabbitmq_amqp1_0} plugin). Client and broker are separate processes, each with its own open file limit: 15,000
 * connections need about 15,100 descriptors in each ({@code ulimit -n}).
 *
 * <pre>
 * benchmarks/connection-scale [--connections=15000] [--protocol=amqp10|amqp091] [--heartbeat=60] [--idle=30]
 *     [--bystander=20] [--bystander-rate=100] [--concurrency=200] [--client-threads=1] [--broker=skiffmq|artemis]
 *     [--port=PORT --pid=PID]
 * </pre>
 */
public final class ConnectionScale {
    /** USER_HZ: the unit of utime and stime in /proc/PID/stat. */
    private static final double TICKS_PER_SECOND = 100;

    private ConnectionScale() {
    }

    public static void main(String[] args) throws Exception {
        Map<String, String> defaults = new LinkedHashMap<>(Map.of("connections", "15000", "protocol", "amqp10",
            "heartbeat", "60", "idle", "30", "bystander", "20", "bystander-rate", "100", "concurrency", "200",
            "client-threads", "1", "port", "0", "pid", "0"));
        defaults.put("broker", "skiffmq");
        Map<String, String> options = CommandLine.parseOrExit("ConnectionScale", defaults, args);
        int connections = Integer.parseInt(options.get("connections"));
        boolean amqp10 = switch (options.get("protocol")) {
            case "amqp10" -> true;
            case "amqp091" -> false;
            default -> throw new IllegalArgumentException("--protocol is amqp10 or amqp091");
        };
        String kind = options.get("broker");
        if (kind.equals("artemis") && !amqp10) {
            throw new IllegalArgumentException("Artemis is measured over AMQP 1.0 (--protocol=amqp10)");
        }
        int heartbeat = Integer.parseInt(options.get("heartbeat"));
        BrokerProcess broker = null;
        int port = Integer.parseInt(options.get("port"));
        long pid = Long.parseLong(options.get("pid"));
        try {
            if (port == 0) {
                broker = BrokerProcess.start(kind, List.of(BrokerMemory.NMT), List.of());
                port = broker.port;
                pid = broker.pid();
            }
            boolean jvm = broker != null;
            System.out.printf(Locale.ROOT, "%s, %,d connections over %s, SASL PLAIN, one %s each, heartbeat %d s; "
                + "open file limit: client %s, broker %s; load average %s%n",
                jvm ? (kind.equals("artemis") ? "Artemis" : "SkiffMQ") : "broker pid " + pid,
                connections, amqp10 ? "AMQP 1.0" : "AMQP 0-9-1", amqp10 ? "session" : "channel", heartbeat,
                fdLimit("self"), fdLimit(Long.toString(pid)), PerfTestCompare.loadAverage());
            Thread.sleep(3000); // start-up settles (JIT, lazily loaded classes) before the baseline
            long rssBefore = rss(pid);
            long[] jvmBefore = jvm ? jvmMemory(pid) : null;
            EventLoopGroup group = new MultiThreadIoEventLoopGroup(Integer.parseInt(options.get("client-threads")),
                EpollIoHandler.newFactory());
            try {
                Clients clients = new Clients(amqp10, heartbeat);
                long started = System.nanoTime();
                long self = ProcessHandle.current().pid();
                long cpuStart = PerfTestCompare.ticks(pid);
                long clientStart = PerfTestCompare.ticks(self);
                clients.open(group, port, connections, Integer.parseInt(options.get("concurrency")));
                double openSeconds = (System.nanoTime() - started) / 1e9;
                double openCpu = (PerfTestCompare.ticks(pid) - cpuStart) / TICKS_PER_SECOND;
                double clientCpu = (PerfTestCompare.ticks(self) - clientStart) / TICKS_PER_SECOND;
                System.out.printf(Locale.ROOT, "opened:   %,d in %.1f s: %,.0f connections/s; broker CPU %.1f s "
                    + "(%.0f µs per connection), this client's %.1f s (%.0f µs per connection: its ceiling %,.0f/s "
                    + "per core)%n", clients.ready.get(), openSeconds, connections / openSeconds, openCpu,
                    openCpu * 1e6 / connections, clientCpu, clientCpu * 1e6 / connections,
                    connections / Math.max(0.01, clientCpu));
                Thread.sleep(5000);
                long rssAfter = rss(pid);
                System.out.printf(Locale.ROOT, "RSS:      %,d KB before, %,d KB after: %.1f KB per connection%n",
                    rssBefore >> 10, rssAfter >> 10, (rssAfter - rssBefore) / 1024.0 / connections);
                long idleStart = PerfTestCompare.ticks(pid);
                long idleNanos = System.nanoTime();
                Thread.sleep(Long.parseLong(options.get("idle")) * 1000);
                double idleSeconds = (System.nanoTime() - idleNanos) / 1e9;
                double idleCpu = (PerfTestCompare.ticks(pid) - idleStart) / TICKS_PER_SECOND;
                System.out.printf(Locale.ROOT, "idle:     broker CPU %.2f s in %.0f s: %.2f%% of a core (%.1f µs/s per "
                    + "connection); %d connection(s) closed meanwhile%n", idleCpu, idleSeconds,
                    idleCpu * 100 / idleSeconds, idleCpu * 1e6 / idleSeconds / connections, clients.closed.get());
                if (jvm) {
                    long[] jvmAfter = jvmMemory(pid);
                    System.out.printf(Locale.ROOT, "JVM:      heap after GC %.1f KB, native outside the heap (NMT) "
                        + "%.1f KB per connection%n", (jvmAfter[0] - jvmBefore[0]) / 1024.0 / connections,
                        (jvmAfter[1] - jvmBefore[1]) / 1024.0 / connections);
                }
                int seconds = Integer.parseInt(options.get("bystander"));
                int rate = Integer.parseInt(options.get("bystander-rate"));
                if (kind.equals("artemis")) {
                    jmsBystander(port, seconds, rate);
                } else {
                    bystander(port, seconds, rate);
                }
                System.out.printf(Locale.ROOT, "still open: %,d of %,d; load average %s%n",
                    clients.ready.get() - clients.closed.get(), connections, PerfTestCompare.loadAverage());
                clients.close();
            } finally {
                group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
            }
        } finally {
            if (broker != null) {
                broker.close();
            }
        }
        System.exit(0);
    }

    /** Publishes and consumes {@code rate} msg/s for {@code seconds} on one 0-9-1 connection; prints the latency. */
    private static void bystander(int port, int seconds, int rate) throws Exception {
        ConnectionFactory factory = new ConnectionFactory();
        factory.setHost("127.0.0.1");
        factory.setPort(port);
        Histogram latency = new Histogram(TimeUnit.SECONDS.toNanos(10), 3);
        try (com.rabbitmq.client.Connection connection = factory.newConnection("bystander")) {
            com.rabbitmq.client.Channel channel = connection.createChannel();
            String queue = channel.queueDeclare().getQueue();
            channel.basicConsume(queue, true, (tag, delivery) -> {
                long sent = ByteBuffer.wrap(delivery.getBody()).getLong();
                synchronized (latency) {
                    latency.recordValue(Math.max(0, System.nanoTime() - sent));
                }
            }, tag -> { });
            long interval = 1_000_000_000L / rate;
            long next = System.nanoTime();
            long end = next + TimeUnit.SECONDS.toNanos(seconds);
            byte[] body = new byte[12];
            while (next < end) {
                LockSupport.parkNanos(next - System.nanoTime());
                ByteBuffer.wrap(body).putLong(0, System.nanoTime());
                channel.basicPublish("", queue, null, body);
                next += interval;
            }
            Thread.sleep(1000); // the last ones arrive
        }
        printBystander(latency, rate);
    }

    /**
     * The bystander over AMQP 1.0, for a broker without 0-9-1 (Artemis): Qpid JMS, a non-persistent producer and an
     * auto-acknowledging consumer on a queue of its own.
     */
    private static void jmsBystander(int port, int seconds, int rate) throws Exception {
        Histogram latency = new Histogram(TimeUnit.SECONDS.toNanos(10), 3);
        org.apache.qpid.jms.JmsConnectionFactory factory = new org.apache.qpid.jms.JmsConnectionFactory("guest",
            "guest", "amqp://127.0.0.1:" + port);
        try (jakarta.jms.Connection connection = factory.createConnection()) {
            connection.start();
            jakarta.jms.Session session = connection.createSession(false, jakarta.jms.Session.AUTO_ACKNOWLEDGE);
            jakarta.jms.Queue queue = session.createQueue("bystander");
            session.createConsumer(queue).setMessageListener(m -> {
                try {
                    long sent = ((jakarta.jms.BytesMessage) m).readLong();
                    synchronized (latency) {
                        latency.recordValue(Math.max(0, System.nanoTime() - sent));
                    }
                } catch (jakarta.jms.JMSException e) {
                    throw new IllegalStateException(e);
                }
            });
            jakarta.jms.MessageProducer producer = session.createProducer(queue);
            producer.setDeliveryMode(jakarta.jms.DeliveryMode.NON_PERSISTENT);
            long interval = 1_000_000_000L / rate;
            long next = System.nanoTime();
            long end = next + TimeUnit.SECONDS.toNanos(seconds);
            while (next < end) {
                LockSupport.parkNanos(next - System.nanoTime());
                jakarta.jms.BytesMessage message = session.createBytesMessage();
                message.writeLong(System.nanoTime());
                message.writeInt(0); // 12 bytes, as the 0-9-1 bystander's
                producer.send(message);
                next += interval;
            }
            Thread.sleep(1000); // the last ones arrive
        }
        printBystander(latency, rate);
    }

    private static void printBystander(Histogram latency, int rate) {
        synchronized (latency) {
            System.out.printf(Locale.ROOT, "bystander: %,d messages at %d msg/s, publish→consume p50 %.2f ms, p99 %.2f "
                + "ms, max %.2f ms%n", latency.getTotalCount(), rate, latency.getValueAtPercentile(50) / 1e6,
                latency.getValueAtPercentile(99) / 1e6, latency.getMaxValue() / 1e6);
        }
    }

    /**
     * The client side: one Netty handler per connection, pre-encoded frames, a few fields of state each. Handshakes
     * are pipelined where the protocol lets a client: after SASL's outcome (AMQP 1.0), after {@code tune} (0-9-1).
     */
    private static final class Clients {
        final boolean amqp10;
        final int heartbeat;
        final byte[] hello;
        final byte[] afterSasl;
        final byte[] startOk;
        final byte[] afterTune;
        final byte[] beat;
        final AtomicInteger ready = new AtomicInteger();
        final AtomicInteger closed = new AtomicInteger();
        final ConcurrentLinkedQueue<Channel> channels = new ConcurrentLinkedQueue<>();

        Clients(boolean amqp10, int heartbeat) {
            this.amqp10 = amqp10;
            this.heartbeat = heartbeat;
            if (amqp10) {
                SaslInit init = new SaslInit();
                init.setMechanism(Symbol.valueOf("PLAIN"));
                init.setInitialResponse(new Binary("\0guest\0guest".getBytes(StandardCharsets.US_ASCII)));
                hello = concat(new byte[] {'A', 'M', 'Q', 'P', 3, 1, 0, 0}, amqp10Frame(AmqpFrame.TYPE_SASL, init));
                Open open = new Open();
                open.setContainerId("connection-scale");
                open.setIdleTimeOut(UnsignedInteger.valueOf(heartbeat * 2000L));
                Begin begin = new Begin();
                begin.setNextOutgoingId(UnsignedInteger.ZERO);
                begin.setIncomingWindow(UnsignedInteger.valueOf(100));
                begin.setOutgoingWindow(UnsignedInteger.valueOf(100));
                afterSasl = concat(new byte[] {'A', 'M', 'Q', 'P', 0, 1, 0, 0},
                    amqp10Frame(AmqpFrame.TYPE_AMQP, open), amqp10Frame(AmqpFrame.TYPE_AMQP, begin));
                startOk = null;
                afterTune = null;
                beat = new byte[] {0, 0, 0, 8, 2, 0, 0, 0};
            } else {
                hello = new byte[] {'A', 'M', 'Q', 'P', 0, 0, 9, 1};
                afterSasl = null;
                ByteBuffer ok = ByteBuffer.allocate(64);
                ok.putInt(0); // client-properties: an empty table
                shortString(ok, "PLAIN");
                byte[] response = "\0guest\0guest".getBytes(StandardCharsets.US_ASCII);
                ok.putInt(response.length).put(response);
                shortString(ok, "en_US");
                startOk = method(0, 10, 11, ok);
                ByteBuffer tuneOk = ByteBuffer.allocate(8).putShort((short) 2047).putInt(131072)
                    .putShort((short) heartbeat);
                ByteBuffer open = ByteBuffer.allocate(8);
                shortString(open, "/");
                shortString(open, "");
                open.put((byte) 0);
                ByteBuffer channelOpen = ByteBuffer.allocate(1);
                shortString(channelOpen, "");
                afterTune = concat(method(0, 10, 31, tuneOk), method(0, 10, 40, open), method(1, 20, 10, channelOpen));
                beat = new byte[] {8, 0, 0, 0, 0, 0, 0, (byte) 0xCE};
            }
        }

        /** Opens {@code count} connections, at most {@code concurrency} handshakes at a time; returns when all are. */
        void open(EventLoopGroup group, int port, int count, int concurrency) throws InterruptedException {
            Semaphore inFlight = new Semaphore(concurrency);
            Bootstrap bootstrap = new Bootstrap().group(group).channel(EpollSocketChannel.class)
                .option(ChannelOption.TCP_NODELAY, true);
            for (int i = 0; i < count; i++) {
                inFlight.acquire();
                bootstrap.handler(amqp10 ? new Amqp10Client(inFlight) : new Amqp091Client(inFlight))
                    .connect("127.0.0.1", port).addListener((ChannelFutureListener) f -> {
                        if (!f.isSuccess()) {
                            System.err.println("connect failed: " + f.cause());
                            inFlight.release();
                        } else {
                            channels.add(f.channel());
                            f.channel().closeFuture().addListener(c -> closed.incrementAndGet());
                        }
                    });
            }
            inFlight.acquire(concurrency); // every handshake is done
            inFlight.release(concurrency);
        }

        void close() {
            channels.forEach(Channel::close);
        }

        /** Once open: a heartbeat every {@code heartbeat / 2} s, the first at a random phase. */
        void keepAlive(ChannelHandlerContext ctx) {
            long period = heartbeat * 500L;
            ctx.executor().scheduleAtFixedRate(() -> ctx.writeAndFlush(Unpooled.wrappedBuffer(beat)),
                ThreadLocalRandom.current().nextLong(period), period, TimeUnit.MILLISECONDS);
        }

        /**
         * One connection's client side: writes the protocol's hello, then steps over what the broker writes until
         * {@link #step} says the session or channel is open; from then on it reads and drops, and keeps heartbeats.
         */
        private abstract class Client extends ChannelInboundHandlerAdapter {
            private final Semaphore inFlight;
            private ByteBuf pending = Unpooled.EMPTY_BUFFER;
            private boolean done;

            Client(Semaphore inFlight) {
                this.inFlight = inFlight;
            }

            /** Consumes what it can of {@code all} (answering as it goes); true once the connection is ready. */
            abstract boolean step(ChannelHandlerContext ctx, ByteBuf all);

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
                done = step(ctx, all);
                if (done) {
                    ready.incrementAndGet();
                    inFlight.release();
                    keepAlive(ctx);
                }
                pending = done ? Unpooled.EMPTY_BUFFER : Unpooled.copiedBuffer(all);
                all.release();
            }
        }

        /** SASL header and init; open and begin after SASL's mechanisms and outcome; ready once both are back. */
        private final class Amqp10Client extends Client {
            private int frames;

            Amqp10Client(Semaphore inFlight) {
                super(inFlight);
            }

            @Override
            boolean step(ChannelHandlerContext ctx, ByteBuf all) {
                for (int kind; (kind = HandshakeFrames.skip(all)) != HandshakeFrames.INCOMPLETE; ) {
                    if (kind == HandshakeFrames.FRAME && ++frames == 2) {
                        ctx.writeAndFlush(Unpooled.wrappedBuffer(afterSasl));
                    } else if (frames == 4) { // open and begin
                        return true;
                    }
                }
                return false;
            }
        }

        /** Protocol header; start-ok on start; tune-ok, open and channel.open on tune; ready on channel.open-ok. */
        private final class Amqp091Client extends Client {
            Amqp091Client(Semaphore inFlight) {
                super(inFlight);
            }

            @Override
            boolean step(ChannelHandlerContext ctx, ByteBuf all) {
                while (all.readableBytes() >= 7) {
                    int start = all.readerIndex();
                    int size = all.getInt(start + 3);
                    if (all.readableBytes() < 8 + size) {
                        return false;
                    }
                    all.skipBytes(8 + size);
                    if (all.getByte(start) != 1) {
                        continue; // a heartbeat
                    }
                    int method = all.getShort(start + 7) << 16 | all.getShort(start + 9); // class and method ids
                    if (method == (10 << 16 | 10)) {
                        ctx.writeAndFlush(Unpooled.wrappedBuffer(startOk));
                    } else if (method == (10 << 16 | 30)) {
                        ctx.writeAndFlush(Unpooled.wrappedBuffer(afterTune));
                    } else if (method == (20 << 16 | 11)) {
                        return true;
                    }
                }
                return false;
            }
        }
    }

    private static byte[] amqp10Frame(int type, Object performative) {
        ByteBuf buf = Unpooled.buffer();
        PerformativeCodec.writeFrame(buf, type, 0, performative, 0);
        byte[] bytes = new byte[buf.readableBytes()];
        buf.readBytes(bytes);
        return bytes;
    }

    /** A 0-9-1 method frame: type 1, channel, size, class and method ids, arguments, frame-end. */
    private static byte[] method(int channel, int classId, int methodId, ByteBuffer arguments) {
        arguments.flip();
        ByteBuffer frame = ByteBuffer.allocate(12 + arguments.remaining());
        frame.put((byte) 1).putShort((short) channel).putInt(4 + arguments.remaining()).putShort((short) classId)
            .putShort((short) methodId).put(arguments).put((byte) 0xCE);
        return frame.array();
    }

    private static void shortString(ByteBuffer buffer, String value) {
        byte[] bytes = value.getBytes(StandardCharsets.US_ASCII);
        buffer.put((byte) bytes.length).put(bytes);
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

    /** {heap used after a full GC, native committed outside the heap}, in bytes (see {@link ConnectionMemory}). */
    private static long[] jvmMemory(long pid) throws Exception {
        long[] kb = ConnectionMemory.measure(pid);
        return new long[] {kb[0] * 1024, kb[1] * 1024};
    }

    private static long rss(long pid) throws Exception {
        for (String line : Files.readAllLines(Path.of("/proc", Long.toString(pid), "status"))) {
            if (line.startsWith("VmRSS:")) {
                return Long.parseLong(line.replaceAll("\\D", "")) * 1024;
            }
        }
        throw new IllegalStateException("no VmRSS for " + pid);
    }

    private static String fdLimit(String pid) throws Exception {
        for (String line : Files.readAllLines(Path.of("/proc", pid, "limits"))) {
            if (line.startsWith("Max open files")) {
                String[] f = line.trim().split("\\s+");
                return f[3] + " (hard " + f[4] + ")";
            }
        }
        return "unknown";
    }
}
