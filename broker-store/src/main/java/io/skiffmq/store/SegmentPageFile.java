package io.skiffmq.store;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.skiffmq.core.message.MalformedMessageException;
import io.skiffmq.core.message.Message;
import io.skiffmq.core.message.MessageFormat;
import io.skiffmq.core.queue.PageFile;
import io.skiffmq.core.queue.PagedMessage;
import io.skiffmq.core.queue.QueueLog;
import java.io.EOFException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayDeque;
import java.util.Iterator;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A {@link PageFile} as a run of plain segment files ({@code page-000001}, …) in a directory of its own, written
 * through a buffer and never synced: it only has to outlive the process's memory, not the process. A segment is
 * deleted as soon as reading has passed its end; when everything written was read, the file starts over.
 *
 * <pre>
 *  0      4           12          20       24
 *  +------+-----------+-----------+--------+--------------------------------------------------+
 *  |length| location  | expiresAt |bodySize| a PUBLISH {@link JournalRecord} (queue id 0): sequence, flags (durable,  |
 *  | i32  |   i64     |   i64     |  i32   | redelivered = acquired before), delivery count, names, format, message |
 *  +------+-----------+-----------+--------+--------------------------------------------------+
 *  length: of the whole record, these 24 bytes included; the journal record brings its own CRC-32C
 * </pre>
 *
 * <p>Owned by its queue's thread; not thread-safe, but for the writes: the appended bytes are handed, a buffer at a
 * time (a {@link Chunk}), to the store's page writer ({@link PageStore}), a thread that writes them to the file, so
 * the queue's thread (an event loop) never waits for the disk to take a write: a 16 MiB message written in the
 * loop held every connection on it while the kernel throttled the writer (docs/benchmarks.md, issue 30). Until a
 * chunk is written its bytes stay here, and what is read back from them is read from memory; a chunk that reading
 * passed before the writer got to it is never written. The bytes not yet written, all page files of the store
 * together, are bounded ({@link PageStore}): past the bound an append waits for this file's oldest chunk. Reads
 * from the file are blocking calls on the queue's thread, {@link #READ_BUFFER} at a time, mostly from the OS page
 * cache (what was paged most recently is the likeliest to be still in memory).
 */
final class SegmentPageFile implements PageFile {
    static final int PREFIX = 24;
    private static final int LOCATION_OFFSET = 4;
    private static final int EXPIRES_AT_OFFSET = 12;
    private static final int BODY_SIZE_OFFSET = 20;
    /** Bytes gathered before a write: 64 KiB, a few hundred small messages per system call. */
    static final int WRITE_BUFFER = 64 << 10;
    /** Bytes read at a time; grows for a larger record. */
    static final int READ_BUFFER = 64 << 10;

    /** One file of the run. */
    private static final class Segment {
        final Path path;
        /** Its place in the run: later segments have higher numbers. */
        final long number;
        final FileChannel channel;
        /** Bytes handed to the writer (in the file, or in a {@link Chunk} on its way there). */
        long flushed;
        /** Bytes appended, the write buffer's included. */
        long end;

        Segment(Path path, long number) throws IOException {
            this.path = path;
            this.number = number;
            this.channel = FileChannel.open(path, StandardOpenOption.CREATE_NEW, StandardOpenOption.READ,
                StandardOpenOption.WRITE);
        }

        void delete() throws IOException {
            channel.close();
            Files.deleteIfExists(path);
        }
    }

    /**
     * Appended bytes handed to the writer: at {@link #position} of {@link #segment}. The bytes are not changed after
     * the hand-off; the writer reads them through a view of its own, the queue's thread by absolute index.
     */
    private static final class Chunk implements Runnable {
        final Segment segment;
        final long position;
        final ByteBuf bytes;
        final AtomicLong unwritten;
        /** Completes when the writer is done with it: written, failed or skipped. */
        final CompletableFuture<Void> done = new CompletableFuture<>();
        /** Reading passed it, or its segment is gone: the writer skips it. */
        volatile boolean unwanted;
        /** Why it could not be written; read after {@link #done}. */
        IOException failed;

