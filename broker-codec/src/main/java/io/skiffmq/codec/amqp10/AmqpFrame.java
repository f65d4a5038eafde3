package io.skiffmq.codec.amqp10;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.DefaultByteBufHolder;

/**
 * One frame [2.3]: its type, channel and body (the bytes after the extended header: performative and
 * payload). The body is a retained slice of the bytes read from the socket; whoever receives the frame
 * releases it once.
 */
public final class AmqpFrame extends DefaultByteBufHolder {
    public static final int TYPE_AMQP = 0x00;
    public static final int TYPE_SASL = 0x01;

    private final int type;
    private final int channel;

    public AmqpFrame(int type, int channel, ByteBuf body) {
        super(body);
        this.type = type;
        this.channel = channel;
    }

    public int type() {
        return type;
    }

    public int channel() {
        return channel;
    }

    /** An empty frame: no performative, sent to keep the connection alive [2.4.5]. */
    public boolean isEmpty() {
        return !content().isReadable();
    }

    @Override
    public String toString() {
        return "AmqpFrame(type=" + type + ", channel=" + channel + ", " + content().readableBytes() + " bytes)";
    }
}
