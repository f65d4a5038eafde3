package io.skiffmq.codec.stream;

import io.netty.buffer.ByteBuf;

/**
 * A reusable view over a {@code credit} frame (0x09), as a server reads it: subscription id (uint8), credit
 * (uint16, in chunks). RabbitMQ reads the credit as signed, which only a credit of 32,768 or more would tell
 * apart; PROTOCOL.adoc says uint16 and the Java client sends at most 32,767. Not thread-safe: one per connection.
 */
public final class CreditFrame {
    private ByteBuf frame;
    private int body;

    /** @throws IllegalArgumentException when the frame is not a credit */
    public CreditFrame wrap(ByteBuf frame) throws StreamDecodeException {
        int at = StreamFrame.body(frame, CommandKey.CREDIT);
        StreamFrame.exactly(frame, at, 3, CommandKey.CREDIT);
        this.frame = frame;
        this.body = at;
        return this;
    }

    public int subscriptionId() {
        return frame.getUnsignedByte(body);
    }

    public int credit() {
        return frame.getUnsignedShort(body + 1);
    }
}