        Chunk(Segment segment, long position, ByteBuf bytes, AtomicLong unwritten) {
            this.segment = segment;
            this.position = position;
            this.bytes = bytes;
            this.unwritten = unwritten;
        }

        long end() {
            return position + bytes.readableBytes();
        }

        /** On the writer's thread. */
        @Override
        public void run() {
            try {
                if (!unwanted) {
                    ByteBuffer view = bytes.nioBuffer();
                    long at = position;
                    while (view.hasRemaining()) {
                        at += segment.channel.write(view, at);
                    }
                }
            } catch (ClosedChannelException e) {
                // the segment was deleted under the write: nobody reads it
            } catch (IOException e) {
                failed = e;
            } finally {
                finished();
            }
        }

        /** Not written, and never will be: the writer would not take it. */
        void refused(IOException why) {
            failed = why;
            finished();
        }

        private void finished() {
            unwritten.addAndGet(-bytes.readableBytes());
            done.complete(null);
        }
    }

    private final Path directory;
    private final long segmentBytes;
    private final ArrayDeque<Segment> segments = new ArrayDeque<>();
    private long nextSegment = 1;
    /** Appended bytes not yet handed to the writer; null while there are none. */
    private ByteBuf writeBuffer;
    /** Chunks handed to the writer and not known to be written yet, oldest first. */
    private final ArrayDeque<Chunk> chunks = new ArrayDeque<>();
    /** Writes the chunks, in the order they are handed to it. */
    private final Executor writer;
    /** Bytes handed to the writer and not written yet, by every page file of the store. */
    private final AtomicLong unwritten;
    /** Past this many {@link #unwritten} bytes, an append waits for this file's oldest chunk. */
    private final long unwrittenLimit;
    /** Why a chunk could not be written: nothing is appended until the file starts over. */
    private IOException failure;
    /** Reads the first segment from where reading is. */
    private final Scanner reader = new Scanner();
    private boolean deleted;

    /**
     * @param segmentBytes bytes after which appending moves to a new segment
     * @param writer writes the appended bytes, a task at a time in order (one thread)
     * @param unwritten the store's count of bytes handed to {@code writer} and not written yet
     * @param unwrittenLimit past this count an append waits for the writer
     */
    SegmentPageFile(Path directory, long segmentBytes, Executor writer, AtomicLong unwritten, long unwrittenLimit) {
        this.directory = directory;
        this.segmentBytes = segmentBytes;
        this.writer = writer;
        this.unwritten = unwritten;
        this.unwrittenLimit = unwrittenLimit;
    }

