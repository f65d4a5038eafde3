package io.skiffmq.benchmarks;

import jakarta.jms.BytesMessage;
import jakarta.jms.CompletionListener;
import jakarta.jms.Connection;
import jakarta.jms.DeliveryMode;
import jakarta.jms.JMSException;
import jakarta.jms.Message;
import jakarta.jms.MessageConsumer;
import jakarta.jms.MessageProducer;
import jakarta.jms.Queue;
import jakarta.jms.Session;
import java.nio.ByteBuffer;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.HdrHistogram.Recorder;
import org.HdrHistogram.Histogram;
import org.apache.qpid.jms.JmsConnectionFactory;

/**
 * End-to-end load: {@code --publishers} senders and one receiver, each on its own connection, through one queue,
 * with Qpid JMS. A sender publishes unsettled (asynchronous sends, at most {@code --in-flight} awaiting their
 * disposition, i.e. their confirm); {@code --durable=true} sends persistent messages (header durable). The
 * receiver's prefetch is its link credit. Each body starts with the send time, so every message's latency goes
 * into an HdrHistogram; the warm-up is left out. With {@code --rate=N} the sender is paced to N msg/s, so latency
 * is measured at a rate the receiver keeps up with (split between the senders); without it, they send as fast as
 * credit allows.
 *
 * <pre>
 * java -cp benchmarks/target/benchmarks.jar io.skiffmq.benchmarks.LoadTool --uri=amqp://127.0.0.1:5672 \
 *     --duration=60 --warmup=10 --body-size=12 --credit=1000 --in-flight=1000
 * </pre>
 */
public final class LoadTool {
    private LoadTool() {
    }

    /** Declares the queue and binds it to {@code exchange}, through the broker's management node. */
    private static void bindToQueue(Map<String, String> options, String exchange) {
        java.net.URI uri = java.net.URI.create(options.get("uri"));
        try (com.rabbitmq.client.amqp.Environment environment = new com.rabbitmq.client.amqp.impl.AmqpEnvironmentBuilder()
                .connectionSettings().host(uri.getHost()).port(uri.getPort()).username(options.get("user"))
                .password(options.get("password")).environmentBuilder().build();
             com.rabbitmq.client.amqp.Connection connection = environment.connectionBuilder().build()) {
            connection.management().queue().name(options.get("queue")).declare();
            connection.management().binding().sourceExchange(exchange).destinationQueue(options.get("queue")).bind();
        }
    }

