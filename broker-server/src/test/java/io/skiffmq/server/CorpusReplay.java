package io.skiffmq.server;

import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.nio.NioSocketChannel;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.BiConsumer;
import java.util.function.Function;
import java.util.stream.Stream;

/**
 * Replays hostile inputs against a live broker, each on its own TCP connection: connect, write the input (after a
 * prefix, such as a protocol header), then read until the broker closes the connection or a per-connection deadline
 * passes (then the client closes); some clients half-close or reset instead ({@link Ending}). At most {@code concurrency} connections are in flight. What the broker sent is
 * kept (up to {@link #KEPT_BYTES}) and classified by a protocol's {@code outcome} function (the close condition it
 * sent, say), and the outcomes are counted.
 *
 * <p>The corpora are read in place: {@link #sharedCorpus} finds {@code ../shared/corpora/amqp10} beside the checkout
 * (as the codec's {@code HostileCorpusTest} does), never a copy in the project. Thread-safe: {@link #replay} is
 * called by one test thread; the client's event loop runs the connections.
 */
final class CorpusReplay {
    /** What the client does once it has written an input. */
    enum Ending {
        /** Keeps its side open and reads until the broker closes (or the deadline). */
        READ,
        /** Shuts its output down (FIN), as {@code cat file | nc -N host port} does, and reads on. */
        HALF_CLOSE,
        /** Resets the connection (RST: SO_LINGER 0) {@link #RESET_AFTER_MILLIS} later, as a crashing peer does. */
        RESET
    }

    /** How long a {@link Ending#RESET} peer waits before its reset: long enough for the broker to read its bytes. */
    static final long RESET_AFTER_MILLIS = 20;
    /** The outcome of a connection the client reset before the broker closed it. */
    static final String RESET_BY_CLIENT = "reset by the client";

    /** One input: its name (for the report), the bytes written first, then the input's bytes, and its ending. */
    record Input(String name, byte[] prefix, byte[] bytes, Ending ending) {
    }

    /** The counts of each outcome, and the connections that ran into the client's deadline. */
    record Result(Map<String, Long> outcomes, long connections, long deadlines, Duration took) {
        long count(String outcome) {
            return outcomes.getOrDefault(outcome, 0L);
        }

        String summary() {
            StringBuilder out = new StringBuilder();
            out.append(String.format("%d connections in %.1f s, %d closed by the client's deadline%n", connections,
                took.toMillis() / 1000.0, deadlines));
            outcomes.forEach((outcome, count) -> out.append(String.format("  %-60s %6d%n", outcome, count)));
            return out.toString();
        }
    }

    /** What the broker sent back is kept up to this much per connection: enough for its header and closing frames. */
    static final int KEPT_BYTES = 64 * 1024;
    /** The outcome of a connection the broker did not close within the deadline. */
    static final String DEADLINE = "open at the client's deadline";
    /** The outcome of a connection that could not be made. */
    static final String CONNECT_FAILED = "connect failed";
    private static final byte[] NOT_CONNECTED = new byte[0];
    private static final byte[] RESET = new byte[0];

    private static final Ending[] ENDINGS = {Ending.READ, Ending.HALF_CLOSE, Ending.READ, Ending.RESET};

    private CorpusReplay() {
    }

    /** {@code ../shared/corpora/amqp10} (or {@code -Dskiffmq.corpus.dir}), or null when neither is there. */
    static Path sharedCorpus() {
        String configured = System.getProperty("skiffmq.corpus.dir");
        if (configured != null) {
            return Path.of(configured);
        }
        for (Path dir = Path.of("").toAbsolutePath(); dir != null; dir = dir.getParent()) {
            Path candidate = dir.resolve("shared/corpora/amqp10");
            if (Files.isDirectory(candidate)) {
                return candidate;
            }
        }
        return null;
    }

