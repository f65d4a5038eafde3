package io.skiffmq.core.stream;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.skiffmq.codec.amqp10.AmqpDecodeException;
import io.skiffmq.core.message.Amqp091Message;
import io.skiffmq.core.message.Amqp10Message;
import io.skiffmq.core.message.Message;
import io.skiffmq.core.metrics.QueueCounters;
import io.skiffmq.core.queue.Handoff;
import io.skiffmq.core.queue.PublishConfirm;
import io.skiffmq.core.queue.QueueExecutor;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A stream's publishing side: messages become entries of the chunk being built, as AMQP 1.0 bytes (a 0-9-1 message
 * converted once, as RabbitMQ 4 stores it: {@code mc_amqpl} to {@code mc_amqp}, on the publisher's thread when it is
 * not the stream's), with their filter value ({@code x-stream-filter-value}) in the chunk's Bloom filter. What
 * arrives in one run of the stream's thread goes into one chunk: publishes from other threads come in batches
 * ({@link Handoff}) and the chunk is written after each; publishes on the stream's own thread are written after its
 * turn. A publish's confirm runs once the offset of its message is committed (the log's sync policy), in order.
 *
 * <p>Bytes handed over and not yet written are counted: past {@code holdAbove} the stream holds its publishers
 * back until they are under a quarter of it, so publishers on other threads cannot fill the heap faster than the
 * log takes them in.
 *
 * <p>Owned by the stream queue's thread, but for {@link #publish}, {@link #holding} and {@link #hold}, which any
 * thread calls.
 */
final class StreamAppender {
    private static final System.Logger LOG = System.getLogger(StreamAppender.class.getName());

    private final String name;
    private final QueueExecutor executor;
    private final StreamStore store;
    private final QueueCounters counters;
    private final Handoff<Publish> publishes;
    private final PendingConfirms confirms = new PendingConfirms();
    /** A filter value's UTF-8 bytes, written here for the log to hash. */
    private final ByteBuf filterValue = Unpooled.buffer(64);
    private final Runnable commitTask = this::commit;
    private boolean commitAsked;
    /** The log failed: nothing more is written, every publish is refused. */
    private boolean failed;
    /** The stream was deleted or closed: publishes are dropped (confirmed when deleted). */
    private boolean deleted;
    private boolean closed;

    private final long holdAbove;
    private final AtomicLong handedOver = new AtomicLong();
    /** Bytes the batch being drained took off {@link #handedOver}. */
    private long drained;
    private volatile boolean holding;
    private final Queue<Runnable> held = new ConcurrentLinkedQueue<>();

    StreamAppender(String name, QueueExecutor executor, StreamStore store, QueueCounters counters, long holdAbove) {
        this.name = name;
        this.executor = executor;
        this.store = store;
        this.counters = counters;
        this.holdAbove = holdAbove;
        this.publishes = new Handoff<>(executor, this::take, this::batchEnd);
    }

    /** A message on its way to the stream's thread. */
    private record Publish(Message message, PublishConfirm confirm, int size) {
    }

    /** Any thread: see {@link io.skiffmq.core.queue.Queue#publish}. */
    void publish(Message message, PublishConfirm confirm) {
        if (executor.inExecutor()) {
            append(message, confirm);
            commitAfterTurn();
            return;
        }
        if (message instanceof Amqp091Message) {
            try {
                message.toAmqp10(); // converted here, on the publisher's thread, and kept in the message
            } catch (RuntimeException e) {
                refuse(message, confirm, e);
                return;
            }
        }
        int size = message.size();
        if (handedOver.addAndGet(size) > holdAbove && !holding) {
            holding = true;
        }
        publishes.offer(new Publish(message, confirm, size));
    }

    private void take(Publish publish) {
        drained += publish.size;
        append(publish.message, publish.confirm);
    }

    private void batchEnd() {
        commit();
        long left = handedOver.addAndGet(-drained);
        drained = 0;
        if (holding && left < holdAbove / 4) {
            holding = false;
            resumeHeld();
        }
    }