    @Override
    public void append(long sequence, Message message, long deliveryCount, boolean acquiredBefore, long location,
            long expiresAt, int bodySize) {
        if (deleted) {
            throw new IllegalStateException("page file " + directory + " is deleted");
        }
        reap();
        if (failure != null) {
            throw new UncheckedIOException("cannot write page file " + directory, failure);
        }
        try {
            Segment last = segments.peekLast();
            if (last == null || last.end >= segmentBytes) {
                flush();
                last = new Segment(directory.resolve(String.format("page-%06d", nextSegment)), nextSegment);
                nextSegment++;
                segments.addLast(last);
                if (segments.size() == 1) {
                    reader.start(last, 0);
                }
            }
            int room = recordRoom(message);
            if (writeBuffer != null && writeBuffer.writableBytes() < room) {
                flush(); // a large record gets a buffer of its size, not one grown to it a doubling at a time
            }
            if (writeBuffer == null) {
                // on the heap: a queue dropped without being closed (a store closed under it) leaves nothing behind
                writeBuffer = Unpooled.buffer(Math.max(WRITE_BUFFER, room));
            }
            int start = writeBuffer.writerIndex();
            try {
                writeBuffer.writeInt(0);
                writeBuffer.writeLong(location);
                writeBuffer.writeLong(expiresAt);
                writeBuffer.writeInt(bodySize);
                int flags = (message.durable() ? RecordDescriptor.FLAG_DURABLE : 0)
                    | (acquiredBefore ? RecordDescriptor.FLAG_REDELIVERED : 0);
                // the prefix holds the expiry: the record does not repeat it
                JournalRecord.writePublish(writeBuffer, 0, sequence, flags, (int) deliveryCount,
                    JournalRecord.NO_EXPIRY, message);
            } catch (RuntimeException e) {
                writeBuffer.writerIndex(start); // nothing of it stays
                throw e;
            }
            int length = writeBuffer.writerIndex() - start;
            writeBuffer.setInt(start, length);
            last.end += length;
            if (writeBuffer.readableBytes() >= WRITE_BUFFER) {
                flush();
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write page file " + directory, e);
        }
    }

    /** Room for a message's record, at least: the prefix, the journal record's header and names, the message. */
    private static int recordRoom(Message message) {
        int names = (message.exchange() == null ? 0 : message.exchange().length())
            + (message.routingKey() == null ? 0 : message.routingKey().length());
        return PREFIX + RecordDescriptor.HEADER_LENGTH + 32 + 3 * names + message.storedSize();
    }

    /**
     * Hands the buffered bytes to the writer, for the last segment; waits for this file's oldest chunks while the
     * store's unwritten bytes are past their limit.
     */
    private void flush() {
        if (writeBuffer == null || !writeBuffer.isReadable()) {
            return;
        }
        Segment last = segments.getLast();
        Chunk chunk = new Chunk(last, last.flushed, writeBuffer, unwritten);
        writeBuffer = null;
        last.flushed = chunk.end();
        chunks.addLast(chunk);
        unwritten.addAndGet(chunk.bytes.readableBytes());
        try {
            writer.execute(chunk);
        } catch (RejectedExecutionException e) {
            chunk.refused(new IOException("the page writer is stopped")); // the store closed: kept in memory
        }
        while (unwritten.get() > unwrittenLimit && !chunks.isEmpty() && failure == null) {
            chunks.peekFirst().done.join(); // the disk is behind: memory stays bounded rather than the loop free
            reap();
        }
    }

    /** Lets go of the oldest chunks the writer wrote; stops at one it could not write ({@link #failure}). */
    private void reap() {
        for (Chunk chunk; (chunk = chunks.peekFirst()) != null && chunk.done.isDone(); ) {
            if (chunk.failed != null && !chunk.unwanted) {
                failure = chunk.failed; // its bytes stay here, to be read back from memory
                return;
            }
            chunks.pollFirst();
        }
    }

    /** Chunks wholly before {@code position} of {@code segment}, or of a segment before it, are not needed. */
    private void passed(Segment segment, long position) {
        for (Chunk chunk; (chunk = chunks.peekFirst()) != null; ) {
            if (chunk.segment.number > segment.number || chunk.segment == segment && chunk.end() > position) {
                return;
            }
            chunk.unwanted = true;
            chunks.pollFirst();
        }
    }

    /** Drops every chunk: the writer skips what it has not started. */
    private void dropChunks() {
        for (Chunk chunk : chunks) {
            chunk.unwanted = true;
        }
        chunks.clear();
        failure = null;
    }

    /** Waits until the writer has written every chunk handed to it (before the file is rewritten in place). */
    private void awaitWritten() throws IOException {
        flush();
        for (Chunk chunk : chunks) {
            chunk.done.join();
        }
        reap();
        if (failure != null) {
            throw failure;
        }
    }

    /**
     * Reads up to {@code want} bytes of {@code segment} from {@code from} into {@code buf}: from a chunk still in
     * memory, or from the file up to the next such chunk. Returns how many, or -1 when the file ends there.
     */
    private int readAt(Segment segment, long from, ByteBuf buf, int want) throws IOException {
        reap();
        long upTo = segment.flushed;
        for (Chunk chunk : chunks) {
            if (chunk.segment != segment || chunk.end() <= from) {
                continue;
            }
            if (chunk.position <= from) {
                int n = (int) Math.min(want, chunk.end() - from);
                buf.writeBytes(chunk.bytes, chunk.bytes.readerIndex() + (int) (from - chunk.position), n);
                return n;
            }
            upTo = chunk.position; // the file holds what lies before it
            break;
        }
        int n = (int) Math.min(want, upTo - from);
        if (n <= 0) {
            return -1;
        }
        int got = segment.channel.read(buf.nioBuffer(buf.writerIndex(), n), from);
        if (got > 0) {
            buf.writerIndex(buf.writerIndex() + got);
        }
        return got;
    }

    @Override
    public PagedMessage read() {
        try {
            int length;
            while ((length = reader.next()) < 0) {
                if (segments.size() <= 1) {
                    return null; // everything written was read
                }
                // past the end of a segment the writer has left: it is not needed any more
                segments.pollFirst().delete();
                reader.start(segments.getFirst(), 0);
            }
            PagedMessage paged = parse(reader.buf, length);
            reader.skip(length);
            passed(reader.segment, reader.position);
            return paged;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read page file " + directory, e);
        }
    }

    /** The message of the record of {@code length} bytes at {@code buf}'s reader index, which is left unchanged. */
    private PagedMessage parse(ByteBuf buf, int length) {
        int start = buf.readerIndex();
        JournalRecord.Read r;
        try {
            r = JournalRecord.read(buf.slice(start + PREFIX, length - PREFIX));
        } catch (JournalRecord.Corrupt e) {
            throw new QueueLog.Unreadable("page file " + directory + " is damaged: " + e.getMessage(), e);
        }
        MessageFormat format = MessageFormat.ofTag(r.format());
        if (r.type() != RecordType.PUBLISH || format == null) {
            throw new QueueLog.Unreadable("page file " + directory + " holds a " + r.type() + " record of format "
                + r.format(), null);
        }
        Message message;
        try {
            // a copy of its own: the read buffer is reused
            message = Message.readStored(format, Unpooled.copiedBuffer(r.message()),
                (r.flags() & RecordDescriptor.FLAG_DURABLE) != 0, r.exchange(), r.routingKey());
        } catch (MalformedMessageException e) {
            throw new QueueLog.Unreadable("page file " + directory + " holds a malformed message", e);
        }
        return new PagedMessage(r.sequence(), message, r.deliveryCount(),
            (r.flags() & RecordDescriptor.FLAG_REDELIVERED) != 0, buf.getLong(start + LOCATION_OFFSET),
            buf.getLong(start + EXPIRES_AT_OFFSET), buf.getInt(start + BODY_SIZE_OFFSET));
    }

    @Override
    public int relocate(long before, QueueLog log) {
        int copied = 0;
        try {
            awaitWritten(); // every record is in a file, where its location is rewritten
            Scanner scan = new Scanner();
            boolean first = true;
            for (Segment segment : segments) {
                scan.start(segment, first ? reader.position : 0);
                first = false;
                for (int length; (length = scan.next()) >= 0; scan.skip(length)) {
                    long location = scan.buf.getLong(scan.buf.readerIndex() + LOCATION_OFFSET);
                    if (location < 0 || location >= before) {
                        continue;
                    }
                    PagedMessage paged = parse(scan.buf, length);
                    long moved;
                    try {
                        moved = log.relocate(paged.sequence(), paged.message(), paged.deliveryCount(),
                            paged.expiresAt(), location);
                    } finally {
                        paged.message().release();
                    }
                    ByteBuffer at = ByteBuffer.allocate(8).putLong(0, moved);
                    long position = scan.position + LOCATION_OFFSET;
                    while (at.hasRemaining()) {
                        position += segment.channel.write(at, position);
                    }
                    copied++;
                }
            }
            scan.release();
            reader.refetch(); // what it had read ahead may hold old locations
        } catch (IOException e) {
            throw new UncheckedIOException("cannot rewrite page file " + directory, e);
        }
        return copied;
    }

    @Override
    public void clear(Removed removed) {
        try {
            if (removed != null) {
                Scanner scan = new Scanner();
                boolean first = true;
                for (Segment segment : segments) {
                    scan.start(segment, first ? reader.position : 0);
                    first = false;
                    for (int length; (length = scan.next()) >= 0; scan.skip(length)) {
                        int start = scan.buf.readerIndex();
                        long location = scan.buf.getLong(start + LOCATION_OFFSET);
                        if (location >= 0) {
                            removed.removed(scan.buf.getLong(start + PREFIX + RecordDescriptor.SEQUENCE_OFFSET),
                                location);
                        }
                    }
                }
                scan.release();
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read page file " + directory, e);
        } finally {
            dropAll();
        }
    }

    /** Deletes every segment and lets go of the buffers: the file starts over with the next append. */
    private void dropAll() {
        dropChunks();
        IOException failed = null;
        for (Iterator<Segment> it = segments.iterator(); it.hasNext(); ) {
            try {
                it.next().delete();
            } catch (IOException e) {
                failed = e;
            }
            it.remove();
        }
        reader.release();
        writeBuffer = null;
        if (failed != null) {
            throw new UncheckedIOException("cannot delete page file " + directory, failed);
        }
    }

    @Override
    public void delete() {
        deleted = true;
        dropAll();
        try {
            Files.deleteIfExists(directory);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot delete " + directory, e);
        }
    }

    /** Walks the records of one segment, a buffer at a time. */
    private final class Scanner {
        Segment segment;
        /** Where the record at {@link #buf}'s reader index starts in the segment. */
        long position;
        /** The segment's bytes from {@link #position} on, as far as read; null until needed. */
        ByteBuf buf;

        void start(Segment segment, long position) {
            this.segment = segment;
            this.position = position;
            if (buf != null) {
                buf.clear();
            }
        }

        /** Reads again from {@link #position}: the file changed under what was read ahead. */
        void refetch() {
            if (buf != null) {
                buf.clear();
            }
        }

        /**
         * Makes the next record readable at {@link #buf}'s reader index.
         *
         * @return its length, or -1 when the segment has no more
         */
        int next() throws IOException {
            if (segment == null || position >= segment.end) {
                return -1;
            }
            fill(4);
            int length = buf.getInt(buf.readerIndex());
            if (length < PREFIX + RecordDescriptor.HEADER_LENGTH || position + length > segment.end) {
                throw new QueueLog.Unreadable("page file " + directory + " has a record of " + length + " bytes at "
                    + position + " of " + segment.path.getFileName(), null);
            }
            fill(length);
            return length;
        }

        void skip(int length) {
            buf.skipBytes(length);
            position += length;
        }

        private void fill(int bytes) throws IOException {
            if (buf == null) {
                buf = Unpooled.buffer(Math.max(READ_BUFFER, bytes));
            }
            if (buf.readableBytes() >= bytes) {
                return;
            }
            if (position + bytes > segment.flushed) {
                flush(); // still in the write buffer
            }
            buf.discardReadBytes();
            buf.ensureWritable(bytes - buf.readableBytes());
            while (buf.readableBytes() < bytes) {
                long from = position + buf.readableBytes();
                if (readAt(segment, from, buf, buf.writableBytes()) < 0) {
                    throw new EOFException("page file " + segment.path + " ends at " + from);
                }
            }
        }

        void release() {
            buf = null; // a heap buffer: nothing to give back
            segment = null;
            position = 0;
        }
    }
}
