package io.skiffmq.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.Arrays;
import java.util.Random;
import org.apache.ratis.io.MD5Hash;
import org.apache.ratis.server.protocol.TermIndex;
import org.apache.ratis.server.storage.FileInfo;
import org.apache.ratis.server.storage.RaftStorageDirectory;
import org.apache.ratis.statemachine.impl.SimpleStateMachineStorage;
import org.apache.ratis.statemachine.impl.SingleFileSnapshotInfo;
import org.apache.ratis.util.MD5FileUtil;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A snapshot file reads back as written, through the buffers under its data streams: fields a byte at a time and
 * arrays across the buffers' edges, arrays larger than a buffer, and its CRC32C checked; a file changed after it was
 * written is refused, in its body or its checksum. Its {@code .md5} covers the whole file, as Ratis sends it and as a
 * reader from before the CRC32C read it; and a file from before the CRC32C reads back by its MD5, and is refused when
 * changed.
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
            int length = in.readInt();
            assertThat(in.skipBytes(10)).as("skipped through the buffer").isEqualTo(10);
            byte[] read = new byte[length - 10];
            in.readFully(read);
            assertThat(read).isEqualTo(Arrays.copyOfRange(large, 10, length));
            assertThat(in.readUTF()).isEqualTo("end");
        });
        assertThatThrownBy(() -> SnapshotFiles.read(info, MAGIC, 2, in -> { }))
            .isInstanceOf(IOException.class).hasMessageContaining("version");

        Path path = info.getFile().getPath();
        MessageDigest md5 = MD5FileUtil.newMD5();
        md5.update(Files.readAllBytes(path));
        assertThat(MD5Hash.newInstance(md5.digest())).as("the .md5 of the whole file, trailer included")
            .isEqualTo(info.getFile().getFileDigest()).isEqualTo(MD5FileUtil.readStoredMd5ForFile(path.toFile()));

        flip(path, Files.size(path) / 2);
        assertThatThrownBy(() -> SnapshotFiles.read(info, MAGIC, 1, in -> in.readInt()))
            .isInstanceOf(IOException.class).hasMessageContaining("CRC32C");
        flip(path, Files.size(path) / 2);
        SnapshotFiles.read(info, MAGIC, 1, in -> in.readInt());
        flip(path, Files.size(path) - 1);
        assertThatThrownBy(() -> SnapshotFiles.read(info, MAGIC, 1, in -> in.readInt()))
            .as("its checksum changed").isInstanceOf(IOException.class).hasMessageContaining("CRC32C");
    }

    @Test
    void aFileFromBeforeTheChecksumReadsBackByItsDigest() throws IOException {
        Path file = root.resolve("snapshot.1_9");
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (DataOutputStream out = new DataOutputStream(bytes)) {
            out.writeInt(MAGIC);
            out.writeInt(1);
            for (int i = 0; i < 100_000; i++) {
                out.writeLong(i);
            }
        }
        Files.write(file, bytes.toByteArray());
        MessageDigest md5 = MD5FileUtil.newMD5();
        MD5Hash digest = MD5Hash.newInstance(md5.digest(bytes.toByteArray()));
        SingleFileSnapshotInfo info = new SingleFileSnapshotInfo(new FileInfo(file, digest), TermIndex.valueOf(1, 9));

        SnapshotFiles.read(info, MAGIC, 1, in -> {
            for (int i = 0; i < 100_000; i++) {
                assertThat(in.readLong()).isEqualTo(i);
            }
        });
        flip(file, 4_000);
        assertThatThrownBy(() -> SnapshotFiles.read(info, MAGIC, 1, in -> in.readLong()))
            .isInstanceOf(IOException.class).hasMessageContaining("MD5");
    }

    private static void flip(Path path, long at) throws IOException {
        try (RandomAccessFile file = new RandomAccessFile(path.toFile(), "rw")) {
            file.seek(at);
            int b = file.read();
            file.seek(at);
            file.write(b ^ 1);
        }
    }
}
