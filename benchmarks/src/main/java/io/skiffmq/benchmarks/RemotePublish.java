package io.skiffmq.benchmarks;

import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentNavigableMap;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

/**
 * Issue 27's figure for queues on another node (docs/cluster.md, "Messages between nodes"): one AMQP 0-9-1
 * publisher with confirms, connected to node A, into a classic queue homed on node A ({@code local}) and into one
 * homed on node B ({@code remote}, through A's node link), in rounds that take turns to go first, side by side in
 * one run; and the tool's ceiling ({@code ceiling}: the same publisher into A's {@code amq.direct} with a key that
 * routes nowhere, no queue's work at all). After {@code --prewarm} seconds into each queue (for the JIT), each round
 * publishes for {@code --seconds} after {@code --warmup}, keeping at most {@code --in-flight} messages unconfirmed,
 * and reports the confirmed messages per second; the queues are purged between rounds (the remote one on its home).
 * The ratio remote/local is taken within each round. A benchmark, not a test; {@code benchmarks/remote-publish}
 * starts the cluster and runs it.
 *
 * <pre>
 * java -cp benchmarks/target/benchmarks.jar io.skiffmq.benchmarks.RemotePublish --port-a=PA --port-b=PB
 *     [--host=127.0.0.1] [--rounds=3] [--seconds=10] [--warmup=3] [--size=100] [--in-flight=1000]
 *     [--persistent=false] [--prewarm=10]
 * </pre>
 */
public final class RemotePublish {
    private static final String LOCAL = "remote-publish-local";
    private static final String REMOTE = "remote-publish-remote";

    private RemotePublish() {
    }

    public static void main(String[] args) throws Exception {
        Map<String, String> options = CommandLine.parseOrExit("RemotePublish", Map.of("host", "127.0.0.1",
            "port-a", "5672", "port-b", "5673", "rounds", "3", "seconds", "10", "warmup", "3", "size", "100",
            "in-flight", "1000", "persistent", "false", "prewarm", "10"), args);
        int rounds = Integer.parseInt(options.get("rounds"));
        long seconds = Long.parseLong(options.get("seconds"));
        long warmup = Long.parseLong(options.get("warmup"));
        byte[] body = new byte[Integer.parseInt(options.get("size"))];
        int inFlight = Integer.parseInt(options.get("in-flight"));
        boolean persistent = Boolean.parseBoolean(options.get("persistent"));
        try (Connection a = connect(options.get("host"), Integer.parseInt(options.get("port-a")));
                Connection b = connect(options.get("host"), Integer.parseInt(options.get("port-b")))) {
            Channel onA = a.createChannel();
            Channel onB = b.createChannel();
            onA.queueDeclare(LOCAL, true, false, false, null);
            onB.queueDeclare(REMOTE, true, false, false, null);
            awaitVisible(a, REMOTE);
            // both paths compiled before the first round (else it measures the JIT)
            long prewarm = Long.parseLong(options.get("prewarm"));
            publish(a, "", LOCAL, body, persistent, inFlight, 0, prewarm);
            publish(a, "", REMOTE, body, persistent, inFlight, 0, prewarm);
            onA.queuePurge(LOCAL);
            onB.queuePurge(REMOTE);
            System.out.printf("round  first   local/s  remote/s  ceiling/s  remote/local%n");
            List<Double> ratios = new ArrayList<>();
            for (int round = 1; round <= rounds; round++) {
                boolean localFirst = round % 2 == 1;
                double local = 0;
                double remote = 0;
                for (int turn = 0; turn < 2; turn++) {
                    if ((turn == 0) == localFirst) {
                        local = publish(a, "", LOCAL, body, persistent, inFlight, warmup, seconds);
                    } else {
                        remote = publish(a, "", REMOTE, body, persistent, inFlight, warmup, seconds);
                    }
                    onA.queuePurge(LOCAL);
                    onB.queuePurge(REMOTE);
                }
                double ceiling = publish(a, "amq.direct", "remote-publish-nowhere", body, persistent, inFlight,
                    warmup, seconds);
                ratios.add(remote / local);
                System.out.printf("%5d  %-6s %8.0f  %8.0f  %9.0f  %11.0f%%%n", round, localFirst ? "local"
                    : "remote", local, remote, ceiling, 100 * remote / local);
            }
            ratios.sort(null);
            System.out.printf("median remote/local %.0f%% over %d rounds%n", 100 * ratios.get(ratios.size() / 2),
                rounds);
            onA.queueDelete(LOCAL);
            onB.queueDelete(REMOTE);
        }
    }

    private static Connection connect(String host, int port) throws Exception {
        ConnectionFactory factory = new ConnectionFactory();
        factory.setHost(host);
        factory.setPort(port);
        factory.setRequestedHeartbeat(0);
        return factory.newConnection();
    }

    /** Until node A knows the queue declared on B (the declare is replicated, then applied there). */
    private static void awaitVisible(Connection a, String queue) throws Exception {
        for (int i = 0; i < 600; i++) {
            try (Channel channel = a.createChannel()) {
                channel.queueDeclarePassive(queue);
                return;
            } catch (java.io.IOException e) {
                Thread.sleep(100); // a benchmark's start-up, not a test
            }
        }
        throw new IllegalStateException("queue " + queue + " not seen on node A");
    }

    /** Publishes for {@code warmup} then {@code seconds}; the confirmed messages per second over the latter. */
    private static double publish(Connection connection, String exchange, String key, byte[] body,
            boolean persistent, int inFlight, long warmup, long seconds) throws Exception {
        Channel channel = connection.createChannel();
        channel.confirmSelect();
        Semaphore window = new Semaphore(inFlight);
        ConcurrentNavigableMap<Long, Boolean> outstanding = new ConcurrentSkipListMap<>();
        long[] confirmed = new long[1];
        channel.addConfirmListener((tag, multiple) -> settle(outstanding, window, confirmed, tag, multiple),
            (tag, multiple) -> {
                throw new IllegalStateException("nacked: " + tag);
            });
        com.rabbitmq.client.AMQP.BasicProperties properties = persistent
            ? com.rabbitmq.client.MessageProperties.PERSISTENT_BASIC : null;
        long start = System.nanoTime();
        long measureFrom = start + TimeUnit.SECONDS.toNanos(warmup);
        long end = measureFrom + TimeUnit.SECONDS.toNanos(seconds);
        long confirmedAtStart = -1;
        while (System.nanoTime() < end) {
            if (confirmedAtStart < 0 && System.nanoTime() >= measureFrom) {
                synchronized (confirmed) {
                    confirmedAtStart = confirmed[0];
                }
            }
            if (!window.tryAcquire(100, TimeUnit.MILLISECONDS)) {
                continue;
            }
            outstanding.put(channel.getNextPublishSeqNo(), Boolean.TRUE);
            channel.basicPublish(exchange, key, false, properties, body);
        }
        long done;
        synchronized (confirmed) {
            done = confirmed[0];
        }
        channel.waitForConfirms(60_000);
        channel.close();
        return (done - confirmedAtStart) / (double) seconds;
    }

    private static void settle(ConcurrentNavigableMap<Long, Boolean> outstanding, Semaphore window, long[] confirmed,
            long tag, boolean multiple) {
        int n;
        if (multiple) {
            ConcurrentNavigableMap<Long, Boolean> head = outstanding.headMap(tag, true);
            n = head.size();
            head.clear();
        } else {
            n = outstanding.remove(tag) == null ? 0 : 1;
        }
        synchronized (confirmed) {
            confirmed[0] += n;
        }
        window.release(n);
    }
}
