package io.skiffmq.cluster;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.apache.ratis.RaftConfigKeys;
import org.apache.ratis.conf.Parameters;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.grpc.GrpcConfigKeys;
import org.apache.ratis.grpc.GrpcTlsConfig;
import org.apache.ratis.server.RaftServerConfigKeys;
import org.apache.ratis.util.SizeInBytes;
import org.apache.ratis.util.TimeDuration;

/**
 * How this node's two Ratis servers are set up ({@link ClusterNode}): the metadata group's on the cluster port and
 * the queue groups' on the queue port, alike but for the commit-index entries and where their groups are kept.
 */
final class ServerProperties {
    private static final System.Logger LOG = System.getLogger(ServerProperties.class.getName());
    /** Ratis' appender retry policy: 10 tries at once, then 100 ms apart. */
    static final String APPENDER_RETRY_POLICY = "1ms,10, 100ms,2147483647";

    private ServerProperties() {
    }

    /**
     * Moves the queue groups a node kept beside its metadata group, in one server, before they had one of their own:
     * each group's directory is named for its id.
     */
    static void moveQueueGroups(Path from, Path to) throws IOException {
        try (var dirs = Files.newDirectoryStream(from, Files::isDirectory)) {
            for (Path dir : dirs) {
                String name = dir.getFileName().toString();
                if (isGroupId(name) && !name.equals(ClusterNode.METADATA_GROUP.getUuid().toString())) {
                    Files.move(dir, to.resolve(name), java.nio.file.StandardCopyOption.ATOMIC_MOVE);
                    LOG.log(System.Logger.Level.INFO, "queue group {0} moved from {1} to {2}", name, from, to);
                }
            }
        }
    }

    private static boolean isGroupId(String name) {
        try {
            return UUID.fromString(name).toString().equals(name);
        } catch (IllegalArgumentException e) {
            return false;
        }
    }

    /**
     * The metadata server's: on the cluster port, appending the commit index after each commit, which tells its
     * followers of the commit at once and lets a restarted node apply what was committed before it stopped.
     */
    static RaftProperties metadata(ClusterSettings settings) {
        return properties(settings, settings.self().port(), settings.dataDir(), true);
    }

    /**
     * The queue server's: on the queue port, without that entry, which is synced and replicated like any other and
     * which a lone publish waited behind ({@link QueueGroupMachine#NOTICE} stands in for it where it matters).
     */
    static RaftProperties queues(ClusterSettings settings) {
        return properties(settings, settings.self().port() + ClusterSettings.QUEUE_PORT_OFFSET,
            settings.queueDataDir(), false);
    }

    private static RaftProperties properties(ClusterSettings settings, int port, Path dir, boolean logCommits) {
        RaftProperties p = new RaftProperties();
        RaftConfigKeys.Rpc.setType(p, new SnapshotFallbackRpc());
        GrpcConfigKeys.Server.setHost(p, settings.bindHost());
        GrpcConfigKeys.Server.setPort(p, port);
        RaftServerConfigKeys.setStorageDir(p, List.of(dir.toFile()));
        RaftServerConfigKeys.Log.setLogMetadataEnabled(p, logCommits);
        long election = settings.electionTimeout().toMillis();
        RaftServerConfigKeys.Rpc.setTimeoutMin(p, TimeDuration.valueOf(election, TimeUnit.MILLISECONDS));
        RaftServerConfigKeys.Rpc.setTimeoutMax(p, TimeDuration.valueOf(2 * election, TimeUnit.MILLISECONDS));
        // a leader cut off from its majority steps down after this, so that appends to it fail rather than wait
        RaftServerConfigKeys.LeaderElection.setLeaderStepDownWaitTime(p,
            TimeDuration.valueOf(4 * election, TimeUnit.MILLISECONDS));
        RaftServerConfigKeys.Notification.setNoLeaderTimeout(p,
            TimeDuration.valueOf(settings.appendTimeout().toMillis(), TimeUnit.MILLISECONDS));
        // a read-only request (a read barrier, caughtUp) waits for the leader's commit index, confirmed by a
        // majority's heartbeat, to be applied here; a follower serves it without forwarding it (Raft's ReadIndex)
        RaftServerConfigKeys.Read.setOption(p, RaftServerConfigKeys.Read.Option.LINEARIZABLE);
        RaftServerConfigKeys.Read.setTimeout(p, TimeDuration.valueOf(settings.appendTimeout().toMillis(),
            TimeUnit.MILLISECONDS));
        RaftServerConfigKeys.Snapshot.setAutoTriggerEnabled(p, true);
        // one threshold for every group of the server: low enough that a queue group, whose entries may be large
        // batches, is asked often; each group decides for itself (the metadata group by its entries, a queue group
        // by its log's bytes), and answers at once when it takes none
        RaftServerConfigKeys.Snapshot.setAutoTriggerThreshold(p, Math.min(settings.snapshotEvery(),
            QueueGroupMachine.ASKED_EVERY));
        RaftServerConfigKeys.Snapshot.setRetentionFileNum(p, 2);
        RaftServerConfigKeys.Log.setSegmentSizeMax(p, SizeInBytes.valueOf(settings.segmentBytes()));
        RaftServerConfigKeys.Log.setPurgeUptoSnapshotIndex(p, true);
        RaftServerConfigKeys.Log.setPurgeGap(p, 1);
        // how long a leader waits after a failed try to reach a member: Ratis' default goes to 5 s after 30 failures,
        // so a node started again after half a minute down waited up to 5 s for each of its groups' leaders (its
        // replicas not caught up, its consumers without a leader known); 100 ms here, beside the appender's probe of
        // a silent member every 100 ms (SnapshotFallbackRpc): a try refused makes the client connect again at once,
        // and the next one, about 200 ms later, gets through
        RaftServerConfigKeys.Log.Appender.setRetryPolicy(p, APPENDER_RETRY_POLICY);
        return p;
    }

    /** Both servers' and their clients' TLS, keyed by the cluster secret. */
    static Parameters tls(GrpcTlsConfig tls) {
        Parameters parameters = new Parameters();
        GrpcConfigKeys.TLS.setConf(parameters, tls);
        GrpcConfigKeys.Server.setTlsConf(parameters, tls);
        GrpcConfigKeys.Client.setTlsConf(parameters, tls);
        GrpcConfigKeys.Admin.setTlsConf(parameters, tls);
        return parameters;
    }
}
