package io.skiffmq.server.stream;

import io.netty.channel.Channel;
import io.netty.util.ReferenceCountUtil;
import java.util.ArrayDeque;
import java.util.function.Consumer;

/**
 * A stream connection's reading, held for two reasons that compose: <em>suspended</em> while a command waits for
 * an answer from another thread (the stream's, the disk's; suspensions nest), so the commands after it wait their
 * turn as RabbitMQ's reader takes them one by one; and <em>blocked</em> by publish flow control (too many messages
 * unconfirmed, or a resource alarm). While either holds, the socket is not read, and frames already read wait here,
 * in order; once neither does, they are processed and reading goes on. A frame the decoder refused waits its turn
 * too (the decoder cuts frames ahead of their processing): it is failed where it stood, after the frames before it,
 * as RabbitMQ's reader meets it. Owned by the connection's event loop.
 */
final class StreamReading {
    private final Channel channel;
    private final Consumer<Object> process;
    private final ArrayDeque<Object> waiting = new ArrayDeque<>();
    private int suspensions;
    private boolean blocked;
    private boolean draining;

    /** @param process handles (and releases) one frame, or a decoder's failure */
    StreamReading(Channel channel, Consumer<Object> process) {
        this.channel = channel;
        this.process = process;
    }

    /**
     * True when {@code frame} (a frame, or the decoder's failure) must wait: it is kept, to be processed when
     * reading is free again.
     */
    boolean hold(Object frame) {
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
        if (suspensions > 0) {
            --suspensions;
            drain();
        }
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
            for (Object frame; free() && (frame = waiting.poll()) != null; ) {
                process.accept(frame);
            }
        } finally {
            draining = false;
        }
        if (free()) {
            channel.config().setAutoRead(true);
        }
    }

    /**
     * The connection is closing: nothing is held any more and the socket is read on (so the peer's answer, or its
     * end, is seen, and nothing it sent is left unread to turn our close into a reset); what waited is dropped.
     */
    void stop() {
        suspensions = 0;
        blocked = false;
        discard();
        channel.config().setAutoRead(true);
    }

    /** The connection is gone: what waits is dropped. */
    void discard() {
        for (Object frame; (frame = waiting.poll()) != null; ) {
            ReferenceCountUtil.release(frame);
        }
    }
}