    private void append(Message message, PublishConfirm confirm) {
        if (deleted || closed) {
            message.release();
            if (deleted && confirm != null) {
                confirm.run(); // into a deleted stream: nothing to keep safe
            }
            return;
        }
        if (failed) {
            refuse(message, confirm, null);
            return;
        }
        long offset;
        try {
            Amqp10Message stored = message.toAmqp10();
            ByteBuf filter = filterValue(stored);
            offset = store.add(stored.bytes(), filter);
            if (offset < 0) {
                commit();
                offset = failed ? -1 : store.add(stored.bytes(), filter);
            }
        } catch (RuntimeException e) {
            // a 0-9-1 message whose properties do not decode, or one larger than any chunk
            refuse(message, confirm, e);
            return;
        }
        if (offset < 0) {
            refuse(message, confirm, null);
            return;
        }
        counters.countPublished(message.size());
        if (confirm != null) {
            confirms.add(offset, confirm);
        }
        message.release();
    }

    /** The message's {@code x-stream-filter-value} annotation, as UTF-8 bytes, or null when it has none. */
    private ByteBuf filterValue(Amqp10Message message) {
        Object value;
        try {
            value = message.sections().messageAnnotation(Amqp10Message.X_STREAM_FILTER_VALUE);
        } catch (AmqpDecodeException e) {
            return null;
        }
        if (!(value instanceof String text) || text.isEmpty()) {
            return null;
        }
        filterValue.clear();
        ByteBufUtil.writeUtf8(filterValue, text);
        return filterValue;
    }

    private void refuse(Message message, PublishConfirm confirm, RuntimeException cause) {
        message.release();
        if (cause != null) {
            LOG.log(System.Logger.Level.DEBUG, "stream ''{0}'' refused a message: {1}", name, cause.getMessage());
        }
        if (confirm != null) {
            confirm.refused();
        }
    }

    /** Asks for the chunk being built to be written once the stream's thread is done with this turn. */
    void commitAfterTurn() {
        if (!commitAsked) {
            commitAsked = true;
            executor.afterTurn(commitTask);
        }
    }

    /** Writes the chunk built so far, if anything is in it. */
    void commit() {
        commitAsked = false;
        if (failed || deleted || closed) {
            return;
        }
        try {
            store.commit();
        } catch (RuntimeException e) {
            if (!failed) {
                failed = true;
                LOG.log(System.Logger.Level.ERROR, "stream ''" + name + "'' cannot write: publishes are refused", e);
            }
            confirms.refuseAll();
        }
    }

    /** True once the log failed: nothing more is written. */
    boolean failed() {
        return failed;
    }

    /** The log committed up to {@code offset}: the confirms of the messages up to it run. */
    void committed(long offset) {
        confirms.confirmThrough(offset);
    }

    /** Any thread: see {@link io.skiffmq.core.queue.Queue#holdsPublishers}. */
    boolean holding() {
        return holding;
    }

    /** Any thread: see {@link io.skiffmq.core.queue.Queue#holdPublisher}. */
    boolean hold(Runnable resume) {
        if (!holding) {
            return false;
        }
        held.add(resume);
        if (!holding) {
            resumeHeld(); // released meanwhile: nobody else will run it
        }
        return true;
    }

    private void resumeHeld() {
        Runnable resume;
        while ((resume = held.poll()) != null) {
            resume.run();
        }
    }

    /** The stream was deleted: what waits is confirmed (nothing is left to keep safe), later publishes too. */
    void deleted() {
        deleted = true;
        confirms.confirmAll();
        stopHolding();
    }

    /** The broker is stopping: what waits is neither written nor confirmed. */
    void closed() {
        closed = true;
        confirms.clear();
        stopHolding();
    }

    private void stopHolding() {
        holding = false;
        resumeHeld();
        if (filterValue.refCnt() > 0) {
            filterValue.release();
        }
    }
}
