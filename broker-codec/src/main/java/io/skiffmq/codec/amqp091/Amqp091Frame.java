package io.skiffmq.codec.amqp091;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.DefaultByteBufHolder;

/**
 * One AMQP 0-9-1 frame [4.2.3]: type, channel and payload (the bytes between the 7-byte header and the frame-end
 * octet). The payload is a retained slice of the bytes read from the socket; whoever receives the frame releases
 * it once. Decode a method payload with {@link MethodCodec#decode}, a content header with
 * {@link ContentHeader#decode}; a body payload is the message bytes themselves.
 */
public final class Amqp091Frame extends DefaultByteBufHolder {
    public static final int TYPE_METHOD = 1;
    public static final int TYPE_HEADER = 2;
    public static final int TYPE_BODY = 3;
    public static final int TYPE_HEARTBEAT = 8;

    private final int type;
    private final int channel;

    public Amqp091Frame(int type, int channel, ByteBuf payload) {
        super(payload);
        this.type = type;
        this.channel = channel;
    }

    public int type() {
        return type;
    }

    public int channel() {
        return channel;
    }

    /** The payload (same as {@link #content()}); released with the frame. */
    public ByteBuf payload() {
        return content();
    }

    @Override
    public String toString() {
        return "Amqp091Frame(type=" + type + ", channel=" + channel + ", " + content().readableBytes() + " bytes)";
    }
}
