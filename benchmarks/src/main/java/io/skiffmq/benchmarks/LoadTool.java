package io.skiffmq.benchmarks;

import jakarta.jms.BytesMessage;
import jakarta.jms.CompletionListener;
import jakarta.jms.Connection;
import jakarta.jms.DeliveryMode;
import jakarta.jms.JMSException;
import jakarta.jms.Message;
import jakarta.jms.MessageConsumer;
import jakarta.jms.MessageProducer;
import jakarta.jms.Session;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.Recorder;
import org.apache.qpid.jms.JmsConnectionFactory;

/**
 * End-to-end load over AMQP 1.0 with Qpid JMS, in the spirit of quiver and PerfTest.
 *
 * <p>{@code --senders} connections publish to one address and {@code --receivers} connections consume from one
 * queue. A sender publishes unsettled (asynchronous sends, at most {@code --in-flight} awaiting their disposition,
 * i.e. their confirm), or pre-settled with {@code --settled=true}. Messages are persistent (header durable) with
 * {@code --durable=true}. The run lasts {@code --duration} seconds after a {@code --warmup}, or ends after
 * {@code --count} messages per sender. {@code --rate} paces the senders to that many msg/s in all.
 * {@code --topic=true} publishes to a topic that every receiver subscribes to (fanout);
 * {@code --backlog=true} fills the queue with {@code --count} messages per sender before the receivers start, and
 * measures the drain.
 *
 * <p>Each body carries its send time, its sender and sequence, and (beyond 12 bytes) a padding derived from them. A
 * receiver checks every body and counts a damaged one as an error, never as a delivery. Latency is send to receive,
 * into an HdrHistogram.
 *
 * <p>Output: a progress line every second, a summary, and one JSON line starting {@code RESULT } for scripts
 * ({@link Compare} reads it).
 *
 * <pre>
 * java -cp benchmarks/target/benchmarks.jar io.skiffmq.benchmarks.LoadTool --uri=amqp://127.0.0.1:5672 \
 *     --duration=60 --warmup=10 --senders=1 --receivers=1 --body-size=12 --credit=1000 [--durable=true]
 * </pre>
 */
public final class LoadTool {
    /** Bytes every body starts with: the send time, then the sender (8 bits) and its sequence (24 bits). */
    private static final int HEADER = 12;

    private LoadTool() {
    }

    /** The settings, by the names of the command line. */
    static Map<String, String> defaults() {
        Map<String, String> options = new LinkedHashMap<>();
        options.put("uri", "amqp://127.0.0.1:5672");
        options.put("user", "guest");
        options.put("password", "guest");
        options.put("queue", "load-test");
        // where senders publish: the queue by default, or an address such as /exchanges/amq.fanout
        options.put("target", "");
        options.put("senders", "1");
        options.put("receivers", "1");
        options.put("body-size", "12");
        options.put("credit", "1000");
        options.put("in-flight", "1000");
        options.put("settled", "false");
        options.put("durable", "false");
        options.put("duration", "60");
        options.put("warmup", "10");
        options.put("count", "0");
        options.put("rate", "0");
        options.put("progress", "true");
        // true: senders publish to a topic and each receiver subscribes (fanout: every receiver gets every message)
        options.put("topic", "false");
        // true: with --count, the senders fill the queue first and the receivers then drain it; the rate is the drain's
        options.put("backlog", "false");
        // with --count: seconds to wait for the last messages once measuring starts, after which they count as errors
        options.put("give-up", "600");
        return options;
    }

    public static void main(String[] args) throws Exception {
        Result result = run(CommandLine.parseOrExit("LoadTool", defaults(), args));
        System.out.println(result.describe());
        System.out.println("RESULT " + result.json());
        System.exit(result.errors() == 0 ? 0 : 1);
    }

