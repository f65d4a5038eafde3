package io.skiffmq.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.retry.RetryPolicy;
import org.apache.ratis.server.RaftServerConfigKeys;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A node whose queue groups were kept beside its metadata group, in one Ratis server, before they had one of their
 * own: they move to the queue server's directory when it starts; the metadata group and anything else stay. And a
 * leader waits at most 100 ms after a failed try to reach a member (Ratis' default: 5 s after 30 failures), beside its
 * appender's own probe of a silent member ({@code SnapshotFallbackRpc}).
 */
class ServerPropertiesTest {
    @Test
    void queueGroupsKeptBesideTheMetadataGroupMoveToTheQueueServersDirectory(@TempDir Path dir) throws Exception {
        Path metadataDir = dir.resolve("cluster");
        Path queueDir = dir.resolve("cluster-queues");
        String metadata = ClusterNode.METADATA_GROUP.getUuid().toString();
        String queues = QueueGroups.name(QueueGroups.id(java.util.List.of("a@h", "b@h", "c@h")));
        Files.createDirectories(metadataDir.resolve(metadata).resolve("current"));
        Path snapshots = Files.createDirectories(metadataDir.resolve(queues).resolve("sm"));
        Files.writeString(snapshots.resolve("snapshot.1_2"), "x");
        Files.createDirectories(metadataDir.resolve("not-a-group"));
        Files.createDirectories(queueDir);

        ServerProperties.moveQueueGroups(metadataDir, queueDir);

        assertThat(metadataDir.resolve(metadata)).isDirectory();
        assertThat(metadataDir.resolve("not-a-group")).isDirectory();
        assertThat(metadataDir.resolve(queues)).doesNotExist();
        assertThat(queueDir.resolve(queues).resolve("sm").resolve("snapshot.1_2")).hasContent("x");

        ServerProperties.moveQueueGroups(metadataDir, queueDir); // the next start finds nothing to move
        assertThat(queueDir.resolve(queues).resolve("sm").resolve("snapshot.1_2")).hasContent("x");
    }

    @Test
    void aLeaderWaitsAtMostATenthOfASecondAfterAFailedTry(@TempDir Path dir) {
        NodeAddress self = new NodeAddress("a@h", "127.0.0.1", 7000);
        ClusterSettings settings = ClusterSettings.of(self, List.of(self), "127.0.0.1", dir,
            ClusterSecret.of("the cluster's secret"));
        for (RaftProperties properties : List.of(ServerProperties.metadata(settings),
                ServerProperties.queues(settings))) {
            RetryPolicy policy = RetryPolicy.parse(RaftServerConfigKeys.Log.Appender.retryPolicy(properties));
            for (int failures : new int[] {1, 15, 25, 100, 10_000, 2_000_000}) {
                RetryPolicy.Action action = policy.handleAttemptFailure(() -> failures);
                assertThat(action.shouldRetry()).as("after %d failures", failures).isTrue();
                assertThat(action.getSleepTime().toLong(TimeUnit.MILLISECONDS)).as("after %d failures", failures)
                    .isLessThanOrEqualTo(150); // 100 ms, give or take half (Ratis draws it)
            }
        }
    }
}
