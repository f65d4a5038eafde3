package io.skiffmq.codec.stream;

import io.netty.buffer.ByteBuf;

/**
 * A reusable view over a {@code publish_confirm} frame (0x03), as a client reads it: publisher id (uint8), then an
 * array of publishing ids (uint64). Read in place, by index. Holds a reference to the frame without retaining it.
 * Not thread-safe: one per connection.
 */
public final class PublishConfirmFrame {
    private ByteBuf frame;
    private int ids;
    private int count;

    /** @throws IllegalArgumentException when the frame is not a publish confirm */
    public PublishConfirmFrame wrap(ByteBuf frame) throws StreamDecodeException {
        this.count = StreamFrame.publisherItems(frame, CommandKey.PUBLISH_CONFIRM, 8);
        this.frame = frame;
        this.ids = frame.readerIndex() + StreamFrame.BODY_OFFSET + 5;
        return this;
    }

    public int publisherId() {
        return frame.getUnsignedByte(ids - 5);
    }

    public int count() {
        return count;
    }

    /** The {@code i}th publishing id, 0 &le; i &lt; {@link #count()}. */
    public long publishingId(int i) {
        return frame.getLong(ids + 8 * i);
    }
}
