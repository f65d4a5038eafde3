package io.skiffmq.benchmarks;

import io.netty.buffer.Unpooled;
import jakarta.jms.BytesMessage;
import jakarta.jms.CompletionListener;
import jakarta.jms.Connection;
import jakarta.jms.DeliveryMode;
import jakarta.jms.JMSException;
import jakarta.jms.Message;
import jakarta.jms.MessageConsumer;
import jakarta.jms.MessageProducer;
import jakarta.jms.Session;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.apache.qpid.jms.JmsConnectionFactory;

/**
 * The JMS load engine: Qpid JMS, what JMS users see. Each sender is a thread of its own with asynchronous sends
 * (at most {@code --in-flight} awaiting their disposition), or pre-settled ones with {@code --settled=true}; each
 * receiver is a connection with a message listener. Its ceiling on a small machine is the client's, about 25k
 * msg/s, not the broker's.
 *
 * <p>Used by the thread that runs the load; the listeners run on Qpid JMS's threads.
 */
final class JmsEngine implements LoadEngine {
    private final Map<String, String> options;
    private final LoadCounters counters;
    private final JmsConnectionFactory factory;
    private final List<Connection> connections = new ArrayList<>();
    private final List<Thread> threads = new ArrayList<>();

    JmsEngine(Map<String, String> options, LoadCounters counters) {
        this.options = options;
        this.counters = counters;
        boolean settled = Boolean.parseBoolean(options.get("settled"));
        String uri = options.get("uri") + "?jms.prefetchPolicy.all=" + options.get("credit")
            + "&jms.forceAsyncSend=true" + (settled ? "&jms.presettlePolicy.presettleProducers=true" : "");
        this.factory = new JmsConnectionFactory(options.get("user"), options.get("password"), uri);
    }

    @Override
    public void startReceivers() throws JMSException {
        int receivers = Integer.parseInt(options.get("receivers"));
        boolean topic = Boolean.parseBoolean(options.get("topic"));
        int bodySize = LoadTool.bodySize(options);
        for (int r = 0; r < receivers; r++) {
            Connection connection = factory.createConnection();
            connections.add(connection);
            Session session = connection.createSession(false, Session.AUTO_ACKNOWLEDGE);
            MessageConsumer consumer = session.createConsumer(topic ? session.createTopic(LoadTool.target(options))
                : session.createQueue(options.get("queue")));
            LoadBody.Order order = new LoadBody.Order(topic || receivers == 1);
            consumer.setMessageListener(message -> receive(message, bodySize, order));
            connection.start();
        }
    }

    /** Checks the body, records the latency and counts the delivery; a damaged body counts as an error only. */
    private void receive(Message message, int bodySize, LoadBody.Order order) {
        try {
            BytesMessage bytes = (BytesMessage) message;
            byte[] body = new byte[(int) bytes.getBodyLength()];
            bytes.readBytes(body);
            io.netty.buffer.ByteBuf buf = Unpooled.wrappedBuffer(body);
            long id = LoadBody.check(buf, 0, body.length, bodySize);
            if (id < 0 || !order.accept((int) id)) {
                counters.errors.incrementAndGet();
                return;
            }
            long now = System.nanoTime();
            counters.latencies.recordValue(Math.max(0, now - LoadBody.sentAt(buf, 0)) / 1000);
            counters.received.incrementAndGet();
            counters.lastReceipt.set(now);
        } catch (JMSException | ClassCastException e) {
            counters.errors.incrementAndGet();
        }
    }

    @Override
    public void startSenders(long measureFrom, long end) throws JMSException {
        int senders = Integer.parseInt(options.get("senders"));
        for (int s = 0; s < senders; s++) {
            Connection connection = factory.createConnection();
            connections.add(connection);
            int id = s;
            Thread sender = new Thread(() -> send(connection, id, end), "sender-" + s);
            threads.add(sender);
            sender.start();
        }
    }

    @Override
    public boolean sending() {
        return threads.stream().anyMatch(Thread::isAlive);
    }

    /** One sender until {@code end} or {@code --count} messages: paced to its share of {@code --rate} when set. */
    private void send(Connection connection, int senderId, long end) {
        boolean topic = Boolean.parseBoolean(options.get("topic"));
        int maxInFlight = Integer.parseInt(options.get("in-flight"));
        int bodySize = LoadTool.bodySize(options);
        long rate = Long.parseLong(options.get("rate")) / Integer.parseInt(options.get("senders"));
        long count = Long.parseLong(options.get("count"));
        try {
            Session session = connection.createSession(false, Session.AUTO_ACKNOWLEDGE);
            String address = LoadTool.target(options);
            MessageProducer producer = session.createProducer(topic ? session.createTopic(address)
                : session.createQueue(address));
            producer.setDeliveryMode(Boolean.parseBoolean(options.get("durable")) ? DeliveryMode.PERSISTENT
                : DeliveryMode.NON_PERSISTENT);
            Semaphore inFlight = new Semaphore(maxInFlight);
            CompletionListener confirmed = new CompletionListener() {
                @Override
                public void onCompletion(Message message) {
                    // counted before the permit goes back: the sender may finish on that permit and be read at once
                    counters.sent.incrementAndGet();
                    inFlight.release();
                }

                @Override
                public void onException(Message message, Exception exception) {
                    counters.errors.incrementAndGet();
                    inFlight.release();
                }
            };
            long interval = rate > 0 ? 1_000_000_000L / rate : 0;
            long next = System.nanoTime();
            io.netty.buffer.ByteBuf body = Unpooled.buffer(bodySize);
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
                inFlight.acquire();
                BytesMessage message = session.createBytesMessage();
                body.clear();
                LoadBody.write(body, System.nanoTime(), LoadBody.id(senderId, n), bodySize);
                message.writeBytes(body.array(), 0, bodySize);
                producer.send(message, confirmed);
            }
            // every send confirmed (or failed) before the sender is done
            inFlight.acquire(maxInFlight);
        } catch (JMSException | InterruptedException e) {
            counters.errors.incrementAndGet();
            System.err.println("sender " + senderId + " failed: " + e);
        }
    }

    @Override
    public void close() throws JMSException {
        for (Connection connection : connections) {
            connection.close();
        }
    }
}
