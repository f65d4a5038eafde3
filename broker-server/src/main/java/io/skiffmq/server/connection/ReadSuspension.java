package io.skiffmq.server.connection;

import io.netty.channel.Channel;
import io.netty.util.ReferenceCountUtil;
import java.util.ArrayDeque;
import java.util.function.Consumer;

/**
 * A connection's reading, held for two reasons that compose: <em>suspended</em> while a command or method waits for
 * an answer from another thread (a login, the disk, a queue or stream; suspensions nest), so what follows it waits
 * its turn as RabbitMQ's readers take them one by one; and <em>blocked</em> by flow control (a resource alarm over
 * 0-9-1; over the stream protocol, too many unconfirmed messages or the disk alarm). While either holds, the socket
 * is not read, and frames already read wait here, in order; once neither does, they are processed and reading goes
 * on. What waits may be a decoder's failure (the stream protocol's decoder cuts frames ahead of their processing):
 * it is failed where it stood, after the frames before it. Shared by the 0-9-1 and stream protocol connections.
 * Owned by the connection's event loop.
 *
 * @param <F> what is read: a frame, or also a decoder's failure; reference-counted ones are released if dropped
 */
public final class ReadSuspension<F> {
    private final Channel channel;
    private final Consumer<F> process;
    private final ArrayDeque<F> waiting = new ArrayDeque<>();
    private int suspensions;
    private boolean blocked;
    private boolean draining;

    /** @param process handles (and releases) one frame, or a decoder's failure */
    public ReadSuspension(Channel channel, Consumer<F> process) {
        this.channel = channel;
        this.process = process;
    }

    /**
     * True when {@code frame} (a frame, or the decoder's failure) must wait: it is kept, to be processed when
     * reading is free again.
     */
    public boolean hold(F frame) {
        if (free() && !draining) {
            return false;
        }
        waiting.add(frame);
        return true;
    }

    private boolean free() {
        return suspensions == 0 && !blocked;
    }

    public void suspend() {
        if (suspensions++ == 0 && !blocked) {
            channel.config().setAutoRead(false);
        }
    }

    /** One answer is in: once none is awaited (and nothing blocks), what waited is processed, then reading goes on. */
    public void resume() {
        if (suspensions > 0) {
            --suspensions;
            drain();
        }
    }

    /** Flow control holds the connection: nothing more is read until {@link #unblock}. */
    public void block() {
        if (!blocked) {
            blocked = true;
            if (suspensions == 0) {
                channel.config().setAutoRead(false);
            }
        }
    }

    /** Flow control lets go: once no answer is awaited either, what waited is processed, then reading goes on. */
    public void unblock() {
        if (blocked) {
            blocked = false;
            drain();
        }
    }

    public boolean blocked() {
        return blocked;
    }

    private void drain() {
        if (!free() || draining) {
            return;
        }
        draining = true;
        try {
            for (F frame; free() && (frame = waiting.poll()) != null; ) {
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
    public void stop() {
        suspensions = 0;
        blocked = false;
        discard();
        channel.config().setAutoRead(true);
    }

    /** The connection is gone: what waits is dropped. */
    public void discard() {
        for (F frame; (frame = waiting.poll()) != null; ) {
            ReferenceCountUtil.release(frame);
        }
    }
}
