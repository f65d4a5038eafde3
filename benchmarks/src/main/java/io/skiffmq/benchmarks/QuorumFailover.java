package io.skiffmq.benchmarks;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.ConfirmListener;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import com.rabbitmq.client.DefaultConsumer;
import com.rabbitmq.client.Envelope;
import com.rabbitmq.client.MessageProperties;
import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentNavigableMap;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Issue 28's failover time of a quorum queue: one quorum queue with three members on a 3-node cluster (SkiffMQ or
 * RabbitMQ, the same over AMQP 0-9-1), a publisher with confirms on one node that does not lead it and a consumer on
 * the other, while the queue's leader's node is killed with kill -9, {@code --trials} times. Each trial finds the
 * leader ({@code leader} in {@code GET /api/queues/%2F/QUEUE}, from the nodes' HTTP APIs), puts the publisher and the
 * consumer on the two other nodes, lets messages flow, kills the leader's process (its pid read from its pid file),
 * and times the kill to the first confirm of a message published after it, and to the first delivery of one; then
 * starts the node again ({@code --restart}, its {@code {i}} replaced by the node's index, through {@code bash -c})
 * and waits until all three members are {@code online} and the nodes agree on a leader before the next trial.
 * Prints each trial and the p50 (nearest rank) and max of both.
 *
 * <p>Messages carry their publish time ({@link System#nanoTime}) and are published at {@code --rate} per second with
 * at most {@code --in-flight} unconfirmed; a window unanswered for {@code --stall-ms} is given up (counted) so that a
 * publish lost by a broker cannot stop the run. Kept apart from the brokers' own processes: the script starts and
 * restarts them ({@code benchmarks/quorum-failover}).
 *
 * <pre>
 * java -cp benchmarks/target/benchmarks.jar io.skiffmq.benchmarks.QuorumFailover --label=SkiffMQ
 *     --names=n0@127.0.0.1,… --amqp-ports=P0,P1,P2 --http-ports=H0,H1,H2 --pid-files=F0,F1,F2
 *     --restart='benchmarks/quorum-failover restart-skiffmq DIR {i}' [--trials=20] [--queue=failover] [--rate=500]
 *     [--in-flight=200] [--size=12] [--timeout-ms=60000] [--settle-ms=2000] [--stall-ms=10000]
 * </pre>
 *
 * <p>Threads: the publisher's thread owns its connection; the main thread owns the consumer's connection and the
 * trial state, which the client's threads read through volatile fields and atomics.
 */
public final class QuorumFailover {
    private static final Pattern LEADER = Pattern.compile("\"leader\"\\s*:\\s*\"([^\"]*)\"");
    private static final Pattern ONLINE = Pattern.compile("\"online\"\\s*:\\s*\\[([^\\]]*)\\]");

    private final String label;
    private final String queue;
    private final List<String> names;
    private final int[] amqpPorts;
    private final int[] httpPorts;
    private final List<Path> pidFiles;
    private final String restart;
    private final int rate;
    private final int inFlight;
    private final int size;
    private final long timeoutMillis;
    private final long settleMillis;
    private final long stallMillis;
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

    /** The kill's {@link System#nanoTime}, {@link Long#MAX_VALUE} outside a trial. */
    private volatile long killedAt = Long.MAX_VALUE;
    private final AtomicLong firstConfirm = new AtomicLong();
    private final AtomicLong firstDelivery = new AtomicLong();
    private final AtomicLong confirms = new AtomicLong();
    private final AtomicLong nacks = new AtomicLong();
    private final AtomicLong deliveries = new AtomicLong();
    private final AtomicLong givenUp = new AtomicLong();
    private final AtomicLong failures = new AtomicLong();
    /** The node the publisher is to use; it reconnects when this changes. */
    private volatile int publisherNode = -1;
    private volatile boolean stop;

    private QuorumFailover(Map<String, String> options) {
        label = options.get("label");
        queue = options.get("queue");
        names = List.of(options.get("names").split(","));
        amqpPorts = Arrays.stream(options.get("amqp-ports").split(",")).mapToInt(Integer::parseInt).toArray();
        httpPorts = Arrays.stream(options.get("http-ports").split(",")).mapToInt(Integer::parseInt).toArray();
        pidFiles = Arrays.stream(options.get("pid-files").split(",")).map(Path::of).toList();
        restart = options.get("restart");
        rate = Integer.parseInt(options.get("rate"));
        inFlight = Integer.parseInt(options.get("in-flight"));
        size = Math.max(16, Integer.parseInt(options.get("size")));
        timeoutMillis = Long.parseLong(options.get("timeout-ms"));
        settleMillis = Long.parseLong(options.get("settle-ms"));
        stallMillis = Long.parseLong(options.get("stall-ms"));
        if (names.size() != 3 || amqpPorts.length != 3 || httpPorts.length != 3 || pidFiles.size() != 3) {
            throw new IllegalArgumentException("three nodes: --names, --amqp-ports, --http-ports, --pid-files");
        }
    }

    public static void main(String[] args) throws Exception {
        Map<String, String> options = CommandLine.parseOrExit("QuorumFailover", Map.ofEntries(
            Map.entry("label", "broker"), Map.entry("queue", "failover"), Map.entry("names", ""),
            Map.entry("amqp-ports", ""), Map.entry("http-ports", ""), Map.entry("pid-files", ""),
            Map.entry("restart", ""), Map.entry("trials", "20"), Map.entry("rate", "500"),
            Map.entry("in-flight", "200"), Map.entry("size", "16"), Map.entry("timeout-ms", "60000"),
            Map.entry("settle-ms", "2000"), Map.entry("stall-ms", "10000")), args);
        QuorumFailover tool = new QuorumFailover(options);
        System.exit(tool.run(Integer.parseInt(options.get("trials"))) ? 0 : 1);
    }

    private boolean run(int trials) throws Exception {
        try (Connection setup = factory(0).newConnection()) {
            setup.createChannel().queueDeclare(queue, true, false, false,
                Map.of("x-queue-type", "quorum", "x-quorum-initial-group-size", 3));
        }
        int leader = awaitHealthy();
        publisherNode = (leader + 1) % 3;
        Thread publisher = new Thread(this::publish, "failover-publisher");
        publisher.start();
        Connection consuming = null;
        int consumerNode = -1;
        List<Long> toConfirm = new ArrayList<>();
        List<Long> toDeliver = new ArrayList<>();
        int timedOut = 0;
        try {
            for (int trial = 1; trial <= trials; trial++) {
                leader = awaitHealthy();
                publisherNode = (leader + 1) % 3;
                if (consuming == null || !consuming.isOpen() || consumerNode != (leader + 2) % 3) {
                    close(consuming);
                    consumerNode = (leader + 2) % 3;
                    consuming = consume(consumerNode);
                }
                awaitFlowing(consuming, consumerNode);
                long pid = Long.parseLong(Files.readString(pidFiles.get(leader)).trim());
                ProcessHandle process = ProcessHandle.of(pid)
                    .orElseThrow(() -> new IllegalStateException("no process " + pid));
                firstConfirm.set(0);
                firstDelivery.set(0);
                killedAt = System.nanoTime();
                process.destroyForcibly(); // SIGKILL
                long deadline = killedAt + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
                while ((firstConfirm.get() == 0 || firstDelivery.get() == 0) && System.nanoTime() < deadline) {
                    if (!consuming.isOpen()) { // the consumer's node stays up: a closed connection is a failure
                        failures.incrementAndGet();
                        System.out.printf("  consumer's connection to %s closed: %s%n", names.get(consumerNode),
                            consuming.getCloseReason());
                        consuming = consume(consumerNode);
                    }
                    LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(5));
                }
                long kill = killedAt;
                killedAt = Long.MAX_VALUE;
                long confirm = firstConfirm.get() == 0 ? -1 : (firstConfirm.get() - kill) / 1_000_000;
                long delivery = firstDelivery.get() == 0 ? -1 : (firstDelivery.get() - kill) / 1_000_000;
                if (confirm < 0 || delivery < 0) {
                    timedOut++;
                }
                toConfirm.add(confirm < 0 ? timeoutMillis : confirm);
                toDeliver.add(delivery < 0 ? timeoutMillis : delivery);
                System.out.printf("%s trial %d: kill -9 of %s (leader, pid %d); publisher on %s, consumer on %s:"
                    + " first confirm after %s, first delivery after %s%n", label, trial, names.get(leader), pid,
                    names.get((leader + 1) % 3), names.get(consumerNode), millis(confirm), millis(delivery));
                process.onExit().get(10, TimeUnit.SECONDS);
                restart(leader);
            }
        } finally {
            stop = true;
            publisher.join(30_000);
            close(consuming);
        }
        System.out.printf("%s over %d leader kills: first confirm after the kill p50 %d ms, max %d ms;"
            + " first delivery after the kill p50 %d ms, max %d ms (%d timed out after %d ms; confirms %d, nacks %d,"
            + " windows given up %d, deliveries %d, client failures %d)%n", label, trials, p50(toConfirm),
            max(toConfirm), p50(toDeliver), max(toDeliver), timedOut, timeoutMillis, confirms.get(), nacks.get(),
            givenUp.get(), deliveries.get(), failures.get());
        System.out.printf("%s confirm ms: %s%n%s delivery ms: %s%n", label, sorted(toConfirm), label,
            sorted(toDeliver));
        return timedOut == 0;
    }

    /** Publishes at the rate, within the window, through {@link #publisherNode}, reconnecting when it changes. */
    private void publish() {
        long interval = 1_000_000_000L / rate;
        while (!stop) {
            int node = publisherNode;
            Connection connection = null;
            try {
                connection = factory(node).newConnection();
                Channel channel = connection.createChannel();
                channel.confirmSelect();
                Semaphore window = new Semaphore(inFlight);
                ConcurrentSkipListMap<Long, Long> unconfirmed = new ConcurrentSkipListMap<>();
                channel.addConfirmListener(new ConfirmListener() {
                    @Override
                    public void handleAck(long tag, boolean multiple) {
                        settle(unconfirmed, window, tag, multiple, true);
                    }

                    @Override
                    public void handleNack(long tag, boolean multiple) {
                        settle(unconfirmed, window, tag, multiple, false);
                    }
                });
                long next = System.nanoTime();
                while (!stop && publisherNode == node) {
                    if (!window.tryAcquire(stallMillis, TimeUnit.MILLISECONDS)) {
                        givenUp.addAndGet(unconfirmed.size());
                        System.out.printf("  publisher on %s: %d publishes unanswered for %d ms, given up%n",
                            names.get(node), unconfirmed.size(), stallMillis);
                        break; // a new channel: the broker may still answer this one's late
                    }
                    long now = System.nanoTime();
                    if (next > now) {
                        LockSupport.parkNanos(next - now);
                    } else if (now - next > 100_000_000L) {
                        next = now; // stalled: no burst to catch up
                    }
                    next += interval;
                    long seq = channel.getNextPublishSeqNo();
                    long sent = System.nanoTime();
                    unconfirmed.put(seq, sent);
                    byte[] body = new byte[size];
                    ByteBuffer.wrap(body).putLong(sent).putLong(seq);
                    channel.basicPublish("", queue, MessageProperties.PERSISTENT_BASIC, body);
                }
            } catch (Exception e) {
                if (!stop) {
                    failures.incrementAndGet();
                    System.out.printf("  publisher on %s: %s%n", names.get(node), e);
                    LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(100));
                }
            } finally {
                close(connection);
            }
        }
    }

    private void settle(ConcurrentSkipListMap<Long, Long> unconfirmed, Semaphore window, long tag, boolean multiple,
            boolean ack) {
        long now = System.nanoTime();
        ConcurrentNavigableMap<Long, Long> settled = multiple ? unconfirmed.headMap(tag, true)
            : unconfirmed.subMap(tag, true, tag, true);
        int n = 0;
        long kill = killedAt;
        for (Long sent : settled.values()) {
            n++;
            if (ack && sent > kill) {
                firstConfirm.compareAndSet(0, now);
            }
        }
        settled.clear();
        (ack ? confirms : nacks).addAndGet(n);
        window.release(n);
    }

    /** A consumer on {@code node}, acknowledging each message, noting the first one published after a kill. */
    private Connection consume(int node) throws Exception {
        Connection connection = factory(node).newConnection();
        Channel channel = connection.createChannel();
        channel.basicQos(500);
        channel.basicConsume(queue, false, new DefaultConsumer(channel) {
            @Override
            public void handleDelivery(String tag, Envelope envelope, AMQP.BasicProperties properties, byte[] body)
                    throws IOException {
                long now = System.nanoTime();
                deliveries.incrementAndGet();
                if (ByteBuffer.wrap(body).getLong() > killedAt) {
                    firstDelivery.compareAndSet(0, now);
                }
                channel.basicAck(envelope.getDeliveryTag(), false);
            }

            @Override
            public void handleCancel(String tag) {
                failures.incrementAndGet();
                System.out.printf("  consumer on %s cancelled by the broker%n", names.get(node));
                connection.abort();
            }
        });
        return connection;
    }

    /** Waits until messages are confirmed and delivered again, for the settle time at least. */
    private void awaitFlowing(Connection consuming, int consumerNode) {
        long began = System.nanoTime();
        long confirmed = confirms.get();
        long delivered = deliveries.get();
        while (System.nanoTime() - began < TimeUnit.MILLISECONDS.toNanos(settleMillis)
                || confirms.get() == confirmed || deliveries.get() == delivered) {
            if (System.nanoTime() - began > TimeUnit.MILLISECONDS.toNanos(timeoutMillis)) {
                throw new IllegalStateException("nothing confirmed or delivered for " + timeoutMillis
                    + " ms before a kill; consumer on " + names.get(consumerNode) + " open: " + consuming.isOpen());
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(10));
        }
    }

    /** Starts node {@code i} again with the restart command, waiting for it to finish. */
    private void restart(int i) throws Exception {
        long began = System.nanoTime();
        Process process = new ProcessBuilder("bash", "-c", restart.replace("{i}", String.valueOf(i)))
            .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.INHERIT).start();
        if (process.waitFor() != 0) {
            throw new IllegalStateException("restart of " + names.get(i) + " failed: exit " + process.exitValue());
        }
        System.out.printf("  %s started again in %d ms%n", names.get(i), (System.nanoTime() - began) / 1_000_000);
    }

    /**
     * Waits until every node answers that all three members are online and names the same leader; returns it. The
     * queue's leader changes, or is unknown, for a while after a member returns.
     */
    private int awaitHealthy() {
        long began = System.nanoTime();
        String last = "";
        while (System.nanoTime() - began < TimeUnit.MILLISECONDS.toNanos(timeoutMillis * 3)) {
            int agreed = -2;
            StringBuilder views = new StringBuilder();
            for (int i = 0; i < 3; i++) {
                String answer = get(i);
                Matcher leader = answer == null ? null : LEADER.matcher(answer);
                Matcher online = answer == null ? null : ONLINE.matcher(answer);
                int seen = leader != null && leader.find() ? names.indexOf(leader.group(1)) : -1;
                int up = online != null && online.find() ? online.group(1).split(",").length : 0;
                views.append(i == 0 ? "" : "; ").append(names.get(i)).append(": leader ")
                    .append(seen < 0 ? "?" : names.get(seen)).append(", ").append(up).append(" online");
                agreed = seen >= 0 && up == 3 && (agreed == -2 || agreed == seen) ? seen : -1;
            }
            last = views.toString();
            if (agreed >= 0) {
                return agreed;
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(200));
        }
        throw new IllegalStateException("the queue has no leader on three online members: " + last);
    }

    /** Node {@code i}'s {@code GET /api/queues/%2F/QUEUE}, or null when it does not answer 200. */
    private String get(int i) {
        try {
            HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + httpPorts[i]
                    + "/api/queues/%2F/" + URLEncoder.encode(queue, StandardCharsets.UTF_8)))
                .header("Authorization", "Basic " + Base64.getEncoder()
                    .encodeToString("guest:guest".getBytes(StandardCharsets.UTF_8)))
                .timeout(Duration.ofSeconds(5)).build();
            HttpResponse<String> response = http.send(request, HttpResponse.BodyHandlers.ofString());
            return response.statusCode() == 200 ? response.body() : null;
        } catch (IOException e) {
            return null;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return null;
        }
    }

    private ConnectionFactory factory(int i) {
        ConnectionFactory factory = new ConnectionFactory();
        factory.setHost("127.0.0.1");
        factory.setPort(amqpPorts[i]);
        factory.setConnectionTimeout(5000);
        factory.setAutomaticRecoveryEnabled(false); // the tool picks the node itself
        return factory;
    }

    private static void close(Connection connection) {
        if (connection != null) {
            connection.abort(2000);
        }
    }

    private static String millis(long ms) {
        return ms < 0 ? "none (timed out)" : ms + " ms";
    }

    /** The nearest-rank median, the lower one of an even count, as benchmarks/cluster-figures. */
    static long p50(List<Long> values) {
        List<Long> sorted = sorted(values);
        return sorted.get((sorted.size() - 1) / 2);
    }

    private static long max(List<Long> values) {
        return values.stream().mapToLong(Long::longValue).max().orElse(0);
    }

    private static List<Long> sorted(List<Long> values) {
        return values.stream().sorted().toList();
    }
}
