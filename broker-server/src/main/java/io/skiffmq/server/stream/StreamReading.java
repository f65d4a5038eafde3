package io.skiffmq.server.stream;

import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import java.util.ArrayDeque;
import java.util.function.Consumer;

/**
 * A stream connection's reading, held for two reasons that compose: <em>suspended</em> while a command waits for
 * an answer from another thread (the stream's, the disk's; suspensions nest), so the commands after it wait their
 * turn as RabbitMQ's reader takes them one by one; and <em>blocked</em> by publish flow control (too many messages
 * unconfirmed, or a resource alarm). While either holds, the socket is not read, and frames already read wait here,
 * in order; once neither does, they are processed and reading goes on. Owned by the connection's event loop.
 */
final class StreamReading {
    private final Channel channel;
    private final Consumer<ByteBuf> process;
    private final ArrayDeque<ByteBuf> waiting = new ArrayDeque<>();
    private int suspensions;
    private boolean blocked;
    private boolean draining;

    /** @param process handles (and releases) one frame */
    StreamReading(Channel channel, Consumer<ByteBuf> process) {
        this.channel = channel;
        this.process = process;
    }

    /** True when {@code frame} must wait (it is kept, to be processed when reading is free again). */
    boolean hold(ByteBuf frame) {
        if (free() && !draining) {
            return false;
        }
        waiting.add(frame);
        return true;
    }

    private boolean free() {
        return suspensions == 0 && !blocked;
    }

    void suspend() {
        if (suspensions++ == 0 && !blocked) {
            channel.config().setAutoRead(false);
        }
    }

    /** One answer is in: once none is awaited (and nothing blocks), what waited is processed, then reading goes on. */
    void resume() {
        --suspensions;
        drain();
    }

    /** Publish flow control holds the connection: nothing more is read until {@link #unblock}. */
    void block() {
        if (!blocked) {
            blocked = true;
            if (suspensions == 0) {
                channel.config().setAutoRead(false);
            }
        }
    }

    void unblock() {
        if (blocked) {
            blocked = false;
            drain();
        }
    }

    boolean blocked() {
        return blocked;
    }

    private void drain() {
        if (!free() || draining) {
            return;
        }
        draining = true;
        try {
            for (ByteBuf frame; free() && (frame = waiting.poll()) != null; ) {
                process.accept(frame);
            }
        } finally {
            draining = false;
        }
        if (free()) {
            channel.config().setAutoRead(true);
        }
    }

    /** The connection is gone: what waits is dropped. */
    void discard() {
        for (ByteBuf frame; (frame = waiting.poll()) != null; ) {
            frame.release();
        }
    }
}