    /**
     * What a run measured, over the measured window (warm-up left out).
     *
     * @param sendSeconds how long the sending took: the window, or the filling of a backlog
     */
    record Result(Map<String, String> options, double seconds, double sendSeconds, long sent, long received,
            long errors, Histogram latency, double endToEndSeconds) {
        double sentRate() {
            return sent / sendSeconds;
        }

        double receivedRate() {
            return received / seconds;
        }

        /** Messages received over the time from the first send measured to the last receipt (quiver's rate). */
        double endToEndRate() {
            return endToEndSeconds <= 0 ? 0 : received / endToEndSeconds;
        }

        long micros(double percentile) {
            return latency.getTotalCount() == 0 ? -1 : latency.getValueAtPercentile(percentile);
        }

        String describe() {
            return String.format(Locale.ROOT, "%.1f s measured, %s sender(s), %s receiver(s), %s, %s publish, "
                + "body %s B, credit %s: sent %.0f msg/s, received %.0f msg/s, end to end %.0f msg/s; "
                + "latency p50 %s, p90 %s, p99 %s, p99.9 %s, max %s; %d errors",
                seconds, options.get("senders"), options.get("receivers"),
                Boolean.parseBoolean(options.get("durable")) ? "durable" : "transient",
                Boolean.parseBoolean(options.get("settled")) ? "settled" : "unsettled", options.get("body-size"),
                options.get("credit"), sentRate(), receivedRate(), endToEndRate(),
                ms(micros(50)), ms(micros(90)), ms(micros(99)), ms(micros(99.9)), ms(latency.getMaxValue()), errors);
        }

        String json() {
            return String.format(Locale.ROOT, "{\"seconds\":%.3f,\"senders\":%s,\"receivers\":%s,\"durable\":%s,"
                + "\"settled\":%s,\"body_size\":%s,\"sent_per_s\":%.1f,\"received_per_s\":%.1f,"
                + "\"end_to_end_per_s\":%.1f,\"p50_us\":%d,\"p90_us\":%d,\"p99_us\":%d,\"p999_us\":%d,"
                + "\"max_us\":%d,\"errors\":%d}",
                seconds, options.get("senders"), options.get("receivers"), options.get("durable"),
                options.get("settled"), options.get("body-size"), sentRate(), receivedRate(), endToEndRate(),
                micros(50), micros(90), micros(99), micros(99.9), latency.getMaxValue(), errors);
        }

        private static String ms(long micros) {
            return micros < 0 ? "-" : String.format(Locale.ROOT, "%.2f ms", micros / 1000.0);
        }
    }

