package io.skiffmq.benchmarks;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import com.rabbitmq.client.DefaultConsumer;
import com.rabbitmq.client.Envelope;
import com.rabbitmq.client.MessageProperties;
import java.nio.ByteBuffer;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.NavigableSet;
import java.util.concurrent.ConcurrentSkipListSet;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Issue 30's large-message backlog: a broker with a small heap ({@code --heap}, 512m) takes {@code --count} (2,048)
 * persistent messages of {@code --size} bytes (1 MiB: 2 GiB in all) over AMQP 0-9-1 from one publisher with confirms
 * ({@code --in-flight} unconfirmed) into a durable classic queue with no consumer; then one consumer (prefetch
 * {@code --prefetch}, manual acks) drains it and checks that every message comes, in order, with its bytes intact
 * (each body is its sequence number followed by bytes computed from it). The broker's resident set, heap and direct
 * memory are sampled throughout ({@link BrokerMemory}).
 *
 * <p>By default the broker is a fresh SkiffMQ ({@link BrokerProcess}); {@code --uri=amqp://…} and {@code --pid=PID}
 * run it against a broker already running (a RabbitMQ node from {@code benchmarks/rabbitmq-node}). Exits 1 when a
 * message is missing, out of order or damaged, or the broker died.
 *
 * <pre>
 * benchmarks/large-backlog [--count=2048] [--size=1048576] [--heap=512m] [--in-flight=32] [--prefetch=8]
 *     [--uri=amqp://guest:guest@127.0.0.1:5672 --pid=PID] [--settings=--name=value,…]
 * </pre>
 */
public final class LargeBacklog {
    private LargeBacklog() {
    }

    public static void main(String[] args) throws Exception {
        Map<String, String> defaults = new LinkedHashMap<>(Map.of("count", "2048", "size", "1048576", "heap", "512m",
            "in-flight", "32", "prefetch", "8", "uri", "", "pid", "0", "settings", ""));
        // the broker's class histogram once the backlog is in; memory samples this often; seconds without progress
        defaults.putAll(Map.of("histogram", "false", "sample-ms", "1000", "give-up", "120"));
        Map<String, String> options = CommandLine.parseOrExit("LargeBacklog", defaults, args);
        int count = Integer.parseInt(options.get("count"));
        int size = Integer.parseInt(options.get("size"));
        BrokerProcess broker = null;
        String uri = options.get("uri");
        long pid = Long.parseLong(options.get("pid"));
        boolean ok;
        try {
            if (uri.isEmpty()) {
                List<String> settings = options.get("settings").isEmpty() ? List.of()
                    : List.of(options.get("settings").split(","));
                broker = BrokerProcess.start("skiffmq", List.of("-Xmx" + options.get("heap"),
                    "-XX:+ExitOnOutOfMemoryError", BrokerMemory.NMT), settings, System.out::println);
                uri = "amqp://guest:guest@127.0.0.1:" + broker.port;
                pid = broker.pid();
            }
            try (BrokerMemory memory = new BrokerMemory(pid, Long.parseLong(options.get("sample-ms")),
                    broker != null)) {
                memory.start();
                ok = run(uri, count, size, options,
                    broker != null && Boolean.parseBoolean(options.get("histogram")) ? pid : 0);
                System.out.printf(Locale.ROOT, "broker peak RSS:    %,d MB (VmHWM)%n", memory.highWaterRss() >> 20);
                if (broker != null) {
                    System.out.printf(Locale.ROOT, "broker peak heap:   %,d MB used (jstat, garbage included)%n",
                        memory.peakHeap.get() >> 20);
                    System.out.printf(Locale.ROOT, "broker peak direct: %,d MB (NMT Other)%n",
                        memory.peakDirect.get() >> 20);
                    System.out.println("broker alive:       " + broker.isAlive());
                    ok &= broker.isAlive();
                }
            }
        } finally {
            if (broker != null) {
                broker.close();
            }
        }
        System.exit(ok ? 0 : 1);
    }

    private static boolean run(String uri, int count, int size, Map<String, String> options, long histogramPid)
            throws Exception {
        String queue = "large-backlog-" + Long.toHexString(System.nanoTime());
        ConnectionFactory factory = new ConnectionFactory();
        factory.setUri(uri);
        factory.setRequestedFrameMax(131072);
        long giveUp = Long.parseLong(options.get("give-up"));
        try (Connection connection = factory.newConnection("large-backlog")) {
            Channel publisher = connection.createChannel();
            publisher.queueDeclare(queue, true, false, false, Map.of("x-queue-type", "classic"));
            publisher.confirmSelect();
            Semaphore window = new Semaphore(Integer.parseInt(options.get("in-flight")));
            AtomicLong nacked = new AtomicLong();
            NavigableSet<Long> unconfirmed = new ConcurrentSkipListSet<>();
            publisher.addConfirmListener((tag, multiple) -> window.release(settle(unconfirmed, tag, multiple)),
                (tag, multiple) -> {
                    nacked.incrementAndGet();
                    window.release(settle(unconfirmed, tag, multiple));
                });
            byte[] body = new byte[size];
            long start = System.nanoTime();
            for (int seq = 0; seq < count; seq++) {
                if (!window.tryAcquire(giveUp, TimeUnit.SECONDS)) {
                    System.out.printf("publish stalled: no confirm for %d s after %,d messages%n", giveUp, seq);
                    return false;
                }
                fill(body, seq);
                unconfirmed.add(publisher.getNextPublishSeqNo());
                publisher.basicPublish("", queue, MessageProperties.PERSISTENT_BASIC, body);
                if ((seq + 1) % 256 == 0) {
                    System.out.printf(Locale.ROOT, "  published %,d (%.1f s)%n", seq + 1,
                        (System.nanoTime() - start) / 1e9);
                }
            }
            if (!publisher.waitForConfirms(giveUp * 1000)) {
                System.out.println("some messages were nacked");
            }
            double publishSeconds = (System.nanoTime() - start) / 1e9;
            double mib = (double) count * size / (1 << 20);
            System.out.printf(Locale.ROOT, "publish:            %,d × %,d B (%,.0f MiB) confirmed in %.1f s (%.1f msg/s,"
                + " %.1f MiB/s), %d nacked%n", count, size, mib, publishSeconds, count / publishSeconds,
                mib / publishSeconds, nacked.get());
            if (histogramPid > 0) {
                histogram(histogramPid);
            }

            Channel consumer = connection.createChannel();
            consumer.basicQos(Integer.parseInt(options.get("prefetch")));
            CountDownLatch done = new CountDownLatch(1);
            AtomicLong next = new AtomicLong();
            AtomicLong progress = new AtomicLong(System.nanoTime());
            AtomicReference<String> error = new AtomicReference<>();
            start = System.nanoTime();
            consumer.basicConsume(queue, false, new DefaultConsumer(consumer) {
                @Override
                public void handleDelivery(String tag, Envelope envelope, AMQP.BasicProperties properties,
                        byte[] received) throws java.io.IOException {
                    long expected = next.getAndIncrement();
                    String wrong = check(received, expected, size);
                    if (wrong != null && error.compareAndSet(null, wrong)) {
                        done.countDown();
                    }
                    getChannel().basicAck(envelope.getDeliveryTag(), false);
                    progress.set(System.nanoTime());
                    if (next.get() == count) {
                        done.countDown();
                    }
                }
            });
            while (!done.await(1, TimeUnit.SECONDS)) {
                if (System.nanoTime() - progress.get() > TimeUnit.SECONDS.toNanos(giveUp)) {
                    error.compareAndSet(null, "drain stalled after " + next.get() + " messages");
                    break;
                }
            }
            double drainSeconds = (System.nanoTime() - start) / 1e9;
            System.out.printf(Locale.ROOT, "drain:              %,d received in %.1f s (%.1f msg/s, %.1f MiB/s)%s%n",
                next.get(), drainSeconds, next.get() / drainSeconds, next.get() * (double) size / (1 << 20)
                    / drainSeconds, error.get() == null ? ", all in order and intact" : ": " + error.get());
            publisher.queueDelete(queue);
            return error.get() == null && next.get() == count && nacked.get() == 0;
        }
    }

    /** The broker's largest classes by live bytes once the backlog is in (after a full GC): where its heap goes. */
    private static void histogram(long pid) throws Exception {
        Process jcmd = new ProcessBuilder(java.nio.file.Path.of(System.getProperty("java.home"), "bin", "jcmd")
            .toString(), Long.toString(pid), "GC.class_histogram").redirectErrorStream(true).start();
        String out = new String(jcmd.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
        jcmd.waitFor();
        out.lines().limit(25).forEach(line -> System.out.println("  histogram: " + line));
    }

    /** Removes what a confirm settles (its tag, or every tag up to it); returns how many that was. */
    private static int settle(NavigableSet<Long> unconfirmed, long tag, boolean multiple) {
        if (!multiple) {
            return unconfirmed.remove(tag) ? 1 : 0;
        }
        NavigableSet<Long> settled = unconfirmed.headSet(tag, true);
        int n = settled.size();
        settled.clear();
        return n;
    }

    /** The body of message {@code seq}: its number, then bytes that depend on it and their position. */
    static void fill(byte[] body, long seq) {
        ByteBuffer.wrap(body).putLong(0, seq);
        for (int i = 8; i < body.length; i++) {
            body[i] = (byte) (seq * 31 + i);
        }
    }

    /** @return null when {@code body} is message {@code expected}, else what is wrong with it */
    static String check(byte[] body, long expected, int size) {
        if (body.length != size) {
            return "message " + expected + " has " + body.length + " bytes, not " + size;
        }
        long seq = ByteBuffer.wrap(body).getLong(0);
        if (seq != expected) {
            return "message " + seq + " came where " + expected + " was expected";
        }
        for (int i = 8; i < body.length; i++) {
            if (body[i] != (byte) (seq * 31 + i)) {
                return "message " + seq + " is damaged at byte " + i;
            }
        }
        return null;
    }
}
