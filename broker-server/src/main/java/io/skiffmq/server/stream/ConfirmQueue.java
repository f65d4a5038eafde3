package io.skiffmq.server.stream;

import io.netty.buffer.ByteBuf;
import io.skiffmq.codec.stream.PublishFrameWriter;
import io.skiffmq.core.metrics.ConnectionCounters;

/**
 * The publishing ids of one connection's messages to one stream that wait for their confirm, in the order the
 * stream took them, each with the offset the log must commit first: its own (the last record of a sub-entry batch),
 * or for a duplicate the log's last offset when it was dropped (its original may not be committed yet). The offsets
 * never go down, so confirming is taking the head while it is committed. Three parallel rings, grown by doubling:
 * nothing is allocated per message. Owned by the connection's event loop.
 */
final class ConfirmQueue {
    private StreamPublisher[] publishers = new StreamPublisher[64];
    private long[] ids = new long[64];
    private long[] offsets = new long[64];
    private int head;
    private int size;

    void add(StreamPublisher publisher, long publishingId, long offset) {
        if (size == ids.length) {
            grow();
        }
        int at = (head + size) & (ids.length - 1);
        publishers[at] = publisher;
        ids[at] = publishingId;
        offsets[at] = offset;
        size++;
    }

    private void grow() {
        int capacity = ids.length * 2;
        StreamPublisher[] p = new StreamPublisher[capacity];
        long[] i = new long[capacity];
        long[] o = new long[capacity];
        for (int n = 0; n < size; n++) {
            int at = (head + n) & (ids.length - 1);
            p[n] = publishers[at];
            i[n] = ids[at];
            o[n] = offsets[at];
        }
        publishers = p;
        ids = i;
        offsets = o;
        head = 0;
    }

    int size() {
        return size;
    }

    /**
     * Writes confirms, one frame per run of one publisher and at most {@code maxIds} ids a frame, for the head of
     * the queue whose offsets are committed; the confirmed ones leave. Publishers deleted since get none.
     *
     * @param output where the frames go
     * @param counters where the confirms are counted
     * @return how many left the queue (confirmed, or dropped for a deleted publisher)
     */
    int confirmThrough(long committed, StreamOutput output, int maxIds, ConnectionCounters counters) {
        int done = 0;
        int frameStart = -1;
        StreamPublisher current = null;
        int inFrame = 0;
        ByteBuf out = null;
        while (size > 0 && offsets[head] <= committed) {
            StreamPublisher publisher = publishers[head];
            if (frameStart >= 0 && (publisher != current || inFrame == maxIds)) {
                PublishFrameWriter.endConfirm(out, frameStart);
                current.confirmed(inFrame);
                counters.confirmed(inFrame);
                output.appended();
                frameStart = -1;
            }
            if (!publisher.deleted()) {
                if (frameStart < 0) {
                    out = output.buffer();
                    frameStart = PublishFrameWriter.beginConfirm(out, publisher.id());
                    current = publisher;
                    inFrame = 0;
                }
                PublishFrameWriter.addConfirm(out, ids[head]);
                inFrame++;
            }
            publishers[head] = null;
            head = (head + 1) & (ids.length - 1);
            size--;
            done++;
        }
        if (frameStart >= 0) {
            PublishFrameWriter.endConfirm(out, frameStart);
            current.confirmed(inFrame);
            counters.confirmed(inFrame);
            output.appended();
        }
        return done;
    }

    /** Drops everything: the stream or the connection is gone. Returns how many there were. */
    int clear() {
        int n = size;
        java.util.Arrays.fill(publishers, null);
        head = 0;
        size = 0;
        return n;
    }
}