    /** Every regular file under {@code root} but READMEs, sorted by path. */
    static List<Path> files(Path root) {
        try (Stream<Path> walk = Files.walk(root)) {
            return walk.filter(Files::isRegularFile)
                .filter(p -> !p.getFileName().toString().startsWith("README"))
                .sorted().toList();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static byte[] read(Path file) {
        try {
            return Files.readAllBytes(file);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * Replays every input against {@code port} on loopback.
     *
     * @param outcome names what the broker did from the bytes it sent (the connection ended by the broker)
     */
    static Result replay(int port, List<Input> inputs, int concurrency, Duration deadline,
            Function<byte[], String> outcome) throws InterruptedException {
        Map<String, LongAdder> counts = new ConcurrentHashMap<>();
        LongAdder deadlines = new LongAdder();
        Semaphore inFlight = new Semaphore(concurrency);
        EventLoopGroup group = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
        long start = System.nanoTime();
        try {
            Bootstrap bootstrap = new Bootstrap().group(group).channel(NioSocketChannel.class)
                .option(ChannelOption.TCP_NODELAY, true)
                .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, 10_000);
            for (Input input : inputs) {
                inFlight.acquire();
                Reader reader = new Reader(input, deadline, (result, atDeadline) -> {
                    if (atDeadline) {
                        // a close the broker sent and waits to have answered (RabbitMQ's close_sent does) is what
                        // the broker did, though the client's deadline ended the connection
                        deadlines.increment();
                        String sent = outcome.apply(result);
                        counts.computeIfAbsent(isClose(sent) ? sent : DEADLINE, k -> new LongAdder()).increment();
                    } else if (result == NOT_CONNECTED) {
                        counts.computeIfAbsent(CONNECT_FAILED, k -> new LongAdder()).increment();
                    } else if (result == RESET) {
                        counts.computeIfAbsent(RESET_BY_CLIENT, k -> new LongAdder()).increment();
                    } else {
                        counts.computeIfAbsent(outcome.apply(result), k -> new LongAdder()).increment();
                    }
                    inFlight.release();
                });
                ChannelFuture connect = bootstrap.clone().handler(new ChannelInitializer<Channel>() {
                    @Override
                    protected void initChannel(Channel ch) {
                        ch.pipeline().addLast(reader);
                    }
                }).connect("127.0.0.1", port);
                connect.addListener(f -> {
                    if (!f.isSuccess()) {
                        reader.done(NOT_CONNECTED);
                    }
                });
            }
            if (!inFlight.tryAcquire(concurrency, deadline.toMillis() + 30_000, TimeUnit.MILLISECONDS)) {
                throw new IllegalStateException("connections still in flight after the last deadline");
            }
        } finally {
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
        }
        Map<String, Long> sorted = new TreeMap<>();
        counts.forEach((k, v) -> sorted.put(k, v.sum()));
        return new Result(sorted, inputs.size(), deadlines.sum(), Duration.ofNanos(System.nanoTime() - start));
    }

    /** Whether an outcome names a close the broker sent: 1.0's and the stream protocol's close, or 0-9-1's. */
    private static boolean isClose(String outcome) {
        return outcome.startsWith("close ") || outcome.startsWith("connection.close ");
    }

    /**
     * One connection: writes the input once active, keeps what comes back, and reports once, on its close or at the
     * deadline (then closes), with what the broker sent. Owned by the client's event loop.
     */
    private static final class Reader extends ChannelInboundHandlerAdapter {
        private final Input input;
        private final Duration deadline;
        private final BiConsumer<byte[], Boolean> report;
        private final ByteArrayOutputStream received = new ByteArrayOutputStream();
        private boolean reported;
        private boolean timedOut;
        private boolean resetByUs;

        Reader(Input input, Duration deadline, BiConsumer<byte[], Boolean> report) {
            this.input = input;
            this.deadline = deadline;
            this.report = report;
        }

        @Override
        public void channelActive(ChannelHandlerContext ctx) {
            ctx.executor().schedule(() -> {
                if (!reported) {
                    timedOut = true;
                    ctx.close();
                }
            }, deadline.toMillis(), TimeUnit.MILLISECONDS);
            ChannelFuture written = ctx.writeAndFlush(Unpooled.wrappedBuffer(input.prefix(), input.bytes()));
            if (input.ending() == Ending.HALF_CLOSE) {
                written.addListener(f -> {
                    if (f.isSuccess()) {
                        ((io.netty.channel.socket.DuplexChannel) ctx.channel()).shutdownOutput();
                    }
                });
            } else if (input.ending() == Ending.RESET) {
                ctx.executor().schedule(() -> {
                    if (ctx.channel().isActive()) {
                        resetByUs = true;
                        ctx.channel().config().setOption(ChannelOption.SO_LINGER, 0);
                        ctx.close();
                    }
                }, RESET_AFTER_MILLIS, TimeUnit.MILLISECONDS);
            }
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            ByteBuf buf = (ByteBuf) msg;
            try {
                int keep = Math.min(buf.readableBytes(), KEPT_BYTES - received.size());
                if (keep > 0) {
                    byte[] bytes = new byte[keep];
                    buf.readBytes(bytes);
                    received.write(bytes, 0, keep);
                }
            } finally {
                buf.release();
            }
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            // a reset by the broker: the connection ends with what was read
            ctx.close();
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            done(resetByUs && !timedOut ? RESET : received.toByteArray());
        }

        void done(byte[] result) {
            if (!reported) {
                reported = true;
                report.accept(result, timedOut);
            }
        }
    }

    /**
     * The inputs of {@code files}, each with each of {@code prefixes} (named by the map's keys), their endings in
     * turn: read, half-close, read, reset, and again.
     */
    static List<Input> variants(Path root, List<Path> files, Map<String, byte[]> prefixes) {
        List<Input> inputs = new ArrayList<>();
        for (Path file : files) {
            byte[] bytes = read(file);
            String name = root.relativize(file).toString();
            prefixes.forEach((prefixName, prefix) -> inputs.add(new Input(prefixName + ":" + name, prefix, bytes,
                ENDINGS[inputs.size() % ENDINGS.length])));
        }
        return inputs;
    }
}
