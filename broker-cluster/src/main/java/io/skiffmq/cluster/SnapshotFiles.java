package io.skiffmq.cluster;

import java.io.DataOutputStream;
import java.io.File;
import java.io.FilterOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.security.DigestInputStream;
import java.security.DigestOutputStream;
import java.security.MessageDigest;
import java.util.zip.CRC32C;
import java.util.zip.CheckedInputStream;
import java.util.zip.CheckedOutputStream;
import org.apache.ratis.io.MD5Hash;
import org.apache.ratis.server.protocol.TermIndex;
import org.apache.ratis.server.storage.FileInfo;
import org.apache.ratis.statemachine.impl.SimpleStateMachineStorage;
import org.apache.ratis.statemachine.impl.SingleFileSnapshotInfo;
import org.apache.ratis.util.LifeCycle;
import org.apache.ratis.util.MD5FileUtil;

/**
 * A state machine's snapshot as one file in Ratis' {@link SimpleStateMachineStorage} layout ({@code snapshot.term_index}
 * and its {@code .md5}), which the leader sends as it is to a follower behind its log. Written whole to a
 * {@code .partial} file, fsynced (the log before it is purged once the file is in place), digested as written (an
 * MD5 in its {@code .md5} file, for Ratis, and a CRC32C at its end, for us), and moved into place; read with its
 * CRC32C checked as read (an older file's MD5). Stateless.
 */
final class SnapshotFiles {
    private static final int BUFFER = 1 << 20;
    /** A file's last 16 bytes: this mark, then the CRC32C of every byte before them. */
    private static final long TRAILER = 0x534b_4352_4333_3243L; // "SKCRC32C"
    private static final int TRAILER_BYTES = 16;

    /** What goes into a snapshot's file, after the magic and version. */
    interface Body {
        void write(DataOutputStream out) throws IOException;
    }

    /** What reads a snapshot's file, after the magic and version. */
    interface Reader {
        void read(SnapshotInput in) throws IOException;
    }

    private SnapshotFiles() {
    }

    /** Writes the snapshot of the state as of {@code last}; the caller makes it the storage's latest. */
    static SingleFileSnapshotInfo write(SimpleStateMachineStorage storage, TermIndex last, int magic, int version,
            Body body) throws IOException {
        File file = storage.getSnapshotFile(last.getTerm(), last.getIndex());
        Path partial = Path.of(file.getPath() + ".partial");
        MessageDigest md5 = MD5FileUtil.newMD5();
        try (FileChannel channel = FileChannel.open(partial, StandardOpenOption.CREATE,
                StandardOpenOption.TRUNCATE_EXISTING, StandardOpenOption.WRITE)) {
            DigestOutputStream digested = new DigestOutputStream(Channels.newOutputStream(channel), md5);
            CRC32C crc = new CRC32C();
            DataOutputStream out = new DataOutputStream(new WriteBuffer(new CheckedOutputStream(digested, crc)));
            out.writeInt(magic);
            out.writeInt(version);
            body.write(out);
            out.flush();
            digested.write(ByteBuffer.allocate(TRAILER_BYTES).putLong(TRAILER).putLong(crc.getValue()).array());
            digested.flush();
            channel.force(true);
        } catch (IOException | RuntimeException e) {
            Files.deleteIfExists(partial);
            throw e;
        }
        Files.move(partial, file.toPath(), StandardCopyOption.ATOMIC_MOVE);
        MD5Hash digest = MD5Hash.newInstance(md5.digest());
        MD5FileUtil.saveMD5File(file, digest);
        return new SingleFileSnapshotInfo(new FileInfo(file.toPath(), digest), last);
    }

