package io.skiffmq.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Random;
import org.apache.ratis.server.protocol.TermIndex;
import org.apache.ratis.server.storage.RaftStorageDirectory;
import org.apache.ratis.statemachine.impl.SimpleStateMachineStorage;
import org.apache.ratis.statemachine.impl.SingleFileSnapshotInfo;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A snapshot file reads back as written, through the buffers under its data streams: fields a byte at a time and
 * arrays across the buffers' edges, arrays larger than a buffer, and its digest checked; a file changed after it was
 * written is refused.
 */
class SnapshotFilesTest {
    private static final int MAGIC = 0x54455354;

    @TempDir
    Path root;

    @Test
    void whatIsWrittenReadsBackAndAChangedFileIsRefused() throws IOException {
        Files.createDirectories(root.resolve(RaftStorageDirectory.STATE_MACHINE_DIR_NAME));
        SimpleStateMachineStorage storage = new SimpleStateMachineStorage();
        storage.init(SnapshotStorageTest.raftStorage(root.toFile()));
        byte[] large = new byte[3 << 20];
        new Random(30).nextBytes(large);
        int entries = 200_000;
        SingleFileSnapshotInfo info = SnapshotFiles.write(storage, TermIndex.valueOf(1, 7), MAGIC, 1, out -> {
            out.writeInt(entries);
            for (int i = 0; i < entries; i++) {
                out.writeLong(i);
                out.writeByte(i);
                out.writeInt(i % 50);
                out.write(large, i % 1000, i % 50);
            }
            out.writeInt(large.length);
            out.write(large);
            out.writeUTF("end");
        });

        SnapshotFiles.read(info, MAGIC, 1, in -> {
            assertThat(in.readInt()).isEqualTo(entries);
            for (int i = 0; i < entries; i++) {
                assertThat(in.readLong()).isEqualTo(i);
                assertThat(in.readByte()).isEqualTo((byte) i);
                byte[] bytes = new byte[in.readInt()];
                in.readFully(bytes);
                for (int b = 0; b < bytes.length; b++) {
                    if (bytes[b] != large[i % 1000 + b]) {
                        throw new AssertionError("entry " + i + " differs at byte " + b);
                    }
                }
            }
            byte[] read = new byte[in.readInt()];
            in.readFully(read);
            assertThat(read).isEqualTo(large);
            assertThat(in.readUTF()).isEqualTo("end");
        });
        assertThatThrownBy(() -> SnapshotFiles.read(info, MAGIC, 2, in -> { }))
            .isInstanceOf(IOException.class).hasMessageContaining("version");

        try (RandomAccessFile file = new RandomAccessFile(info.getFile().getPath().toFile(), "rw")) {
            file.seek(file.length() / 2);
            int b = file.read();
            file.seek(file.length() / 2);
            file.write(b ^ 1);
        }
        assertThatThrownBy(() -> SnapshotFiles.read(info, MAGIC, 1, in -> in.readInt()))
            .isInstanceOf(IOException.class).hasMessageContaining("digest");
    }
}
