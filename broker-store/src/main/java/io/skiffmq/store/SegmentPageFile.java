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
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayDeque;
import java.util.Iterator;

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
 * <p>Owned by its queue's thread; not thread-safe. Reads and writes are blocking file calls on that thread: writes
 * go out {@link #WRITE_BUFFER} bytes at a time and reads come in {@link #READ_BUFFER} at a time, mostly from the OS
 * page cache.
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
        final FileChannel channel;
        /** Bytes in the file. */
        long flushed;
        /** Bytes appended, the write buffer's included. */
        long end;

        Segment(Path path) throws IOException {
            this.path = path;
            this.channel = FileChannel.open(path, StandardOpenOption.CREATE_NEW, StandardOpenOption.READ,
                StandardOpenOption.WRITE);
        }

        void delete() throws IOException {
            channel.close();
            Files.deleteIfExists(path);
        }
    }

    private final Path directory;
    private final long segmentBytes;
    private final ArrayDeque<Segment> segments = new ArrayDeque<>();
    private long nextSegment = 1;
    /** Appended bytes not yet in the last segment's file; null while nothing is pending. */
    private ByteBuf writeBuffer;
    /** Reads the first segment from where reading is. */
    private final Scanner reader = new Scanner();
    private boolean deleted;

    /** @param segmentBytes bytes after which appending moves to a new segment */
    SegmentPageFile(Path directory, long segmentBytes) {
        this.directory = directory;
        this.segmentBytes = segmentBytes;
    }

    @Override
    public void append(long sequence, Message message, long deliveryCount, boolean acquiredBefore, long location,
            long expiresAt, int bodySize) {
        if (deleted) {
            throw new IllegalStateException("page file " + directory + " is deleted");
        }
        try {
            Segment last = segments.peekLast();
            if (last == null || last.end >= segmentBytes) {
                flush();
                last = new Segment(directory.resolve(String.format("page-%06d", nextSegment)));
                nextSegment++;
                segments.addLast(last);
                if (segments.size() == 1) {
                    reader.start(last, 0);
                }
            }
            if (writeBuffer == null) {
                // on the heap: a queue dropped without being closed (a store closed under it) leaves nothing behind
                writeBuffer = Unpooled.buffer(WRITE_BUFFER);
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

    /** Writes the buffered bytes to the last segment. */
    private void flush() throws IOException {
        if (writeBuffer == null || !writeBuffer.isReadable()) {
            return;
        }
        Segment last = segments.getLast();
        ByteBuffer bytes = writeBuffer.nioBuffer();
        while (bytes.hasRemaining()) {
            last.flushed += last.channel.write(bytes, last.flushed);
        }
        writeBuffer.clear();
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
            flush(); // every record is in a file, where its location is rewritten
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
                int want = (int) Math.min(buf.writableBytes(), segment.flushed - from);
                int got = want <= 0 ? -1 : segment.channel.read(buf.nioBuffer(buf.writerIndex(), want), from);
                if (got < 0) {
                    throw new EOFException("page file " + segment.path + " ends at " + from);
                }
                buf.writerIndex(buf.writerIndex() + got);
            }
        }

        void release() {
            buf = null; // a heap buffer: nothing to give back
            segment = null;
            position = 0;
        }
    }
}
