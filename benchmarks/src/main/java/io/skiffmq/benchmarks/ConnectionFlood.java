package io.skiffmq.benchmarks;

import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.nio.NioSocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;
import org.HdrHistogram.Histogram;

/**
 * A flood of garbage connections against a broker, with a bystander beside it: {@code --concurrency} connections
 * at a time, as fast as they go, each writing a protocol header ({@code --header}) and then a corpus file (round
 * robin over {@code --corpus}, a file or a directory) or random bytes, reading until the broker closes it or
 * {@code --hold-ms} passes (then a reset). Each second it prints the connections accepted (the broker answered
 * something, or held them) and rejected (closed with no byte: over {@code max-preauth-connections}), and the p99
 * and max of the bystander's round trips (RabbitMQ Java client, AMQP 0-9-1: publish one message to its queue,
 * consume it back), recorded in an HdrHistogram. The broker is a child JVM ({@code --preauth} its
 * {@code max-preauth-connections}), or one already running on {@code --port}.
 *
 * <pre>
 * java -cp benchmarks/target/benchmarks.jar io.skiffmq.benchmarks.ConnectionFlood [--seconds=10]
 *     [--concurrency=500] [--header=sasl|amqp|amqp091|none] [--corpus=../shared/corpora/amqp10]
 *     [--hold-ms=1000] [--preauth=1000] [--port=0] [--client-threads=1]
 * </pre>
 */
public final class ConnectionFlood {
    private static final Map<String, byte[]> HEADERS = Map.of(
        "sasl", new byte[] {'A', 'M', 'Q', 'P', 3, 1, 0, 0},
        "amqp", new byte[] {'A', 'M', 'Q', 'P', 0, 1, 0, 0},
        "amqp091", new byte[] {'A', 'M', 'Q', 'P', 0, 0, 9, 1},
        "none", new byte[0]);

    private final AtomicLong accepted = new AtomicLong();
    private final AtomicLong rejected = new AtomicLong();
    private final AtomicLong failed = new AtomicLong();

    private ConnectionFlood() {
    }

    public static void main(String[] args) throws Exception {
        Map<String, String> options = CommandLine.parseOrExit("ConnectionFlood", Map.of("seconds", "10",
            "concurrency", "500", "header", "sasl", "corpus", "", "hold-ms", "1000", "preauth", "1000", "port", "0",
            "client-threads", "1"), args);
        byte[] header = HEADERS.get(options.get("header"));
        if (header == null) {
            throw new IllegalArgumentException("--header must be one of " + HEADERS.keySet());
        }
        List<byte[]> inputs = inputs(options.get("corpus"));
        int port = Integer.parseInt(options.get("port"));
        BrokerProcess broker = port != 0 ? null : BrokerProcess.start("skiffmq", List.of(),
            List.of("--max-preauth-connections=" + options.get("preauth")));
        try {
            new ConnectionFlood().run(broker == null ? port : broker.port, header, inputs, options);
        } finally {
            if (broker != null) {
                broker.close();
            }
        }
    }

    /** The files under {@code corpus} (READMEs aside), or, when it is empty, 1,000 random inputs of 16–1,024 bytes. */
    private static List<byte[]> inputs(String corpus) throws Exception {
        List<byte[]> inputs = new ArrayList<>();
        if (corpus.isEmpty()) {
            Random random = new Random(17);
            for (int i = 0; i < 1000; i++) {
                byte[] bytes = new byte[16 + random.nextInt(1009)];
                random.nextBytes(bytes);
                inputs.add(bytes);
            }
            return inputs;
        }
        try (Stream<Path> files = Files.walk(Path.of(corpus))) {
            for (Path file : files.filter(Files::isRegularFile)
                    .filter(f -> !f.getFileName().toString().startsWith("README")).sorted().toList()) {
                inputs.add(Files.readAllBytes(file));
            }
        }
        if (inputs.isEmpty()) {
            throw new IllegalArgumentException("no files in " + corpus);
        }
        return inputs;
    }

