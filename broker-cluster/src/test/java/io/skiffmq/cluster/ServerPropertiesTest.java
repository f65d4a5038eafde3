package io.skiffmq.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A node whose queue groups were kept beside its metadata group, in one Ratis server, before they had one of their
 * own: they move to the queue server's directory when it starts; the metadata group and anything else stay.
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
}
