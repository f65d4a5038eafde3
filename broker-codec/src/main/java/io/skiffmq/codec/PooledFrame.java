package io.skiffmq.codec;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufHolder;
import io.netty.util.IllegalReferenceCountException;
import io.netty.util.Recycler;

/**
 * A decoded frame: its type, channel and body, a retained slice of the bytes read from the socket. Whoever receives
 * it releases it once; a frame the decoder took from its type's pool then goes back to it for a later frame, as
 * Netty's pooled slices do, since a frame object per frame would be garbage for every message. After that release
 * the frame must not be used again (its body reads as released).
 *
 * <p>Owned by one thread at a time, the connection's event loop: the frame's own count is a plain field. Retaining
 * the frame retains its body too, as {@code DefaultByteBufHolder} does; the frame goes back to its pool when its own
 * count reaches zero, whoever still holds its body.
 */
public abstract class PooledFrame<F extends PooledFrame<F>> implements ByteBufHolder {
    /** Null for a frame made with {@code new}: it is never pooled. */
    private final Recycler.Handle<F> handle;
    private int type;
    private int channel;
    private ByteBuf body;
    private int references;

    protected PooledFrame(Recycler.Handle<F> handle) {
        this.handle = handle;
    }

    /** Fills a new or pooled frame; takes over {@code body}'s reference. */
    protected final F init(int type, int channel, ByteBuf body) {
        this.type = type;
        this.channel = channel;
        this.body = body;
        this.references = 1;
        return self();
    }

    @SuppressWarnings("unchecked")
    private F self() {
        return (F) this;
    }

    /** A frame of the same kind, not pooled, with {@code body}. */
    protected abstract F unpooled(int type, int channel, ByteBuf body);

    public final int type() {
        return type;
    }

    public final int channel() {
        return channel;
    }

    @Override
    public final ByteBuf content() {
        if (references <= 0) {
            throw new IllegalReferenceCountException(references);
        }
        return body;
    }

    @Override
    public final F copy() {
        return replace(content().copy());
    }

    @Override
    public final F duplicate() {
        return replace(content().duplicate());
    }

    @Override
    public final F retainedDuplicate() {
        return replace(content().retainedDuplicate());
    }

    @Override
    public final F replace(ByteBuf content) {
        return unpooled(type, channel, content);
    }

    @Override
    public final int refCnt() {
        return references;
    }

    @Override
    public final F retain() {
        return retain(1);
    }

    @Override
    public final F retain(int increment) {
        content().retain(increment);
        references += increment;
        return self();
    }

    @Override
    public final F touch() {
        content().touch();
        return self();
    }

    @Override
    public final F touch(Object hint) {
        content().touch(hint);
        return self();
    }

    @Override
    public final boolean release() {
        return release(1);
    }

    @Override
    public final boolean release(int decrement) {
        if (decrement <= 0 || decrement > references) {
            throw new IllegalReferenceCountException(references, -decrement);
        }
        ByteBuf released = body;
        references -= decrement;
        boolean last = references == 0;
        if (last) {
            body = null;
            if (handle != null) {
                handle.recycle(self());
            }
        }
        released.release(decrement);
        return last;
    }

    @Override
    public String toString() {
        return getClass().getSimpleName() + "(type=" + type + ", channel=" + channel + ", "
            + (references > 0 ? body.readableBytes() + " bytes)" : "released)");
    }
}
