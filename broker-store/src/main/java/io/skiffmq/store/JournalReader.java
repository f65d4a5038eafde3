package io.skiffmq.store;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongFunction;
import net.openhft.chronicle.queue.ExcerptTailer;
import net.openhft.chronicle.queue.impl.single.SingleChronicleQueue;
import net.openhft.chronicle.wire.DocumentContext;

/**
 * Reads the {@link Journal}'s records back by location. A segment is opened on its first read, with one tailer
 * that stays open until the segment is deleted or the journal closes.
 *
 * <p>Threads: any. A segment's tailer is used under its own lock, so reads in one segment take turns and reads in
 * different segments do not.
 */
final class JournalReader {
    /** A segment opened for {@link #read}: one tailer, used under its own lock. */
    private static final class Reader {
        final SingleChronicleQueue queue;
        final ExcerptTailer tailer;
        final int cycle;
        boolean closed;

        Reader(SingleChronicleQueue queue) {
            this.queue = queue;
            this.tailer = queue.createTailer();
            this.tailer.singleThreadedCheckDisabled(true);
            this.cycle = queue.firstCycle();
        }

        void close() {
            closed = true;
            tailer.close();
            queue.close();
        }
    }

    /** Opens a segment's queue. */
    private final LongFunction<SingleChronicleQueue> open;
    private final ConcurrentHashMap<Long, Reader> readers = new ConcurrentHashMap<>();

    /** @param open opens a segment's queue */
    JournalReader(LongFunction<SingleChronicleQueue> open) {
        this.open = open;
    }

    /** @see Journal#read */
    ByteBuf read(long location) {
        long segment = Journal.segmentOf(location);
        Reader reader = readers.computeIfAbsent(segment, s -> new Reader(open.apply(s)));
        synchronized (reader) {
            if (reader.closed) {
                throw new IllegalStateException("journal segment " + segment + " is deleted");
            }
            long index = reader.queue.rollCycle().toIndex(reader.cycle, location & 0xffff_ffffL);
            if (!reader.tailer.moveToIndex(index)) {
                throw new IllegalStateException("no journal record at " + segment + "/" + (location & 0xffff_ffffL));
            }
            try (DocumentContext document = reader.tailer.readingDocument()) {
                if (!document.isPresent()) {
                    throw new IllegalStateException("no journal record at " + segment + "/" + (location & 0xffff_ffffL));
                }
                return Unpooled.wrappedBuffer(document.wire().bytes().toByteArray());
            }
        }
    }

    /** Closes {@code segment}'s reader, if it has one: the segment is being deleted. */
    void close(long segment) {
        Reader reader = readers.remove(segment);
        if (reader != null) {
            synchronized (reader) {
                reader.close();
            }
        }
    }

    /** Closes every reader: the journal is closing. */
    void closeAll() {
        for (Reader reader : readers.values()) {
            synchronized (reader) {
                reader.close();
            }
        }
        readers.clear();
    }
}
