package io.skiffmq.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.BuiltinExchangeType;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.GetResponse;
import com.rabbitmq.client.MessageProperties;
import com.rabbitmq.client.ShutdownSignalException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A Jepsen-style check of the replicated definitions: clients declare and delete queues and bind and unbind them,
 * on all three nodes at once, while a nemesis kills nodes (kill -9) and starts them again, and cuts nodes off from
 * the others ({@link NetnsCluster#isolate}); a publisher sends persistent messages with confirms to a queue on node 0,
 * which is cut off at times but never killed. Each operation's invocation and outcome is recorded: ok, fail (a
 * definite refusal) or unknown (a timeout, 541, or a connection lost mid-way: it may or may not have happened). A
 * delete or unbind acknowledged by another node than the one that acknowledged the declare or bind counts as
 * unknown: that node may not have applied the declare yet (RabbitMQ's model with Khepri, below).
 * Once the faults end and the nodes have caught up, the history is checked: every node holds the same queues,
 * bindings and exchanges; a queue or binding acknowledged and not deleted since is there, one whose deletion was
 * acknowledged or whose creation was refused is not, unknown ones may be either; nothing is there that no client
 * asked for; every confirmed message was consumed (a consumer on node 0 takes them as they come) or is in its queue.
 * Beside them, a second publisher sends to a quorum queue replicated on all three nodes, through any node, and the
 * nemesis kills the queue's leader's node whenever that is node 1 or 2: every message it confirmed is consumed
 * afterwards, exactly once (duplicates only among the unconfirmed).
 *
 * <p>{@code -Dskiffmq.jepsen.seconds=N} sets how long the faults go on (15 by default; longer runs: docs/cluster.md),
 * {@code -Dskiffmq.jepsen.clients=N} the clients (4). The history goes to {@code target/jepsen-history.txt}.
 * Skipped where network namespaces cannot be made.
 */
@OneAtATime
class ClusterJepsenTest {
    private static final int APPEND_TIMEOUT_MILLIS = 3000;
    private static final Duration WAIT = Duration.ofSeconds(90);
    private static final String EXCHANGE = "jx";
    private static final String MESSAGES = "jp";
    /** A quorum queue replicated on all three nodes, published to through any node. */
    private static final String QUORUM = "jqq";

    @TempDir
    Path dir;

    enum Outcome { OK, FAIL, UNKNOWN }

    /** One operation: what, on what, through which node, when, and how it ended. */
    record Op(int client, String kind, String queue, String key, int node, long invoked, long completed,
            Outcome outcome, String why) {
        @Override
        public String toString() {
            return String.format("%8d %8d c%d n%d %-7s %-10s %-10s %-7s %s", invoked / 1_000_000,
                completed / 1_000_000, client, node, kind, queue, key == null ? "" : key, outcome,
                why == null ? "" : why);
        }
    }

    private NetnsCluster cluster;
    private final ConcurrentLinkedQueue<Op> history = new ConcurrentLinkedQueue<>();
    private final ConcurrentLinkedQueue<String> faults = new ConcurrentLinkedQueue<>();
    private final AtomicInteger completed = new AtomicInteger();
    private final AtomicBoolean stop = new AtomicBoolean();
    private final long start = System.nanoTime();
    /** The nemesis' start of a killed node, under way. */
    private CompletableFuture<Void> restarting = CompletableFuture.completedFuture(null);

    @Test
    void acknowledgedChangesSurviveKillsAndPartitionsAndEveryNodeConverges() throws Exception {
        String why = NetnsCluster.unavailable();
        Assumptions.assumeTrue(why == null, () -> "no network namespaces: " + why);
        int seconds = Integer.getInteger("skiffmq.jepsen.seconds", 15);
        int clients = Integer.getInteger("skiffmq.jepsen.clients", 4);
        try (NetnsCluster c = new NetnsCluster(dir, 3, APPEND_TIMEOUT_MILLIS)) {
            cluster = c;
            c.startAll();
            try (Connection setup = connect(0)) {
                Channel channel = setup.createChannel();
                channel.exchangeDeclare(EXCHANGE, BuiltinExchangeType.DIRECT, true);
                channel.queueDeclare(MESSAGES, true, false, false, Map.of());
                channel.queueDeclare(QUORUM, true, false, false, Map.of("x-queue-type", "quorum"));
            }

            List<Thread> threads = new ArrayList<>();
            for (int i = 0; i < clients; i++) {
                int client = i;
                threads.add(new Thread(() -> client(client), "jepsen-client-" + i));
            }
            Set<String> confirmed = ConcurrentHashMap.newKeySet();
            threads.add(new Thread(() -> publisher(confirmed), "jepsen-publisher"));
            Set<String> quorumConfirmed = ConcurrentHashMap.newKeySet();
            threads.add(new Thread(() -> quorumPublisher(quorumConfirmed), "jepsen-quorum-publisher"));
            // a consumer keeps the queue short: a long run would otherwise fill node 0's memory and block publishing
            Set<String> received = ConcurrentHashMap.newKeySet();
            Connection consuming = connect(0);
            Channel consumer = consuming.createChannel();
            consumer.basicQos(500);
            consumer.basicConsume(MESSAGES, false, (tag, delivery) -> {
                received.add(new String(delivery.getBody(), StandardCharsets.UTF_8));
                consumer.basicAck(delivery.getEnvelope().getDeliveryTag(), false);
            }, tag -> { });
            threads.forEach(Thread::start);
            long deadline = System.nanoTime() + Duration.ofSeconds(seconds).toNanos();
            try {
                nemesis(deadline);
            } finally {
                stop.set(true);
                for (Thread t : threads) {
                    t.join(WAIT.toMillis());
                }
                consuming.abort(); // what it had not acknowledged goes back to the queue, for check to take
            }
            writeHistory();
            heal();
            check(confirmed, received, quorumConfirmed);
        }
    }

    /** A client: declares, deletes, binds and unbinds through random nodes, until told to stop. */
    private void client(int client) {
        ThreadLocalRandom random = ThreadLocalRandom.current();
        List<String> live = new ArrayList<>();
        List<String[]> bound = new ArrayList<>();
        int n = 0;
        Connection connection = null;
        AtomicInteger through = new AtomicInteger();
        while (!stop.get()) {
            if (connection == null || !connection.isOpen()) {
                // a node that was just killed refuses: another one is tried
                connection = await().atMost(WAIT).ignoreExceptions().until(() -> {
                    through.set(ThreadLocalRandom.current().nextInt(3));
                    return cluster.factory(through.get()).newConnection();
                }, Connection::isOpen);
            }
            int node = through.get();
            double r = random.nextDouble();
            String kind;
            String queue;
            String key = null;
            if (live.isEmpty() || r < 0.4) {
                kind = "declare";
                queue = "q" + client + "-" + n++;
            } else if (r < 0.55) {
                kind = "delete";
                queue = live.remove(random.nextInt(live.size()));
                bound.removeIf(b -> b[0].equals(queue));
            } else if (r < 0.85 || bound.isEmpty()) {
                kind = "bind";
                queue = live.get(random.nextInt(live.size()));
                key = "k" + client + "-" + n++;
            } else {
                kind = "unbind";
                String[] b = bound.remove(random.nextInt(bound.size()));
                queue = b[0];
                key = b[1];
            }
            long invoked = System.nanoTime() - start;
            Outcome outcome = Outcome.OK;
            String why = null;
            try {
                Channel channel = connection.createChannel();
                switch (kind) {
                    case "declare" -> channel.queueDeclare(queue, true, false, false, Map.of());
                    case "delete" -> channel.queueDelete(queue);
                    case "bind" -> channel.queueBind(queue, EXCHANGE, key);
                    default -> channel.queueUnbind(queue, EXCHANGE, key);
                }
                channel.close();
            } catch (Exception e) {
                ShutdownSignalException signal = signal(e);
                why = signal != null && signal.getReason() != null ? reason(signal) : e.toString();
                // a channel error (404, 406) is a definite refusal; a 541 timeout or a lost connection is not
                outcome = signal != null && !signal.isHardError() ? Outcome.FAIL : Outcome.UNKNOWN;
            }
            history.add(new Op(client, kind, queue, key, node, invoked, System.nanoTime() - start, outcome, why));
            completed.incrementAndGet();
            if (outcome == Outcome.OK && kind.equals("declare")) {
                live.add(queue);
            } else if (outcome == Outcome.OK && kind.equals("bind")) {
                bound.add(new String[] {queue, key});
            }
        }
        if (connection != null) {
            connection.abort();
        }
    }

    /** Publishes persistent messages with confirms to a queue on node 0, recording those confirmed. */
    private void publisher(Set<String> confirmed) {
        int n = 0;
        while (!stop.get()) {
            try (Connection connection = cluster.factory(0).newConnection()) {
                Channel channel = connection.createChannel();
                channel.confirmSelect();
                while (!stop.get()) {
                    List<String> batch = new ArrayList<>();
                    for (int i = 0; i < 20; i++) {
                        String body = "m" + n++;
                        channel.basicPublish("", MESSAGES, MessageProperties.PERSISTENT_TEXT_PLAIN,
                            body.getBytes(StandardCharsets.UTF_8));
                        batch.add(body);
                    }
                    channel.waitForConfirmsOrDie(10_000);
                    confirmed.addAll(batch);
                }
            } catch (Exception e) {
                faults.add(ms() + " publisher: " + e);
            }
        }
    }

    /**
     * Publishes messages with confirms to the quorum queue through a random node, in windows of 20, on a fresh
     * connection to another random node whenever one fails; records each message its publisher confirmed.
     */
    private void quorumPublisher(Set<String> confirmed) {
        ThreadLocalRandom random = ThreadLocalRandom.current();
        int n = 0;
        while (!stop.get()) {
            int node = random.nextInt(3);
            try (Connection connection = cluster.factory(node).newConnection()) {
                Channel channel = connection.createChannel();
                ConfirmTracking<String> tracking = new ConfirmTracking<>(channel, confirmed);
                while (!stop.get()) {
                    for (int i = 0; i < 20; i++) {
                        String body = "q" + n++;
                        tracking.publishing(channel.getNextPublishSeqNo(), body);
                        channel.basicPublish("", QUORUM, MessageProperties.PERSISTENT_TEXT_PLAIN,
                            body.getBytes(StandardCharsets.UTF_8));
                    }
                    channel.waitForConfirms(10_000); // false when some were refused: they are not recorded
                }
            } catch (Exception e) {
                faults.add(ms() + " quorum publisher on n" + node + ": " + e);
            }
        }
    }

    /** The node that leads the quorum queue's group, as node 0 sees it; -1 when none is known. */
    private int quorumLeader() {
        return cluster.queueLeaderSeenBy(0, QUORUM);
    }

    /**
     * Kills and starts nodes 1 and 2, and cuts a node off (the leader, half the time), one fault at a time, until
     * the deadline.
     */
    private void nemesis(long deadline) throws Exception {
        ThreadLocalRandom random = ThreadLocalRandom.current();
        boolean kill = false;
        while (System.nanoTime() < deadline) {
            hold(10, Duration.ofSeconds(1), Duration.ofSeconds(3));
            if (kill) {
                restarting.join(); // one node down at a time
                int quorumLeader = quorumLeader();
                int node = quorumLeader > 0 ? quorumLeader : 1 + random.nextInt(2);
                faults.add(ms() + " kill -9 n" + node + (node == quorumLeader ? " (the quorum queue's leader)" : ""));
                cluster.nodes[node].kill();
                hold(10, Duration.ofSeconds(1), Duration.ofSeconds(3));
                // a start takes seconds on a busy machine: the next fault comes meanwhile
                restarting = CompletableFuture.runAsync(() -> {
                    try {
                        cluster.start(node);
                    } catch (Exception e) {
                        throw new CompletionException(e);
                    }
                    faults.add(ms() + " started n" + node);
                }, task -> new Thread(task, "jepsen-start-n" + node).start());
            } else {
                int leader = cluster.leaderSeenBy(0);
                int node = leader >= 0 && random.nextBoolean() ? leader : random.nextInt(3);
                faults.add(ms() + " isolate n" + node + (node == leader ? " (the leader)" : ""));
                cluster.isolate(node);
                // long enough for an election and for changes on the cut-off node to time out
                hold(20, Duration.ofSeconds(4), Duration.ofSeconds(8));
                cluster.heal(node);
                faults.add(ms() + " healed n" + node);
            }
            kill = !kill;
        }
    }

    /** Waits at least {@code least}, then until the clients complete {@code ops} more operations or {@code most}. */
    private void hold(int ops, Duration least, Duration most) {
        int target = completed.get() + ops;
        long began = System.nanoTime();
        await().atMost(most.plusSeconds(1)).pollDelay(Duration.ZERO).until(() -> {
            long held = System.nanoTime() - began;
            return held >= most.toNanos() || held >= least.toNanos() && completed.get() >= target;
        });
    }

    /** Every node up, healed, and caught up with a change made after the faults. */
    private void heal() throws Exception {
        restarting.join();
        for (int i = 0; i < 3; i++) {
            cluster.heal(i);
            if (!cluster.nodes[i].process.isAlive()) {
                cluster.start(i);
            }
        }
        await().atMost(WAIT).until(() -> cluster.agreedLeader(0, 1, 2) >= 0);
        await().atMost(WAIT).ignoreExceptions().until(() -> {
            try (Connection connection = cluster.factory(0).newConnection()) {
                connection.createChannel().exchangeDeclare("healed", BuiltinExchangeType.FANOUT, true);
            }
            return true;
        });
        await().atMost(WAIT).until(() -> {
            for (int i = 0; i < 3; i++) {
                if (cluster.api(i).get("/api/exchanges/%2F/healed").status() != 200) {
                    return false;
                }
            }
            return true;
        });
    }

    private void check(Set<String> confirmed, Set<String> received, Set<String> quorumConfirmed)
            throws Exception {
        // every node holds the same definitions
        Set<Map<String, Object>> queues = definitions(0, "queues", "name", "durable", "auto_delete", "arguments",
            "node");
        Set<Map<String, Object>> bindings = definitions(0, "bindings", "source", "destination", "destination_type",
            "routing_key", "arguments");
        Set<Map<String, Object>> exchanges = definitions(0, "exchanges", "name", "type", "durable", "auto_delete",
            "internal", "arguments");
        for (int i = 1; i < 3; i++) {
            assertThat(definitions(i, "queues", "name", "durable", "auto_delete", "arguments", "node"))
                .as("queues on node " + i + " and node 0").isEqualTo(queues);
            assertThat(definitions(i, "bindings", "source", "destination", "destination_type", "routing_key",
                "arguments")).as("bindings on node " + i + " and node 0").isEqualTo(bindings);
            assertThat(definitions(i, "exchanges", "name", "type", "durable", "auto_delete", "internal", "arguments"))
                .as("exchanges on node " + i + " and node 0").isEqualTo(exchanges);
        }

        Set<String> queueNames = queues.stream().map(q -> (String) q.get("name")).collect(Collectors.toSet());
        Set<String> bindingKeys = bindings.stream().filter(b -> EXCHANGE.equals(b.get("source")))
            .map(b -> b.get("destination") + "/" + b.get("routing_key")).collect(Collectors.toSet());
        Map<String, Op> declares = new HashMap<>();
        Map<String, Op> binds = new HashMap<>();
        for (Op op : history) {
            if (op.kind().equals("declare")) {
                declares.put(op.queue(), op);
            } else if (op.kind().equals("bind")) {
                binds.put(op.queue() + "/" + op.key(), op);
            }
        }
        Map<String, Outcome> declared = new HashMap<>();
        Map<String, Outcome> deleted = new HashMap<>();
        Map<String, Outcome> bound = new HashMap<>();
        Map<String, Outcome> unbound = new HashMap<>();
        List<Op> elsewhere = new ArrayList<>();
        for (Op op : history) {
            // A node answers from what it has applied: a delete or unbind acknowledged by a node other than the one
            // that acknowledged the declare or bind may have come before that node applied it, and then deleted
            // nothing (RabbitMQ's model with Khepri: a change is acknowledged once a majority with the node that
            // made it has it, and the others apply it a little later). Such an acknowledgement proves nothing.
            Op made = op.kind().equals("delete") ? declares.get(op.queue())
                : op.kind().equals("unbind") ? binds.get(op.queue() + "/" + op.key()) : op;
            Outcome outcome = op.outcome() == Outcome.OK && made.node() != op.node() ? Outcome.UNKNOWN : op.outcome();
            if (outcome != op.outcome()) {
                elsewhere.add(op);
            }
            switch (op.kind()) {
                case "declare" -> declared.put(op.queue(), outcome);
                case "delete" -> deleted.put(op.queue(), outcome);
                case "bind" -> bound.put(op.queue() + "/" + op.key(), outcome);
                default -> unbound.put(op.queue() + "/" + op.key(), outcome);
            }
        }
        long stale = elsewhere.stream().filter(op -> op.kind().equals("delete") ? queueNames.contains(op.queue())
            : bindingKeys.contains(op.queue() + "/" + op.key())).count();
        List<String> anomalies = new ArrayList<>();
        Map<Outcome, Integer> counts = new TreeMap<>();
        history.forEach(op -> counts.merge(op.outcome(), 1, Integer::sum));
        Set<String> mustHaveQueue = new HashSet<>();
        for (Map.Entry<String, Outcome> d : declared.entrySet()) {
            String queue = d.getKey();
            Outcome deletion = deleted.get(queue);
            boolean present = queueNames.contains(queue);
            if (d.getValue() == Outcome.OK && (deletion == null || deletion == Outcome.FAIL)) {
                mustHaveQueue.add(queue);
                if (!present) {
                    anomalies.add("queue " + queue + ": declare acknowledged, never deleted, missing");
                }
            }
            if (deletion == Outcome.OK && present) {
                anomalies.add("queue " + queue + ": delete acknowledged, still there");
            }
            if (d.getValue() == Outcome.FAIL && present) {
                anomalies.add("queue " + queue + ": declare refused, there");
            }
        }
        for (String queue : queueNames) {
            if (!queue.equals(MESSAGES) && !queue.equals(QUORUM) && !declared.containsKey(queue)) {
                anomalies.add("queue " + queue + ": there, never declared");
            }
        }
        for (Map.Entry<String, Outcome> b : bound.entrySet()) {
            String binding = b.getKey();
            String queue = binding.substring(0, binding.indexOf('/'));
            Outcome unbinding = unbound.get(binding);
            boolean present = bindingKeys.contains(binding);
            if (b.getValue() == Outcome.OK && (unbinding == null || unbinding == Outcome.FAIL)
                    && mustHaveQueue.contains(queue) && !present) {
                anomalies.add("binding " + binding + ": bind acknowledged, never unbound, queue kept, missing");
            }
            if ((unbinding == Outcome.OK || deleted.get(queue) == Outcome.OK) && present) {
                anomalies.add("binding " + binding + ": unbind or queue delete acknowledged, still there");
            }
            if (b.getValue() == Outcome.FAIL && present) {
                anomalies.add("binding " + binding + ": bind refused, there");
            }
        }
        for (String binding : bindingKeys) {
            if (!bound.containsKey(binding)) {
                anomalies.add("binding " + binding + ": there, never bound");
            }
        }

        // every confirmed message was consumed or is in its queue
        Set<String> kept = new HashSet<>(received);
        try (Connection connection = connect(0)) {
            Channel channel = connection.createChannel();
            for (GetResponse got; (got = channel.basicGet(MESSAGES, true)) != null; ) {
                kept.add(new String(got.getBody(), StandardCharsets.UTF_8));
            }
        }
        Set<String> lost = new HashSet<>(confirmed);
        lost.removeAll(kept);
        if (!lost.isEmpty()) {
            anomalies.add(lost.size() + " confirmed messages lost, such as " + lost.iterator().next());
        }

        // every message confirmed by the quorum queue is there, once; duplicates only among the unconfirmed
        Map<String, Integer> quorumHeld = drainQuorumQueue(quorumConfirmed);
        Set<String> quorumLost = new TreeSet<>(quorumConfirmed);
        quorumLost.removeAll(quorumHeld.keySet());
        if (!quorumLost.isEmpty()) {
            anomalies.add(quorumLost.size() + " messages confirmed by the quorum queue lost: " + quorumLost);
        }
        List<String> twice = quorumHeld.entrySet().stream()
            .filter(e -> e.getValue() > 1 && quorumConfirmed.contains(e.getKey())).map(Map.Entry::getKey).toList();
        if (!twice.isEmpty()) {
            anomalies.add(twice.size() + " confirmed messages consumed more than once from the quorum queue: " + twice);
        }

        String summary = "operations " + counts + ", " + queueNames.size() + " queues and " + bindingKeys.size()
            + " bindings at the end, " + elsewhere.size() + " deletes and unbinds acknowledged by another node than"
            + " the declare or bind, " + stale + " of which deleted nothing, " + confirmed.size()
            + " messages confirmed, " + quorumConfirmed.size() + " by the quorum queue (" + quorumHeld.size()
            + " consumed from it), faults: " + faults;
        System.out.println("jepsen: " + summary);
        assertThat(counts.getOrDefault(Outcome.OK, 0)).as("acknowledged operations; " + summary).isPositive();
        assertThat(confirmed).as("confirmed messages; " + summary).isNotEmpty();
        assertThat(quorumConfirmed).as("messages confirmed by the quorum queue; " + summary).isNotEmpty();
        assertThat(anomalies).as(summary + "; history in target/jepsen-history.txt").isEmpty();
    }

    /**
     * Consumes the quorum queue through node 0 until every confirmed message came (or {@link #WAIT} passed), again
     * whenever the consumer is cancelled; how many times each message came.
     */
    private Map<String, Integer> drainQuorumQueue(Set<String> confirmed) {
        Map<String, Integer> held = new ConcurrentHashMap<>();
        try (Connection connection = connect(0)) {
            long deadline = System.nanoTime() + WAIT.toNanos();
            while (!held.keySet().containsAll(confirmed) && System.nanoTime() < deadline) {
                AtomicBoolean cancelled = new AtomicBoolean();
                try {
                    Channel channel = connection.createChannel();
                    channel.basicQos(1000);
                    channel.basicConsume(QUORUM, false, (tag, delivery) -> {
                        held.merge(new String(delivery.getBody(), StandardCharsets.UTF_8), 1, Integer::sum);
                        channel.basicAck(delivery.getEnvelope().getDeliveryTag(), false);
                    }, tag -> cancelled.set(true));
                    await().atMost(Duration.ofNanos(Math.max(1, deadline - System.nanoTime())))
                        .until(() -> cancelled.get() || !channel.isOpen() || held.keySet().containsAll(confirmed));
                    if (channel.isOpen()) {
                        channel.close();
                    }
                } catch (IOException | java.util.concurrent.TimeoutException
                        | org.awaitility.core.ConditionTimeoutException e) {
                    faults.add(ms() + " quorum consumer: " + e); // no leader yet: consumed again
                }
            }
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
        return held;
    }

    /** {@code /api/<what>/%2F} on node {@code i}, each item cut to {@code fields}. */
    private Set<Map<String, Object>> definitions(int i, String what, String... fields) throws Exception {
        HttpApiClient.Answer answer = cluster.api(i).get("/api/" + what + "/%2F");
        assertThat(answer.status()).isEqualTo(200);
        Set<Map<String, Object>> items = new HashSet<>();
        for (Map<String, Object> item : answer.list()) {
            Map<String, Object> cut = new TreeMap<>();
            for (String field : fields) {
                cut.put(field, item.get(field));
            }
            if (QUORUM.equals(item.get("name"))) {
                // a replicated queue's node is its leader as each node last heard of it: it may differ for a moment
                cut.remove("node");
            }
            items.add(cut);
        }
        return items;
    }

    private void writeHistory() throws IOException {
        List<String> lines = new ArrayList<>(List.of("# invoked-ms completed-ms client node kind queue key outcome"));
        history.stream().sorted(Comparator.comparingLong(Op::invoked)).map(Op::toString)
            .forEach(lines::add);
        lines.add("# faults");
        lines.addAll(faults);
        Files.write(Path.of("target", "jepsen-history.txt"), lines);
    }

    private Connection connect(int i) {
        return await().atMost(WAIT).ignoreExceptions().until(() -> cluster.factory(i).newConnection(),
            Connection::isOpen);
    }

    private long ms() {
        return (System.nanoTime() - start) / 1_000_000;
    }

    private static ShutdownSignalException signal(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof ShutdownSignalException s) {
                return s;
            }
        }
        return null;
    }

    private static String reason(ShutdownSignalException signal) {
        return signal.getReason() instanceof AMQP.Connection.Close close
            ? close.getReplyCode() + " " + close.getReplyText()
            : signal.getReason() instanceof AMQP.Channel.Close close ? close.getReplyCode() + " "
                + close.getReplyText() : String.valueOf(signal.getReason());
    }
}
