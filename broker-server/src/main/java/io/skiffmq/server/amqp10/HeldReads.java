package io.skiffmq.server.amqp10;

import io.netty.channel.Channel;
import io.netty.util.ReferenceCountUtil;
import java.util.ArrayDeque;
import java.util.function.Consumer;

/**
 * A connection's reading, held while its SASL login is checked off the loop: the socket is not read, and what was
 * already read (a client may pipeline its AMQP header and {@code open} behind {@code sasl-init}) waits here, in
 * order, to be processed once the outcome is written. Owned by the connection's event loop.
 */
final class HeldReads {
    private final Channel channel;
    private final Consumer<Object> process;
    private final ArrayDeque<Object> waiting = new ArrayDeque<>();
    private boolean held;

    /** @param process handles (and releases) one decoded message: a protocol header or a frame */
    HeldReads(Channel channel, Consumer<Object> process) {
        this.channel = channel;
        this.process = process;
    }

    /** True when {@code msg} must wait (it is kept, to be processed on {@link #release}). */
    boolean hold(Object msg) {
        if (!held) {
            return false;
        }
        waiting.add(msg);
        return true;
    }

    /** Stops reading until {@link #release}. */
    void hold() {
        held = true;
        channel.config().setAutoRead(false);
    }

    /** Processes what waited, in order, then reads on (unless one of them held reading again). */
    void release() {
        held = false;
        for (Object msg; !held && (msg = waiting.poll()) != null; ) {
            process.accept(msg);
        }
        if (!held) {
            channel.config().setAutoRead(true);
        }
    }

    /** The connection is gone: what waits is dropped. */
    void discard() {
        for (Object msg; (msg = waiting.poll()) != null; ) {
            ReferenceCountUtil.release(msg);
        }
    }
}
