package io.skiffmq.codec.amqp091;

import io.netty.buffer.ByteBuf;
import io.netty.util.Recycler;
import io.skiffmq.codec.PooledFrame;

/**
 * One AMQP 0-9-1 frame [4.2.3]: type, channel and payload (the bytes between the 7-byte header and the frame-end
 * octet). The payload is a retained slice of the bytes read from the socket; whoever receives the frame releases
 * it once, and the decoder's frames then go back to their pool ({@link PooledFrame}). Decode a method payload with
 * {@link MethodCodec#decode}, a content header with {@link ContentHeader#decode}; a body payload is the message bytes
 * themselves.
 */
public final class Amqp091Frame extends PooledFrame<Amqp091Frame> {
    public static final int TYPE_METHOD = 1;
    public static final int TYPE_HEADER = 2;
    public static final int TYPE_BODY = 3;
    public static final int TYPE_HEARTBEAT = 8;

    private static final Recycler<Amqp091Frame> POOL = new Recycler<>() {
        @Override
        protected Amqp091Frame newObject(Handle<Amqp091Frame> handle) {
            return new Amqp091Frame(handle);
        }
    };

    private Amqp091Frame(Recycler.Handle<Amqp091Frame> handle) {
        super(handle);
    }

    /** A frame that is not pooled; takes over {@code payload}'s reference. */
    public Amqp091Frame(int type, int channel, ByteBuf payload) {
        super(null);
        init(type, channel, payload);
    }

    /** A frame from the pool, back in it once released; takes over {@code payload}'s reference. */
    static Amqp091Frame pooled(int type, int channel, ByteBuf payload) {
        return POOL.get().init(type, channel, payload);
    }

    @Override
    protected Amqp091Frame unpooled(int type, int channel, ByteBuf payload) {
        return new Amqp091Frame(type, channel, payload);
    }

    /** The payload (same as {@link #content()}); released with the frame. */
    public ByteBuf payload() {
        return content();
    }
}
