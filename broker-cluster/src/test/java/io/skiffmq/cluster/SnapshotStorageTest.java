package io.skiffmq.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.apache.ratis.server.RaftServerConfigKeys;
import org.apache.ratis.server.storage.RaftStorage;
import org.apache.ratis.server.storage.RaftStorageDirectory;
import org.apache.ratis.server.storage.RaftStorageMetadataFile;
import org.apache.ratis.statemachine.SnapshotRetentionPolicy;
import org.apache.ratis.statemachine.impl.SimpleStateMachineStorage;
import org.apache.ratis.statemachine.impl.SingleFileSnapshotInfo;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SnapshotStorageTest {
    private static final SnapshotRetentionPolicy KEEP_TWO = new SnapshotRetentionPolicy() {
        @Override
        public int getNumSnapshotsRetained() {
            return 2;
        }
    };

    @TempDir
    Path root;
    private Path dir;
    private final SnapshotStorage storage = new SnapshotStorage();

    @BeforeEach
    void init() throws IOException {
        dir = root.resolve(RaftStorageDirectory.STATE_MACHINE_DIR_NAME);
        Files.createDirectories(dir);
        storage.init(raftStorage(root.toFile()));
    }

    @Test
    void aDirectoryWithoutASnapshotIsListedOnceUntilOneIsRecordedOrTheMachinePauses() throws IOException {
        assertThat(storage.getLatestSnapshot()).isNull();
        write(1, 10);
        assertThat(storage.getLatestSnapshot()).as("not listed again").isNull();

        storage.paused(); // the leader's snapshot is being installed: Ratis reads it before the reload
        assertThat(storage.getLatestSnapshot().getIndex()).isEqualTo(10);
        assertThat(storage.reload().getIndex()).isEqualTo(10);
    }

    @Test
    void aReloadListsTheDirectoryAgain() throws IOException {
        assertThat(storage.getLatestSnapshot()).isNull();
        write(1, 10);
        assertThat(storage.reload().getIndex()).isEqualTo(10);
        assertThat(storage.getLatestSnapshot().getIndex()).isEqualTo(10);
    }

    @Test
    void oldSnapshotsAreCleanedUpOnlyAfterANewOneWasRecorded() throws IOException {
        storage.cleanupOldSnapshots(KEEP_TWO); // the first, at start
        write(1, 10);
        write(1, 20);
        write(1, 30);
        storage.cleanupOldSnapshots(KEEP_TWO);
        assertThat(snapshots()).as("no snapshot recorded since the last cleanup").hasSize(3);

        storage.updateLatestSnapshot(info(1, 30));
        storage.cleanupOldSnapshots(KEEP_TWO);
        assertThat(snapshots()).containsExactlyInAnyOrder("snapshot.1_20", "snapshot.1_30");
    }

    private java.util.List<String> snapshots() throws IOException {
        try (var files = Files.list(dir)) {
            return files.map(f -> f.getFileName().toString()).filter(n -> n.startsWith("snapshot.")).toList();
        }
    }

    private void write(long term, long index) throws IOException {
        Files.writeString(dir.resolve(SimpleStateMachineStorage.getSnapshotFileName(term, index)), "state");
    }

    private SingleFileSnapshotInfo info(long term, long index) {
        var file = new org.apache.ratis.server.storage.FileInfo(
            dir.resolve(SimpleStateMachineStorage.getSnapshotFileName(term, index)), null);
        return new SingleFileSnapshotInfo(file, term, index);
    }

    static RaftStorage raftStorage(File root) {
        RaftStorageDirectory directory = new RaftStorageDirectory() {
            @Override
            public File getRoot() {
                return root;
            }

            @Override
            public boolean isHealthy() {
                return true;
            }
        };
        return new RaftStorage() {
            @Override
            public void initialize() {
            }

            @Override
            public RaftStorageDirectory getStorageDir() {
                return directory;
            }

            @Override
            public RaftStorageMetadataFile getMetadataFile() {
                throw new UnsupportedOperationException();
            }

            @Override
            public RaftServerConfigKeys.Log.CorruptionPolicy getLogCorruptionPolicy() {
                return RaftServerConfigKeys.Log.CorruptionPolicy.EXCEPTION;
            }

            @Override
            public void close() {
            }
        };
    }
}