    private void run(int port, byte[] header, List<byte[]> inputs, Map<String, String> options) throws Exception {
        int seconds = Integer.parseInt(options.get("seconds"));
        int concurrency = Integer.parseInt(options.get("concurrency"));
        long holdMillis = Long.parseLong(options.get("hold-ms"));
        Bystander bystander = new Bystander(port);
        EventLoopGroup group = new MultiThreadIoEventLoopGroup(Integer.parseInt(options.get("client-threads")),
            NioIoHandler.newFactory());
        Semaphore window = new Semaphore(concurrency);
        Thread flood = new Thread(() -> {
            Bootstrap bootstrap = new Bootstrap().group(group).channel(NioSocketChannel.class)
                .option(ChannelOption.TCP_NODELAY, true).option(ChannelOption.SO_LINGER, 0)
                .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, 5000);
            for (long i = 0; !Thread.currentThread().isInterrupted(); i++) {
                try {
                    window.acquire();
                } catch (InterruptedException e) {
                    return;
                }
                byte[] input = inputs.get((int) (i % inputs.size()));
                bootstrap.clone().handler(new Garbage(Unpooled.wrappedBuffer(header, input), holdMillis, window))
                    .connect("127.0.0.1", port).addListener(f -> {
                        if (!f.isSuccess()) {
                            failed.incrementAndGet();
                            window.release();
                        }
                    });
            }
        }, "flood");
        flood.setDaemon(true);
        System.out.printf("%4s %10s %10s %8s %11s %13s %13s%n", "s", "accepted/s", "rejected/s", "failed",
            "round trips", "p99 ms", "max ms");
        try {
            bystander.start();
            flood.start();
            long next = System.nanoTime();
            long[] last = new long[3];
            for (int s = 1; s <= seconds; s++) {
                next += TimeUnit.SECONDS.toNanos(1);
                TimeUnit.NANOSECONDS.sleep(Math.max(0, next - System.nanoTime()));
                long[] now = {accepted.get(), rejected.get(), failed.get()};
                Histogram second = bystander.interval();
                System.out.printf("%4d %10d %10d %8d %11d %13.2f %13.2f%n", s, now[0] - last[0], now[1] - last[1],
                    now[2] - last[2], second.getTotalCount(), second.getValueAtPercentile(99) / 1e6,
                    second.getMaxValue() / 1e6);
                last = now;
                if (bystander.error != null) {
                    System.out.println("the bystander failed: " + bystander.error);
                    break;
                }
            }
            Histogram all = bystander.total();
            System.out.printf("total: %,d accepted, %,d rejected, %,d failed; bystander %,d round trips, p99 %.2f ms,"
                + " max %.2f ms%n", accepted.get(), rejected.get(), failed.get(), all.getTotalCount(),
                all.getValueAtPercentile(99) / 1e6, all.getMaxValue() / 1e6);
        } finally {
            flood.interrupt();
            bystander.close();
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
        }
    }

    /**
     * One garbage connection: writes its bytes, then counts itself accepted when the broker sent anything or held
     * it until {@code holdMillis} (then resets it), rejected when it closed without a byte. Owned by its event loop.
     */
    private final class Garbage extends ChannelInboundHandlerAdapter {
        private final ByteBuf bytes;
        private final long holdMillis;
        private final Semaphore window;
        private boolean answered;

        Garbage(ByteBuf bytes, long holdMillis, Semaphore window) {
            this.bytes = bytes;
            this.holdMillis = holdMillis;
            this.window = window;
        }

        @Override
        public void channelActive(ChannelHandlerContext ctx) {
            ctx.writeAndFlush(bytes);
            ctx.executor().schedule(() -> {
                answered = true; // held: the broker took the connection
                ctx.close();
            }, holdMillis, TimeUnit.MILLISECONDS);
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            answered = true;
            ((ByteBuf) msg).release();
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            ctx.close();
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            (answered ? accepted : rejected).incrementAndGet();
            window.release();
        }
    }

    /** Round trips on AMQP 0-9-1, one at a time on a thread of its own, each latency recorded in nanoseconds. */
    private static final class Bystander implements AutoCloseable {
        private final Connection connection;
        private final Channel channel;
        private final String queue;
        private final BlockingQueue<Long> received = new LinkedBlockingQueue<>();
        private final Histogram interval = new Histogram(TimeUnit.SECONDS.toNanos(60), 3);
        private final Histogram total = new Histogram(TimeUnit.SECONDS.toNanos(60), 3);
        private final Thread thread = new Thread(this::loop, "bystander");
        private volatile Throwable error;

        Bystander(int port) throws Exception {
            ConnectionFactory factory = new ConnectionFactory();
            factory.setHost("127.0.0.1");
            factory.setPort(port);
            factory.setAutomaticRecoveryEnabled(false);
            connection = factory.newConnection("flood-bystander");
            channel = connection.createChannel();
            queue = channel.queueDeclare().getQueue();
            channel.basicConsume(queue, true, (tag, delivery) -> received.add(System.nanoTime()), tag -> { });
            thread.setDaemon(true);
        }

        void start() {
            thread.start();
        }

        private void loop() {
            try {
                while (!Thread.currentThread().isInterrupted()) {
                    long sent = System.nanoTime();
                    channel.basicPublish("", queue, null, new byte[12]);
                    Long back = received.poll(30, TimeUnit.SECONDS);
                    if (back == null) {
                        throw new IllegalStateException("no round trip within 30 s");
                    }
                    long latency = Math.min(back - sent, TimeUnit.SECONDS.toNanos(60));
                    synchronized (this) {
                        interval.recordValue(latency);
                        total.recordValue(latency);
                    }
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } catch (Exception e) {
                error = e;
            }
        }

        /** The round trips since the last call. */
        synchronized Histogram interval() {
            Histogram copy = interval.copy();
            interval.reset();
            return copy;
        }

        synchronized Histogram total() {
            return total.copy();
        }

        @Override
        public void close() throws Exception {
            thread.interrupt();
            thread.join(5000);
            connection.close();
        }
    }
}