    /** Runs the load the options describe and returns what it measured. */
    static Result run(Map<String, String> options) throws Exception {
        int senders = Integer.parseInt(options.get("senders"));
        int receivers = Integer.parseInt(options.get("receivers"));
        int bodySize = Math.max(HEADER, Integer.parseInt(options.get("body-size")));
        long count = Long.parseLong(options.get("count"));
        long rate = Long.parseLong(options.get("rate"));
        boolean settled = Boolean.parseBoolean(options.get("settled"));
        boolean durable = Boolean.parseBoolean(options.get("durable"));
        String uri = options.get("uri") + "?jms.prefetchPolicy.all=" + options.get("credit")
            + "&jms.forceAsyncSend=true" + (settled ? "&jms.presettlePolicy.presettleProducers=true" : "");
        JmsConnectionFactory factory = new JmsConnectionFactory(options.get("user"), options.get("password"), uri);
        String target = options.get("target").isEmpty() ? options.get("queue") : options.get("target");
        if (target.startsWith("/exchanges/")) {
            bindToQueue(options, target.substring("/exchanges/".length()));
        }

        boolean topic = Boolean.parseBoolean(options.get("topic"));
        boolean backlog = Boolean.parseBoolean(options.get("backlog"));
        if (backlog && count == 0) {
            throw new IllegalArgumentException("--backlog needs --count");
        }
        Recorder latencies = new Recorder(3);
        AtomicLong sent = new AtomicLong();
        AtomicLong received = new AtomicLong();
        AtomicLong errors = new AtomicLong();
        AtomicLong lastReceipt = new AtomicLong();
        List<Connection> connections = new ArrayList<>();
        try {
            Runnable startReceivers = () -> {
                try {
                    for (int r = 0; r < receivers; r++) {
                        Connection connection = factory.createConnection();
                        connections.add(connection);
                        Session session = connection.createSession(false, Session.AUTO_ACKNOWLEDGE);
                        MessageConsumer consumer = session.createConsumer(topic ? session.createTopic(target)
                            : session.createQueue(options.get("queue")));
                        consumer.setMessageListener(message -> {
                            receive(message, bodySize, latencies, received, errors);
                            lastReceipt.set(System.nanoTime());
                        });
                        connection.start();
                    }
                } catch (JMSException e) {
                    throw new IllegalStateException("cannot start the receivers", e);
                }
            };
            if (!backlog) {
                startReceivers.run();
            }
            long start = System.nanoTime();
            long warmup = count > 0 ? 0 : TimeUnit.SECONDS.toNanos(Long.parseLong(options.get("warmup")));
            long end = count > 0 ? Long.MAX_VALUE
                : start + warmup + TimeUnit.SECONDS.toNanos(Long.parseLong(options.get("duration")));
            List<Thread> threads = new ArrayList<>();
            for (int s = 0; s < senders; s++) {
                Connection connection = factory.createConnection();
                connections.add(connection);
                int id = s;
                Thread sender = new Thread(() -> send(connection, target, topic, id, durable, settled,
                    Integer.parseInt(options.get("in-flight")), bodySize, rate / senders, count, end, sent, errors),
                    "sender-" + s);
                threads.add(sender);
                sender.start();
            }
            long measureFrom = start + warmup;
            double sendSeconds = 0;
            if (backlog) {
                for (Thread t : threads) {
                    t.join();
                }
                sendSeconds = (System.nanoTime() - start) / 1e9;
                System.out.printf(Locale.ROOT, "backlog of %,d messages in %.1f s; draining%n", sent.get(),
                    (System.nanoTime() - start) / 1e9);
                measureFrom = System.nanoTime();
                startReceivers.run();
            }
            while (System.nanoTime() < measureFrom) {
                Thread.sleep(10);
            }
            long sentAtStart = count > 0 ? 0 : sent.get();
            long receivedAtStart = count > 0 ? 0 : received.get();
            Histogram measured = new Histogram(3);
            latencies.getIntervalHistogram();
            boolean progress = Boolean.parseBoolean(options.get("progress"));
            long lastSent = sent.get();
            long lastReceived = received.get();
            long expected = count * senders * (topic ? receivers : 1);
            long giveUp = measureFrom + TimeUnit.SECONDS.toNanos(Long.parseLong(options.get("give-up")));
            while (threads.stream().anyMatch(Thread::isAlive)
                    || count > 0 && received.get() + errors.get() < expected && System.nanoTime() < giveUp) {
                Thread.sleep(1000);
                Histogram second = latencies.getIntervalHistogram();
                measured.add(second);
                long s = sent.get();
                long r = received.get();
                if (progress) {
                    System.out.printf(Locale.ROOT, "%5.0f s  sent %,9d/s  received %,9d/s  latency p50 %s  p90 %s  "
                        + "p99 %s  p99.9 %s  max %s  errors %d%n", (System.nanoTime() - start) / 1e9, s - lastSent,
                        r - lastReceived, percentile(second, 50), percentile(second, 90), percentile(second, 99),
                        percentile(second, 99.9), Result.ms(second.getTotalCount() == 0 ? -1 : second.getMaxValue()),
                        errors.get());
                }
                lastSent = s;
                lastReceived = r;
            }
            measured.add(latencies.getIntervalHistogram());
            double seconds = (System.nanoTime() - measureFrom) / 1e9;
            if (count > 0 && received.get() < expected) {
                errors.addAndGet(expected - received.get() - errors.get()); // never arrived
            }
            return new Result(options, seconds, backlog ? sendSeconds : seconds, sent.get() - sentAtStart,
                received.get() - receivedAtStart, errors.get(), measured, (lastReceipt.get() - measureFrom) / 1e9);
        } finally {
            for (Connection connection : connections) {
                connection.close();
            }
        }
    }

    private static String percentile(Histogram histogram, double percentile) {
        return Result.ms(histogram.getTotalCount() == 0 ? -1 : histogram.getValueAtPercentile(percentile));
    }

