package io.skiffmq.server.amqp091;

import io.netty.channel.Channel;
import io.skiffmq.codec.amqp091.Amqp091Frame;
import java.util.ArrayDeque;
import java.util.function.Consumer;

/**
 * A connection's reading, suspended while methods wait for answers from off the event loop (the disk, a queue):
 * the socket is not read, and frames already read wait here, in order, until the last answer is in. Suspensions
 * nest. Owned by the connection's event loop.
 */
final class ReadSuspension {
    private final Channel channel;
    private final Consumer<Amqp091Frame> process;
    private final ArrayDeque<Amqp091Frame> waiting = new ArrayDeque<>();
    private int suspensions;
    private boolean draining;

    /** @param process handles (and releases) one frame */
    ReadSuspension(Channel channel, Consumer<Amqp091Frame> process) {
        this.channel = channel;
        this.process = process;
    }

    /** True when {@code frame} must wait (it is kept, to be processed on {@link #resume}). */
    boolean hold(Amqp091Frame frame) {
        if (suspensions == 0 && !draining) {
            return false;
        }
        waiting.add(frame);
        return true;
    }

    void suspend() {
        if (suspensions++ == 0) {
            channel.config().setAutoRead(false);
        }
    }

    /** One answer is in: once none is awaited, the frames that waited are processed, then reading goes on. */
    void resume() {
        if (--suspensions > 0 || draining) {
            return;
        }
        draining = true;
        try {
            for (Amqp091Frame frame; suspensions == 0 && (frame = waiting.poll()) != null; ) {
                process.accept(frame);
            }
        } finally {
            draining = false;
        }
        if (suspensions == 0) {
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
