package io.skiffmq.cluster;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * How one node takes part in the cluster. The server builds it from its {@code node}, {@code cluster-*} settings
 * (docs/cluster.md); tests build it directly. Immutable.
 *
 * @param self this node
 * @param seeds the nodes that form the cluster on its first start, this one among them (added when missing); after
 *        that, membership is what the log holds
 * @param bindHost the address the cluster port listens on
 * @param dataDir where this node keeps the metadata log and its snapshots (the queue groups' beside it:
 *        {@link #queueDataDir})
 * @param secret the cluster's shared secret
 * @param appendTimeout how long an append may wait for a majority before it fails
 * @param electionTimeout the shortest time without a leader's heartbeat before a follower stands for election (the
 *        longest is twice that)
 * @param snapshotEvery entries applied between two snapshots; the log is cut short at each
 * @param segmentBytes bytes per log segment file; only whole segments are removed after a snapshot
 * @param queueSnapshotBytes bytes of a queue group's log between two of its snapshots (entries are batches of any
 *        size: bytes, not entries, say what a restarted member replays)
 */
public record ClusterSettings(NodeAddress self, List<NodeAddress> seeds, String bindHost, Path dataDir,
        ClusterSecret secret, Duration appendTimeout, Duration electionTimeout, long snapshotEvery,
        long segmentBytes, long queueSnapshotBytes) {
    /** Long enough to ride out an election and a slow fsync, short enough for a client waiting on a declare. */
    public static final Duration DEFAULT_APPEND_TIMEOUT = Duration.ofSeconds(10);
    /**
     * Ratis' own 150 ms flaps on a loaded 2-core machine, whose GC and fsync pauses reach that; a second still
     * elects a new leader within a few seconds of a kill. The server's {@code cluster-election-timeout}.
     */
    public static final Duration DEFAULT_ELECTION_TIMEOUT = Duration.ofMillis(1000);
    /** Ratis' own auto-snapshot threshold. */
    public static final long DEFAULT_SNAPSHOT_EVERY = 400_000;
    /** Ratis' default (32 MiB) is too big to ever be cut with small metadata entries; 8 MiB is cut sooner. */
    public static final long DEFAULT_SEGMENT_BYTES = 8L << 20;
    /** 64 MiB of log replayed after a snapshot: under a second's work for a restarted member. */
    public static final long DEFAULT_QUEUE_SNAPSHOT_BYTES = 64L << 20;
    /**
     * The queue groups' Raft server listens on the cluster port plus this (the port after the cluster port is the
     * node port, for messages between nodes): the same offset on every node, so each knows the others' from their
     * cluster port.
     */
    public static final int QUEUE_PORT_OFFSET = 2;

    public ClusterSettings {
        if (appendTimeout.isNegative() || appendTimeout.isZero()) {
            throw new IllegalArgumentException("the append timeout must be > 0");
        }
        if (electionTimeout.toMillis() < 50) {
            throw new IllegalArgumentException("the election timeout must be >= 50 ms");
        }
        if (snapshotEvery < 1 || segmentBytes < 1024 || queueSnapshotBytes < 1) {
            throw new IllegalArgumentException("snapshots every >= 1 entries or byte, segments >= 1024 bytes");
        }
        List<NodeAddress> all = new ArrayList<>(seeds);
        if (all.stream().noneMatch(n -> n.name().equals(self.name()))) {
            all.add(self);
        }
        seeds = List.copyOf(all);
    }

    /** Where this node keeps its queue groups' logs and snapshots: beside {@link #dataDir}. */
    public Path queueDataDir() {
        return dataDir.resolveSibling(dataDir.getFileName() + "-queues");
    }

    /** The usual settings for {@code self} among {@code seeds}. */
    public static ClusterSettings of(NodeAddress self, List<NodeAddress> seeds, String bindHost, Path dataDir,
            ClusterSecret secret) {
        return new ClusterSettings(self, seeds, bindHost, dataDir, secret, DEFAULT_APPEND_TIMEOUT,
            DEFAULT_ELECTION_TIMEOUT, DEFAULT_SNAPSHOT_EVERY, DEFAULT_SEGMENT_BYTES, DEFAULT_QUEUE_SNAPSHOT_BYTES);
    }

    public ClusterSettings withAppendTimeout(Duration timeout) {
        return new ClusterSettings(self, seeds, bindHost, dataDir, secret, timeout, electionTimeout, snapshotEvery,
            segmentBytes, queueSnapshotBytes);
    }

    public ClusterSettings withElectionTimeout(Duration timeout) {
        return new ClusterSettings(self, seeds, bindHost, dataDir, secret, appendTimeout, timeout, snapshotEvery,
            segmentBytes, queueSnapshotBytes);
    }

    public ClusterSettings withSnapshots(long every, long segment) {
        return new ClusterSettings(self, seeds, bindHost, dataDir, secret, appendTimeout, electionTimeout, every,
            segment, queueSnapshotBytes);
    }

    public ClusterSettings withQueueSnapshotBytes(long bytes) {
        return new ClusterSettings(self, seeds, bindHost, dataDir, secret, appendTimeout, electionTimeout,
            snapshotEvery, segmentBytes, bytes);
    }
}