    /** Declares the queue and binds it to {@code exchange}, through SkiffMQ's (RabbitMQ's) management node. */
    private static void bindToQueue(Map<String, String> options, String exchange) {
        java.net.URI uri = java.net.URI.create(options.get("uri"));
        try (com.rabbitmq.client.amqp.Environment environment =
                new com.rabbitmq.client.amqp.impl.AmqpEnvironmentBuilder().connectionSettings().host(uri.getHost())
                    .port(uri.getPort()).username(options.get("user")).password(options.get("password"))
                    .environmentBuilder().build();
             com.rabbitmq.client.amqp.Connection connection = environment.connectionBuilder().build()) {
            connection.management().queue().name(options.get("queue")).declare();
            connection.management().binding().sourceExchange(exchange).destinationQueue(options.get("queue")).bind();
        }
    }

    /** Checks the body, records the latency and counts the delivery; a damaged body counts as an error only. */
    private static void receive(Message message, int bodySize, Recorder latencies, AtomicLong received,
            AtomicLong errors) {
        try {
            BytesMessage bytes = (BytesMessage) message;
            byte[] body = new byte[(int) bytes.getBodyLength()];
            bytes.readBytes(body);
            ByteBuffer buf = ByteBuffer.wrap(body);
            if (body.length != bodySize) {
                errors.incrementAndGet();
                return;
            }
            long sentAt = buf.getLong();
            int id = buf.getInt();
            for (int i = HEADER; i < body.length; i++) {
                if (body[i] != padding(id, i)) {
                    errors.incrementAndGet();
                    return;
                }
            }
            latencies.recordValue(Math.max(0, System.nanoTime() - sentAt) / 1000);
            received.incrementAndGet();
        } catch (JMSException | ClassCastException e) {
            errors.incrementAndGet();
        }
    }

    private static byte padding(int id, int index) {
        return (byte) (id * 31 + index);
    }

    /** One sender until {@code end} or {@code count} messages: paced to {@code rate} msg/s when positive. */
    private static void send(Connection connection, String address, boolean topic, int senderId, boolean durable,
            boolean settled,
            int maxInFlight, int bodySize, long rate, long count, long end, AtomicLong sent, AtomicLong errors) {
        try {
            Session session = connection.createSession(false, Session.AUTO_ACKNOWLEDGE);
            MessageProducer producer = session.createProducer(topic ? session.createTopic(address)
                : session.createQueue(address));
            producer.setDeliveryMode(durable ? DeliveryMode.PERSISTENT : DeliveryMode.NON_PERSISTENT);
            Semaphore inFlight = new Semaphore(maxInFlight);
            CompletionListener confirmed = new CompletionListener() {
                @Override
                public void onCompletion(Message message) {
                    inFlight.release();
                    sent.incrementAndGet();
                }

                @Override
                public void onException(Message message, Exception exception) {
                    inFlight.release();
                    errors.incrementAndGet();
                }
            };
            long interval = rate > 0 ? 1_000_000_000L / rate : 0;
            long next = System.nanoTime();
            byte[] body = new byte[bodySize];
            for (long n = 0; (count == 0 || n < count) && System.nanoTime() < end; n++) {
                if (interval > 0) {
                    // paced (open loop): latency then measures the broker, not a growing backlog; park, not spin,
                    // on a small machine a spinning sender starves the broker and the client's own threads
                    next = Math.max(next + interval, System.nanoTime() - TimeUnit.MILLISECONDS.toNanos(10));
                    long wait = next - System.nanoTime();
                    if (wait > 0) {
                        LockSupport.parkNanos(wait);
                    }
                }
                int id = senderId << 24 | (int) (n & 0xff_ffff);
                for (int i = HEADER; i < bodySize; i++) {
                    body[i] = padding(id, i);
                }
                inFlight.acquire();
                BytesMessage message = session.createBytesMessage();
                ByteBuffer.wrap(body).putLong(System.nanoTime()).putInt(id);
                message.writeBytes(body);
                producer.send(message, confirmed);
            }
            // every send confirmed (or failed) before the sender is done
            inFlight.acquire(maxInFlight);
        } catch (JMSException | InterruptedException e) {
            errors.incrementAndGet();
            System.err.println("sender " + senderId + " failed: " + e);
        }
    }
}
