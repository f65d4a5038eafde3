package io.skiffmq.server.config;

import java.nio.file.Path;
import java.util.List;

/**
 * The settings that make a node part of a cluster (docs/cluster.md). Without {@code cluster-port} the node is
 * alone, exactly as before clustering existed: nothing of the cluster starts. Listed in {@link #SETTINGS} (joined
 * into {@code Settings.ALL}). Immutable.
 *
 * @param nodes the {@code name@host:port} entries of the cluster's nodes (RabbitMQ's {@code classic_config}), as
 *        written; {@code io.skiffmq.cluster.NodeAddress} reads them
 * @param port the cluster port (Raft and node-to-node traffic), or {@link Setting#NO_PORT}: not clustered
 * @param secretFile the shared secret's file, or null for {@code .cluster-secret} in the data directory
 * @param appendTimeoutMillis how long a metadata change waits for a majority before it fails
 * @param maxInFlight per queue homed on another node, the messages a node sends there and has not had settled
 *        yet past which it holds its publishers back (docs/cluster.md, "Messages between nodes")
 * @param queueSnapshotBytes the bytes a quorum queue group's log takes between two of its snapshots, at which it is
 *        cut: about what a restarted member replays after loading the snapshot (docs/quorum-queues.md, "Snapshots")
 * @param electionTimeoutMillis the shortest time a follower goes without its leader's heartbeat before it stands for
 *        election, in every Raft group of the node (the longest is twice that; docs/cluster.md, "Settings")
 */
