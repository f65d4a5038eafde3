package io.skiffmq.store.definitions;

import io.skiffmq.core.definitions.DefinitionChange;
import io.skiffmq.core.definitions.DefinitionCodec;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.zip.CRC32C;

/**
 * The layout shared by a definitions snapshot and a definitions log: a header, then {@link DefinitionChange}s, one
 * framed record each. A snapshot is the changes that build the state from nothing; a log the changes since the
 * snapshot of the same generation.
 *
 * <pre>
 * header (16 bytes):  | "SKDF" | version u16 = 1 | kind u8 (0 snapshot, 1 log) | 0 | generation i64 |
 * record:             | length i32 (of the payload, 1..16 MiB) | CRC-32C i32 (of the payload) | payload ({@link DefinitionCodec}) |
 * </pre>
 *
 * A record cut short by a crash, or whose CRC does not match, ends what is read: in a log that is a torn last write,
 * dropped ({@link Contents#validBytes}); a snapshot is only ever renamed into place whole, so there it is damage.
 * Stateless.
 */
final class ChangeFile {
    static final int MAGIC = 0x534B4446; // "SKDF"
    static final short VERSION = 1;
    static final byte SNAPSHOT = 0;
    static final byte LOG = 1;
    static final int HEADER_BYTES = 16;
    static final int RECORD_HEADER_BYTES = 8;
    /** Far above any change (a queue's arguments are bounded by the frame size); a larger length is garbage. */
    static final int MAX_RECORD_BYTES = 16 << 20;

    private ChangeFile() {
    }

    /**
     * What a file holds: its generation, its changes, and how many of its bytes are whole records (the rest is a torn
     * tail, or damage).
     */
    record Contents(long generation, List<DefinitionChange> changes, long validBytes, long fileBytes) {
        boolean torn() {
            return validBytes < fileBytes;
        }
    }

    static ByteBuffer header(byte kind, long generation) {
        ByteBuffer header = ByteBuffer.allocate(HEADER_BYTES);
        header.putInt(MAGIC).putShort(VERSION).put(kind).put((byte) 0).putLong(generation).flip();
        return header;
    }

    /** Frames the changes as records, in order. */
    static ByteBuffer records(List<? extends DefinitionChange> changes) {
        List<byte[]> payloads = new ArrayList<>(changes.size());
        int size = 0;
        for (DefinitionChange change : changes) {
            byte[] payload = DefinitionCodec.encode(change);
            payloads.add(payload);
            size += RECORD_HEADER_BYTES + payload.length;
        }
        ByteBuffer out = ByteBuffer.allocate(size);
        CRC32C crc = new CRC32C();
        for (byte[] payload : payloads) {
            crc.reset();
            crc.update(payload);
            out.putInt(payload.length).putInt((int) crc.getValue()).put(payload);
        }
        return out.flip();
    }

    /**
     * Reads a file of {@code kind}.
     *
     * @throws IllegalStateException when its header is not ours
     */
    static Contents read(Path file, byte kind) {
        ByteBuffer bytes;
        try {
            bytes = ByteBuffer.wrap(Files.readAllBytes(file));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + file, e);
        }
        if (bytes.remaining() < HEADER_BYTES || bytes.getInt() != MAGIC || bytes.getShort() != VERSION
                || bytes.get() != kind) {
            throw new IllegalStateException(file + " is not a definitions " + (kind == SNAPSHOT ? "snapshot" : "log")
                + " this broker reads");
        }
        bytes.get();
        long generation = bytes.getLong();
        List<DefinitionChange> changes = new ArrayList<>();
        CRC32C crc = new CRC32C();
        while (bytes.remaining() >= RECORD_HEADER_BYTES) {
            int start = bytes.position();
            int length = bytes.getInt();
            int expected = bytes.getInt();
            if (length <= 0 || length > MAX_RECORD_BYTES || length > bytes.remaining()) {
                bytes.position(start);
                break;
            }
            ByteBuffer payload = bytes.slice(bytes.position(), length);
            crc.reset();
            crc.update(payload.duplicate());
            if ((int) crc.getValue() != expected) {
                bytes.position(start);
                break;
            }
            try {
                changes.add(DefinitionCodec.decode(payload));
            } catch (IllegalArgumentException e) {
                // its CRC matched: this is no torn write but a record some other version wrote
                throw new IllegalStateException(file + " holds a change this broker cannot read at byte " + start, e);
            }
            bytes.position(bytes.position() + length);
        }
        return new Contents(generation, changes, bytes.position(), bytes.limit());
    }

    /**
     * Replaces {@code file} with a header and these records, durably: written to a temporary file, synced, renamed
     * over the old one and the directory synced, so a crash leaves the old file or the new one, whole.
     *
     * @return the file's size
     */
    static long replace(Path file, byte kind, long generation, List<? extends DefinitionChange> changes) {
        Path temporary = file.resolveSibling(file.getFileName() + ".tmp");
        try {
            long size;
            try (FileChannel out = FileChannel.open(temporary, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                    StandardOpenOption.TRUNCATE_EXISTING)) {
                writeFully(out, header(kind, generation));
                writeFully(out, records(changes));
                out.force(true);
                size = out.size();
            }
            Files.move(temporary, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            syncDirectory(file.getParent());
            return size;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + file, e);
        }
    }

    static void writeFully(FileChannel out, ByteBuffer bytes) throws IOException {
        while (bytes.hasRemaining()) {
            out.write(bytes);
        }
    }

    static void syncDirectory(Path directory) throws IOException {
        try (FileChannel channel = FileChannel.open(directory, StandardOpenOption.READ)) {
            channel.force(true);
        }
    }
}
