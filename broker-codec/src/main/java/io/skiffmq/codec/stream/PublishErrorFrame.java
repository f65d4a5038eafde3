package io.skiffmq.codec.stream;

import io.netty.buffer.ByteBuf;

/**
 * A reusable view over a {@code publish_error} frame (0x04), as a client reads it: publisher id (uint8), then an
 * array of (publishing id uint64, code uint16). Read in place, by index. Holds a reference to the frame without
 * retaining it. Not thread-safe: one per connection.
 */
public final class PublishErrorFrame {
    private static final int ITEM = 10;

    private ByteBuf frame;
    private int errors;
    private int count;

    /** @throws IllegalArgumentException when the frame is not a publish error */
    public PublishErrorFrame wrap(ByteBuf frame) throws StreamDecodeException {
        this.count = StreamFrame.publisherItems(frame, CommandKey.PUBLISH_ERROR, ITEM);
        this.frame = frame;
        this.errors = frame.readerIndex() + StreamFrame.BODY_OFFSET + 5;
        return this;
    }

    public int publisherId() {
        return frame.getUnsignedByte(errors - 5);
    }

    public int count() {
        return count;
    }

    /** The {@code i}th failed publishing id, 0 &le; i &lt; {@link #count()}. */
    public long publishingId(int i) {
        return frame.getLong(errors + ITEM * i);
    }

    /** Its code, as a number: see {@link ResponseCode#of}. */
    public int code(int i) {
        return frame.getUnsignedShort(errors + ITEM * i + 8);
    }
}