public record ClusterConfig(String nodes, int port, Path secretFile, long appendTimeoutMillis, int maxInFlight,
        long queueSnapshotBytes, long electionTimeoutMillis) {
    /** Ten seconds: an election and a slow fsync fit, a client waiting on a declare is not kept long. */
    public static final long DEFAULT_APPEND_TIMEOUT_MILLIS = 10_000;
    /** Some 2,000 messages: several round trips of the home node's link credit, a few MB of small messages. */
    public static final int DEFAULT_MAX_IN_FLIGHT = 2000;
    /**
     * 64 MiB: a restarted member replays at most about this much log after its snapshot, under a second's work
     * (docs/quorum-queues.md, "Snapshots").
     */
    public static final long DEFAULT_QUEUE_SNAPSHOT_BYTES = 64L << 20;
    /** One second: Ratis' own 150 ms flaps on a loaded 2-core machine, whose GC and fsync pauses reach that. */
    public static final long DEFAULT_ELECTION_TIMEOUT_MILLIS = 1000;
    /** Below this a GC pause or a slow fsync alone passes for a dead leader, and elections never settle. */
    public static final long MIN_ELECTION_TIMEOUT_MILLIS = 100;

    public ClusterConfig {
        Setting.checkPort("cluster-port", port);
        if (port == 0) {
            throw new IllegalArgumentException("cluster-port must be a fixed port: the other nodes dial it");
        }
        if (appendTimeoutMillis <= 0) {
            throw new IllegalArgumentException("cluster-append-timeout must be > 0");
        }
        if (maxInFlight <= 0) {
            throw new IllegalArgumentException("cluster-max-in-flight must be > 0");
        }
        if (queueSnapshotBytes <= 0) {
            throw new IllegalArgumentException("cluster-queue-snapshot-bytes must be > 0");
        }
        if (electionTimeoutMillis < MIN_ELECTION_TIMEOUT_MILLIS) {
            throw new IllegalArgumentException("cluster-election-timeout must be >= " + MIN_ELECTION_TIMEOUT_MILLIS
                + " ms");
        }
    }

    public static ClusterConfig defaults() {
        return new ClusterConfig("", Setting.NO_PORT, null, DEFAULT_APPEND_TIMEOUT_MILLIS, DEFAULT_MAX_IN_FLIGHT,
            DEFAULT_QUEUE_SNAPSHOT_BYTES, DEFAULT_ELECTION_TIMEOUT_MILLIS);
    }

    /** True when this node is to be part of a cluster. */
    public boolean enabled() {
        return port != Setting.NO_PORT;
    }

    /** The secret's file for a broker on {@code dataDir}. */
    public Path secretFile(Path dataDir) {
        return secretFile != null ? secretFile : dataDir.resolve(".cluster-secret");
    }

    /** These settings' names, defaults and meanings (joined into {@code Settings.ALL}). */
    public static final List<Setting> SETTINGS = List.of(
        Setting.of("cluster-port", "int|none", "none", "the port for Raft and node-to-node traffic (RabbitMQ uses"
            + " 25672; the port after it is the node port, for messages between nodes, and the one after that the"
            + " queue port, for the quorum queues' Raft traffic); set, the node is part of a cluster"
            + " (docs/cluster.md); `none`: a single node, nothing of the cluster starts"),
        Setting.of("cluster-nodes", "list", "", "the cluster's nodes as `name@host:port` entries separated by"
            + " commas, this node among them (RabbitMQ's classic_config peer discovery); they form the cluster on"
            + " the first start"),
        Setting.described("cluster-secret-file", "path", "data-dir/.cluster-secret", "the secret every node of the"
            + " cluster shares (the Erlang cookie); generated, readable by its owner only, when the file is missing"),
        Setting.of("cluster-append-timeout", "ms", "10000", "how long a metadata change waits for a majority of"
            + " the cluster before it fails"),
        Setting.of("cluster-max-in-flight", "int", "2000", "per queue homed on another node, the messages this node"
            + " has sent there and not had settled yet past which its publishers are held back"),
        Setting.of("cluster-queue-snapshot-bytes", "bytes", "67108864", "the bytes of a quorum queue group's log"
            + " between two of its snapshots, at which the log is cut: about what a restarted member replays after"
            + " loading its snapshot"),
        Setting.of("cluster-election-timeout", "ms", "1000", "the shortest time a follower goes without its"
            + " leader's heartbeat before it stands for election (the longest is twice that; at least 100): how"
            + " soon a leader killed or cut off is replaced; every node of a cluster should have the same"));

    /** True when {@code name} is one of these settings. */
    public static boolean has(String name) {
        return SETTINGS.stream().anyMatch(s -> s.name().equals(name));
    }

    /**
     * These settings with one changed.
     *
     * @throws NumberFormatException for a value that is not a number
     */
    public ClusterConfig with(String name, String value) {
        return switch (name) {
            case "cluster-port" -> new ClusterConfig(nodes, Setting.port(name, value), secretFile,
                appendTimeoutMillis, maxInFlight, queueSnapshotBytes, electionTimeoutMillis);
            case "cluster-nodes" -> new ClusterConfig(value, port, secretFile, appendTimeoutMillis, maxInFlight,
                queueSnapshotBytes, electionTimeoutMillis);
            case "cluster-secret-file" -> new ClusterConfig(nodes, port, Path.of(value), appendTimeoutMillis,
                maxInFlight, queueSnapshotBytes, electionTimeoutMillis);
            case "cluster-append-timeout" -> new ClusterConfig(nodes, port, secretFile, Long.parseLong(value),
                maxInFlight, queueSnapshotBytes, electionTimeoutMillis);
            case "cluster-max-in-flight" -> new ClusterConfig(nodes, port, secretFile, appendTimeoutMillis,
                Integer.parseInt(value), queueSnapshotBytes, electionTimeoutMillis);
            case "cluster-queue-snapshot-bytes" -> new ClusterConfig(nodes, port, secretFile, appendTimeoutMillis,
                maxInFlight, ByteSize.parse(name, value), electionTimeoutMillis);
            case "cluster-election-timeout" -> new ClusterConfig(nodes, port, secretFile, appendTimeoutMillis,
                maxInFlight, queueSnapshotBytes, Long.parseLong(value));
            default -> throw new IllegalArgumentException("unknown setting " + name);
        };
    }
}
