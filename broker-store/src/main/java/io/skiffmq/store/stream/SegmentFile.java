package io.skiffmq.store.stream;

import io.netty.util.internal.PlatformDependent;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Stream;

/**
 * Read access to a segment's chunks in its Chronicle file ({@code *.cq4}), by file position, through mappings of
 * our own. Chronicle writes each chunk as one excerpt, whose bytes are contiguous in the file and never move once
 * written; the log records where each starts ({@link SegmentIndex}). Reading them through mappings of our own
 * (not Chronicle's) lets a reader hand out real {@link java.nio.ByteBuffer} slices that Netty can wrap, keep and
 * write to a socket after the reader has moved on, and a {@link java.nio.channels.FileChannel} for
 * {@code sendfile}.
 *
 * <p>The file is mapped in windows: window {@code k} starts at {@code k * }{@value #WINDOW} and maps
 * {@link ChunkDescriptor#MAX_CHUNK_LENGTH} more, so any chunk lies whole in the window of its first byte. A window
 * is mapped on first use and mapped again, longer, when the writer has grown the file past it; mappings are
 * undone only when the segment is no longer used by anyone ({@link Segment}), never under a reader.
 *
 * <p>Threads: any. A window is looked up without a lock; mapping one takes this object's lock.
 */
final class SegmentFile implements AutoCloseable {
    static final long WINDOW = 256L << 20;
    private static final long MAPPED = WINDOW + ChunkDescriptor.MAX_CHUNK_LENGTH;

    private final FileChannel channel;
    private volatile MappedByteBuffer[] windows = new MappedByteBuffer[0];
    /** Mappings replaced by longer ones: slices of them may still be in use. Guarded by this. */
    private final List<MappedByteBuffer> replaced = new ArrayList<>();

    private SegmentFile(FileChannel channel) {
        this.channel = channel;
    }

    /** Opens the Chronicle file of the segment in {@code directory}, or returns null when it has none yet. */
    static SegmentFile open(Path directory) throws IOException {
        Path file;
        try (Stream<Path> files = Files.list(directory)) {
            file = files.filter(p -> p.getFileName().toString().endsWith(".cq4")).findFirst().orElse(null);
        }
        if (file == null) {
            return null;
        }
        // read and write: a writable mapping is what Netty can wrap; nothing is ever written through it
        return new SegmentFile(FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE));
    }

    FileChannel channel() {
        return channel;
    }

    /** Where {@code position} is in its {@link #window}. */
    static int offsetIn(long position) {
        return (int) (position % WINDOW);
    }

    /**
     * The mapping that holds {@code length} bytes at {@code position}: read them at {@link #offsetIn}
     * with absolute gets, or slice it.
     *
     * @throws UncheckedIOException when the file is shorter, or cannot be mapped
     */
    ByteBuffer window(long position, int length) {
        int k = (int) (position / WINDOW);
        long end = offsetIn(position) + (long) length;
        MappedByteBuffer[] current = windows;
        if (k < current.length && current[k] != null && current[k].capacity() >= end) {
            return current[k];
        }
        return map(k, end);
    }

    private synchronized ByteBuffer map(int k, long end) {
        MappedByteBuffer[] current = windows;
        if (k < current.length && current[k] != null && current[k].capacity() >= end) {
            return current[k];
        }
        try {
            long start = k * WINDOW;
            long length = Math.min(MAPPED, channel.size() - start);
            if (length < end) {
                throw new IOException("segment file ends at " + (start + Math.max(0, length)) + ", before byte "
                    + (start + end));
            }
            MappedByteBuffer mapped = channel.map(FileChannel.MapMode.READ_WRITE, start, length);
            MappedByteBuffer[] next = Arrays.copyOf(current, Math.max(current.length, k + 1));
            if (next[k] != null) {
                replaced.add(next[k]);
            }
            next[k] = mapped;
            windows = next;
            return mapped;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot map stream segment", e);
        }
    }

    /** Makes everything written to the file durable (the writer's stores through Chronicle's mapping too). */
    void force() throws IOException {
        channel.force(false);
    }

    /** Unmaps and closes; only once nothing reads the segment any more ({@link Segment#release}). */
    @Override
    public synchronized void close() {
        try {
            channel.close();
        } catch (IOException e) {
            // read-only use: nothing was pending
        }
        for (MappedByteBuffer m : windows) {
            if (m != null) {
                PlatformDependent.freeDirectBuffer(m);
            }
        }
        for (MappedByteBuffer m : replaced) {
            PlatformDependent.freeDirectBuffer(m);
        }
        windows = new MappedByteBuffer[0];
        replaced.clear();
    }
}