    /**
     * Reads {@code snapshot} with {@code reader}, then checks it: by the CRC32C at its end, or, in a file written
     * before there was one, by its {@code .md5} file (a snapshot installed from the leader comes without one: nothing
     * to check then). The MD5 digest takes most of a large file's read; the CRC32C a tenth of that.
     *
     * @throws IOException when it is not such a snapshot, or does not match its checksum or digest
     */
    static void read(SingleFileSnapshotInfo snapshot, int magic, int version, Reader reader) throws IOException {
        Path path = snapshot.getFile().getPath();
        long length = Files.size(path);
        ByteBuffer tail = length >= 8 + TRAILER_BYTES ? tail(path, length) : ByteBuffer.allocate(0);
        boolean trailed = tail.remaining() == TRAILER_BYTES && tail.getLong() == TRAILER;
        long crcAtEnd = trailed ? tail.getLong() : 0;
        CRC32C crc = new CRC32C();
        MessageDigest md5 = MD5FileUtil.newMD5();
        try (InputStream raw = Files.newInputStream(path);
                SnapshotInput in = trailed
                    ? new SnapshotInput(new CheckedInputStream(raw, crc), length - TRAILER_BYTES, BUFFER)
                    : new SnapshotInput(new DigestInputStream(raw, md5), Long.MAX_VALUE, BUFFER)) {
            if (in.readInt() != magic || in.readInt() != version) {
                throw new IOException("not a snapshot of this kind and version: " + path);
            }
            reader.read(in);
            in.transferTo(OutputStream.nullOutputStream());
        }
        if (trailed) {
            if (crc.getValue() != crcAtEnd) {
                throw new IOException("snapshot " + path + " does not match its CRC32C");
            }
            return;
        }
        MD5Hash expected = snapshot.getFile().getFileDigest();
        if (expected != null && !expected.equals(MD5Hash.newInstance(md5.digest()))) {
            throw new IOException("snapshot " + path + " does not match its MD5 digest");
        }
    }

    /** The last {@link #TRAILER_BYTES} of the file of {@code length} bytes at {@code path}. */
    private static ByteBuffer tail(Path path, long length) throws IOException {
        ByteBuffer tail = ByteBuffer.allocate(TRAILER_BYTES);
        try (FileChannel channel = FileChannel.open(path, StandardOpenOption.READ)) {
            while (tail.hasRemaining() && channel.read(tail, length - TRAILER_BYTES + tail.position()) >= 0) {
                // until it is full, or the file ends
            }
        }
        return tail.flip();
    }

    /**
     * Pauses a state machine before a snapshot from the leader replaces its state. Ratis pauses it for each chunk
     * of the snapshot: once paused, it stays so until reloaded.
     */
    static void pause(LifeCycle lifeCycle) {
        if (lifeCycle.getCurrentState() != LifeCycle.State.PAUSED) {
            lifeCycle.transition(LifeCycle.State.PAUSING);
            lifeCycle.transition(LifeCycle.State.PAUSED);
        }
    }

    /** Removes what a write cut short left (a crash while writing). */
    static void removePartials(SimpleStateMachineStorage storage) throws IOException {
        File any = storage.getSnapshotFile(0, 0);
        try (var files = Files.list(any.toPath().getParent())) {
            for (Path p : files.filter(p -> p.getFileName().toString().endsWith(".partial")).toList()) {
                Files.deleteIfExists(p);
            }
        }
    }

    /** Keeps a writer from closing the stream under us. */
    static final class NonClosing extends java.io.FilterOutputStream {
        NonClosing(OutputStream out) {
            super(out);
        }

        @Override
        public void write(byte[] b, int off, int len) throws IOException {
            out.write(b, off, len);
        }

        @Override
        public void close() throws IOException {
            flush();
        }
    }

    /**
     * A buffer under the {@link DataOutputStream} a snapshot is written with: {@link java.io.BufferedOutputStream}'s
     * writes are synchronized, a lock per field of millions.
     */
    private static final class WriteBuffer extends FilterOutputStream {
        private final byte[] buffer = new byte[BUFFER];
        private int position;

        WriteBuffer(OutputStream out) {
            super(out);
        }

        @Override
        public void write(int b) throws IOException {
            if (position == BUFFER) {
                drain();
            }
            buffer[position++] = (byte) b;
        }

        @Override
        public void write(byte[] from, int offset, int length) throws IOException {
            if (length >= BUFFER) {
                drain();
                out.write(from, offset, length);
                return;
            }
            if (length > BUFFER - position) {
                drain();
            }
            System.arraycopy(from, offset, buffer, position, length);
            position += length;
        }

        @Override
        public void flush() throws IOException {
            drain();
            out.flush();
        }

        private void drain() throws IOException {
            if (position > 0) {
                out.write(buffer, 0, position);
                position = 0;
            }
        }
    }
}
