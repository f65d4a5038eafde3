package io.skiffmq.codec.amqp10;

import io.netty.buffer.ByteBuf;
import io.netty.util.Recycler;
import io.skiffmq.codec.PooledFrame;

/**
 * One frame [2.3]: its type, channel and body (the bytes after the extended header: performative and
 * payload). The body is a retained slice of the bytes read from the socket; whoever receives the frame
 * releases it once, and the decoder's frames then go back to their pool ({@link PooledFrame}).
 */
public final class AmqpFrame extends PooledFrame<AmqpFrame> {
    public static final int TYPE_AMQP = 0x00;
    public static final int TYPE_SASL = 0x01;

    private static final Recycler<AmqpFrame> POOL = new Recycler<>() {
        @Override
        protected AmqpFrame newObject(Handle<AmqpFrame> handle) {
            return new AmqpFrame(handle);
        }
    };

    private AmqpFrame(Recycler.Handle<AmqpFrame> handle) {
        super(handle);
    }

    /** A frame that is not pooled; takes over {@code body}'s reference. */
    public AmqpFrame(int type, int channel, ByteBuf body) {
        super(null);
        init(type, channel, body);
    }

    /** A frame from the pool, back in it once released; takes over {@code body}'s reference. */
    static AmqpFrame pooled(int type, int channel, ByteBuf body) {
        return POOL.get().init(type, channel, body);
    }

    @Override
    protected AmqpFrame unpooled(int type, int channel, ByteBuf body) {
        return new AmqpFrame(type, channel, body);
    }

    /** An empty frame: no performative, sent to keep the connection alive [2.4.5]. */
    public boolean isEmpty() {
        return !content().isReadable();
    }
}
