package io.skiffmq.store;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.Map;
import org.apache.qpid.proton.codec.Data;

/**
 * A file holding one AMQP 1.0 encoded map, replaced whole: written to a temporary file, synced, renamed over the old
 * one and the directory synced, so a crash leaves either the old map or the new one. Stateless.
 */
final class EncodedMapFile {
    private EncodedMapFile() {
    }

    /** The map in {@code file}, or null when there is no such file. */
    static Map<?, ?> read(Path file) {
        if (!Files.exists(file)) {
            return null;
        }
        try {
            byte[] bytes = Files.readAllBytes(file);
            Data data = Data.Factory.create();
            data.decode(ByteBuffer.wrap(bytes));
            return (Map<?, ?>) data.getObject();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + file, e);
        } catch (RuntimeException e) {
            throw new IllegalStateException(file + " is damaged: " + e, e);
        }
    }

    /** Replaces {@code file} with {@code map}, durably. */
    static void write(Path file, Map<String, Object> map) {
        Data data = Data.Factory.create();
        data.putObject(map);
        ByteBuffer bytes = data.encode().asByteBuffer();
        Path temporary = file.resolveSibling(file.getFileName() + ".tmp");
        try {
            try (FileChannel out = FileChannel.open(temporary, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                    StandardOpenOption.TRUNCATE_EXISTING)) {
                while (bytes.hasRemaining()) {
                    out.write(bytes);
                }
                out.force(true);
            }
            Files.move(temporary, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            try (FileChannel directory = FileChannel.open(file.getParent(), StandardOpenOption.READ)) {
                directory.force(true);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + file, e);
        }
    }
}
