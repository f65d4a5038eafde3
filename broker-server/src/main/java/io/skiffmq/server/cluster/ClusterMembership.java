package io.skiffmq.server.cluster;

import io.skiffmq.cluster.ClusterNode;
import io.skiffmq.cluster.ClusterSecret;
import io.skiffmq.cluster.ClusterSettings;
import io.skiffmq.cluster.ClusterStatus;
import io.skiffmq.cluster.NodeAddress;
import io.skiffmq.server.config.BrokerConfig;
import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;

/**
 * This broker's part in a cluster: the {@link ClusterNode} started from the {@code node} and {@code cluster-*}
 * settings, with the metadata log under {@code data-dir/cluster}. Not started at all without {@code cluster-port}
 * ({@link #start} returns null). Thread-safe, as the node is.
 */
public final class ClusterMembership implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(ClusterMembership.class.getName());

    private final ClusterNode node;
    private final ReplicatedDefinitions definitions;
    /** Appends this node's own definitions into the log at start ({@link #offer}), until they are committed. */
    private final java.util.concurrent.ExecutorService offers = java.util.concurrent.Executors.newSingleThreadExecutor(
        runnable -> {
            Thread thread = new Thread(runnable, "skiffmq-definitions-offer");
            thread.setDaemon(true);
            return thread;
        });

    private final ReplicatedQueues queues;

    private ClusterMembership(ClusterNode node, ReplicatedDefinitions definitions, ReplicatedQueues queues) {
        this.node = node;
        this.definitions = definitions;
        this.queues = queues;
    }

    /** The replicated quorum queues of this node. */
    public ReplicatedQueues queues() {
        return queues;
    }

    /** rabbitmq-queues' {@code rebalance}. */
    public QueueRebalance queueRebalance() {
        return new QueueRebalance(queues, node);
    }

    /** rabbitmq-queues' {@code add_member} and {@code delete_member}. */
    public QueueMembership queueMembership() {
        return new QueueMembership(queues, node);
    }

    /**
     * Starts this node's cluster membership, or returns null when {@code config} has no {@code cluster-port}.
     *
     * @throws IllegalArgumentException when the node name or a {@code cluster-nodes} entry is malformed
     * @throws IOException when the secret or the log cannot be read or written
     */
    public static ClusterMembership start(BrokerConfig config) throws IOException {
        if (!config.cluster().enabled()) {
            return null;
        }
        NodeAddress self = new NodeAddress(config.node(), NodeAddress.hostOf(config.node()), config.cluster().port());
        ClusterSecret secret = ClusterSecret.loadOrCreate(config.cluster().secretFile(config.dataDir()));
        ClusterSettings settings = ClusterSettings.of(self, NodeAddress.parseList(config.cluster().nodes()),
                config.bindAddress(), config.dataDir().resolve("cluster"), secret)
            .withAppendTimeout(Duration.ofMillis(config.cluster().appendTimeoutMillis()))
            .withElectionTimeout(Duration.ofMillis(config.cluster().electionTimeoutMillis()))
            .withQueueSnapshotBytes(config.cluster().queueSnapshotBytes());
        ReplicatedDefinitions definitions = new ReplicatedDefinitions();
        ReplicatedQueues queues = new ReplicatedQueues(settings.appendTimeout(), config.cluster().maxInFlight());
        io.skiffmq.server.transport.PortBinding.probe(config.bindAddress(), config.cluster().port(), "cluster-port");
        io.skiffmq.server.transport.PortBinding.probe(config.bindAddress(),
            config.cluster().port() + ClusterSettings.QUEUE_PORT_OFFSET, "cluster-port (its queue port, 2 above it)");
        ClusterNode node = ClusterNode.start(settings, definitions, queues);
        queues.node(node, definitions);
        definitions.log(node, self.name());
        definitions.queues(queues);
        return new ClusterMembership(node, definitions, queues);
    }

    /** The broker's definitions, replicated by the metadata log. */
    public ReplicatedDefinitions definitions() {
        return definitions;
    }

    /**
     * Appends this node's own definitions to the log, in the background, trying again while there is no majority;
     * runs {@code done} once they are committed. {@code seed}: only where the cluster has no definitions yet (a
     * first start's guest and {@code /}); otherwise every change, as a single node's definitions migrated into the
     * cluster are.
     */
    public void offer(java.util.List<? extends io.skiffmq.core.definitions.DefinitionChange.BrokerChange> changes,
            boolean seed, IoAction done) {
        offers.execute(() -> {
            while (!Thread.currentThread().isInterrupted()) {
                try {
                    (seed ? definitions.seed(changes) : definitions.append(changes)).get();
                    done.run();
                    LOG.log(System.Logger.Level.INFO, seed ? "offered this node''s first-start definitions to the"
                        + " cluster" : "this node''s definitions ({0} changes) are now the cluster''s", changes.size());
                    return;
                } catch (InterruptedException e) {
                    return;
                } catch (java.util.concurrent.ExecutionException e) {
                    if (!(e.getCause() instanceof io.skiffmq.cluster.NoMajorityException)) {
                        LOG.log(System.Logger.Level.ERROR, "cannot append this node's definitions", e.getCause());
                        return;
                    }
                } catch (IOException e) {
                    LOG.log(System.Logger.Level.ERROR, "cannot retire the single node's definitions files", e);
                    return;
                }
            }
        });
    }

    /** What runs once an offer is committed. */
    @FunctionalInterface
    public interface IoAction {
        void run() throws IOException;
    }

    /** This node's TLS for its message traffic with the other nodes (the cluster secret's). */
    public io.skiffmq.cluster.NodeTls tls() {
        return node.tls();
    }

    /** This node's link to another node closed: the groups that node led may elect at once. */
    public void nodeLinkLost(String nodeName) {
        node.nodeLinkLost(nodeName);
    }

    /** The members, as the log has them now (name, host, cluster port). */
    public java.util.List<NodeAddress> members() {
        return node.members();
    }

    /** The cluster as this node sees it; asks the other members, for up to two seconds. */
    public ClusterStatus status() {
        return node.status();
    }

    /** What this node answers another member's {@link #readingsOf}. */
    public void answerReadings(java.util.function.Supplier<byte[]> readings) {
        node.answerReadings(readings);
    }

    /** {@code member}'s readings as it encoded them, asked over the cluster transport; fails after two seconds. */
    public CompletableFuture<byte[]> readingsOf(String member) {
        return node.readingsOf(member);
    }

    /** The figures of this node's Raft groups: the metadata group's, then each queue group's. */
    public java.util.List<io.skiffmq.cluster.RaftReading> raftReadings() {
        return node.raftReadings();
    }

    /** The cluster's name, without asking anyone. */
    public String clusterName() {
        return node.clusterName();
    }

    /** Names the cluster on every node; completes once a majority has it. */
    public CompletableFuture<Long> setClusterName(String name) {
        return node.setClusterName(name);
    }

    /**
     * Joins the cluster of {@code seed}, {@code name@host:port} or {@code name@host} (then on this node's own
     * cluster port, as RabbitMQ nodes share 25672).
     *
     * @throws IllegalArgumentException when {@code seed} is malformed or is this node
     * @throws IOException when the seed cannot be reached or refuses
     */
    public void join(String seed) throws IOException {
        node.join(seed.lastIndexOf(':') > seed.indexOf('@') ? NodeAddress.parse(seed)
            : new NodeAddress(seed, NodeAddress.hostOf(seed), ownPort()));
    }

    private int ownPort() {
        return node.members().stream().filter(m -> m.name().equals(node.name())).findFirst()
            .orElseThrow().port();
    }

    /**
     * Removes {@code nodeName} from the cluster.
     *
     * @throws IllegalArgumentException for this node or a node that is not a member
     * @throws IOException when no majority commits the change
     */
    public void forget(String nodeName) throws IOException {
        node.forget(nodeName);
    }

    @Override
    public void close() throws IOException {
        offers.shutdownNow();
        try {
            node.close(); // first: its apply threads call into the queues
        } finally {
            queues.close();
        }
    }
}
