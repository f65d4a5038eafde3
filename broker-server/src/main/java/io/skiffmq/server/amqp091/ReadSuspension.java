package io.skiffmq.server.amqp091;

import io.netty.channel.Channel;
import io.skiffmq.codec.amqp091.Amqp091Frame;
import java.util.ArrayDeque;
import java.util.function.Consumer;

/**
 * A connection's reading, held for two reasons that compose: <em>suspended</em> while methods wait for answers
 * from off the event loop (the disk, a queue; suspensions nest), and <em>blocked</em> while a resource alarm holds
 * a publishing connection back ({@link PublisherBlock}). While either holds, the socket is not read, and frames
 * already read wait here, in order; once neither does, they are processed and reading goes on. Owned by the
 * connection's event loop.
 */
final class ReadSuspension {
    private final Channel channel;
    private final Consumer<Amqp091Frame> process;
    private final ArrayDeque<Amqp091Frame> waiting = new ArrayDeque<>();
    private int suspensions;
    private boolean blocked;
    private boolean draining;

    /** @param process handles (and releases) one frame */
    ReadSuspension(Channel channel, Consumer<Amqp091Frame> process) {
        this.channel = channel;
        this.process = process;
    }

    /** True when {@code frame} must wait (it is kept, to be processed when reading is free again). */
    boolean hold(Amqp091Frame frame) {
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

    /** A resource alarm blocks this connection: nothing more is read until {@link #unblock}. */
    void block() {
        if (!blocked) {
            blocked = true;
            if (suspensions == 0) {
                channel.config().setAutoRead(false);
            }
        }
    }

    /** The alarms cleared: once no answer is awaited either, what waited is processed, then reading goes on. */
    void unblock() {
        if (blocked) {
            blocked = false;
            drain();
        }
    }

    private void drain() {
        if (!free() || draining) {
            return;
        }
        draining = true;
        try {
            for (Amqp091Frame frame; free() && (frame = waiting.poll()) != null; ) {
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
        for (Amqp091Frame frame; (frame = waiting.poll()) != null; ) {
            frame.release();
        }
    }
}