    public static void main(String[] args) throws Exception {
        Map<String, String> options = new LinkedHashMap<>(Map.of("uri", "amqp://127.0.0.1:5672", "queue", "load-test",
            "duration", "60", "warmup", "10", "body-size", "12", "credit", "1000", "in-flight", "1000",
            "user", "guest", "password", "guest"));
        options.put("rate", "0");
        options.put("publishers", "1");
        options.put("durable", "false");
        // the sender's address: the queue itself by default, or e.g. /exchanges/amq.fanout (bound to the queue here)
        options.put("target", "");
        for (String arg : args) {
            int eq = arg.indexOf('=');
            if (!arg.startsWith("--") || eq < 0 || !options.containsKey(arg.substring(2, eq))) {
                System.err.println("usage: LoadTool [--name=value]… with names " + options.keySet());
                System.exit(2);
            }
            options.put(arg.substring(2, eq), arg.substring(eq + 1));
        }
        int duration = Integer.parseInt(options.get("duration"));
        int warmup = Integer.parseInt(options.get("warmup"));
        int bodySize = Math.max(8, Integer.parseInt(options.get("body-size")));
        String uri = options.get("uri") + "?jms.prefetchPolicy.all=" + options.get("credit")
            + "&jms.forceAsyncSend=true";
        JmsConnectionFactory factory = new JmsConnectionFactory(options.get("user"), options.get("password"), uri);

        String target = options.get("target");
        if (target.startsWith("/exchanges/")) {
            bindToQueue(options, target.substring("/exchanges/".length()));
        }
        Recorder latencies = new Recorder(3);
        AtomicLong received = new AtomicLong();
        AtomicLong sent = new AtomicLong();
        try (Connection receiverConnection = factory.createConnection();
             Connection senderConnection = factory.createConnection()) {
            Session receiverSession = receiverConnection.createSession(false, Session.AUTO_ACKNOWLEDGE);
            Queue queue = receiverSession.createQueue(options.get("queue"));
            MessageConsumer consumer = receiverSession.createConsumer(queue);
            consumer.setMessageListener(message -> {
                try {
                    long sentAt = ((BytesMessage) message).readLong();
                    latencies.recordValue(Math.max(0, System.nanoTime() - sentAt) / 1000);
                    received.incrementAndGet();
                } catch (JMSException e) {
                    throw new IllegalStateException(e);
                }
            });
            receiverConnection.start();

            int publishers = Integer.parseInt(options.get("publishers"));
            boolean durable = Boolean.parseBoolean(options.get("durable"));
            long rate = Long.parseLong(options.get("rate"));
            long start = System.nanoTime();
            long end = start + TimeUnit.SECONDS.toNanos(warmup + duration);
            long measureFrom = start + TimeUnit.SECONDS.toNanos(warmup);
            java.util.List<Thread> senders = new java.util.ArrayList<>();
            java.util.List<Connection> senderConnections = new java.util.ArrayList<>();
            for (int p = 0; p < publishers; p++) {
                Connection connection = p == 0 ? senderConnection : factory.createConnection();
                senderConnections.add(connection);
                Thread sender = new Thread(() -> send(connection, target.isEmpty() ? options.get("queue") : target,
                    durable, Integer.parseInt(options.get("in-flight")), bodySize, rate / publishers, start, end,
                    sent), "sender-" + p);
                senders.add(sender);
                sender.start();
            }
            while (System.nanoTime() < measureFrom) {
                Thread.sleep(10);
            }
            long receivedAtStart = received.get();
            long sentAtStart = sent.get();
            latencies.getIntervalHistogram();
            for (Thread sender : senders) {
                sender.join();
            }
            for (Connection connection : senderConnections.subList(1, senderConnections.size())) {
                connection.close();
            }
            double seconds = (System.nanoTime() - measureFrom) / 1e9;
            Histogram histogram = latencies.getIntervalHistogram();
            System.out.printf("duration %.1f s (after %d s warm-up), %d publisher(s), %s, body %d B, credit %s, "
                + "in flight %s, rate %s, via %s%n", seconds, warmup, publishers, durable ? "durable" : "transient",
                bodySize, options.get("credit"), options.get("in-flight"),
                rate > 0 ? rate + " msg/s" : "unpaced", target.isEmpty() ? "the default exchange" : target);
            System.out.printf("sent %.0f msg/s, received %.0f msg/s%n", (sent.get() - sentAtStart) / seconds,
                (received.get() - receivedAtStart) / seconds);
            System.out.printf("latency us: p50 %d, p99 %d, p99.9 %d, max %d (%d samples)%n",
                histogram.getValueAtPercentile(50), histogram.getValueAtPercentile(99),
                histogram.getValueAtPercentile(99.9), histogram.getMaxValue(), histogram.getTotalCount());
        }
    }

    /** One sender until {@code end}: paced to {@code rate} msg/s when positive. */
    private static void send(Connection connection, String address, boolean durable, int maxInFlight, int bodySize,
            long rate, long start, long end, AtomicLong sent) {
        try {
            Session session = connection.createSession(false, Session.AUTO_ACKNOWLEDGE);
            MessageProducer producer = session.createProducer(session.createQueue(address));
            producer.setDeliveryMode(durable ? DeliveryMode.PERSISTENT : DeliveryMode.NON_PERSISTENT);
            Semaphore inFlight = new Semaphore(maxInFlight);
            CompletionListener release = new CompletionListener() {
                @Override
                public void onCompletion(Message message) {
                    inFlight.release();
                }

                @Override
                public void onException(Message message, Exception exception) {
                    inFlight.release();
                    System.err.println("send failed: " + exception);
                }
            };
            byte[] padding = new byte[bodySize - 8];
            long interval = rate > 0 ? 1_000_000_000L / rate : 0;
            long next = start;
            while (System.nanoTime() < end) {
                if (interval > 0) {
                    // paced (open loop at a fixed rate): latency then measures the broker, not a growing backlog
                    // park, not spin: on a small machine a spinning sender starves the broker and client threads
                    next = Math.max(next + interval, System.nanoTime() - TimeUnit.MILLISECONDS.toNanos(10));
                    long wait = next - System.nanoTime();
                    if (wait > 0) {
                        java.util.concurrent.locks.LockSupport.parkNanos(wait);
                    }
                }
                inFlight.acquire();
                BytesMessage message = session.createBytesMessage();
                message.writeBytes(ByteBuffer.allocate(8).putLong(System.nanoTime()).array());
                message.writeBytes(padding);
                producer.send(message, release);
                sent.incrementAndGet();
            }
            // every send confirmed (or failed) before the sender counts as done
            inFlight.acquire(maxInFlight);
        } catch (JMSException | InterruptedException e) {
            System.err.println("sender failed: " + e);
        }
    }
}
