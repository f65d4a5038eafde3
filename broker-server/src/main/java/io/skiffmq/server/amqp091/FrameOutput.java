package io.skiffmq.server.amqp091;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.skiffmq.codec.amqp091.Amqp091FrameWriter;
import io.skiffmq.codec.amqp091.BasicMethod;
import io.skiffmq.codec.amqp091.Method;
import io.skiffmq.core.message.Amqp091Content;
import io.skiffmq.core.message.Message;

/**
 * The one writer of a 0-9-1 connection. Frames are appended to one buffer, which goes to the socket with one write
 * and one flush when the connection's current batch of work is done ({@link #flush}), or sooner once
 * {@link #FLUSH_THRESHOLD} bytes wait: a burst of small deliveries costs one write per 64 KiB, not one per frame.
 * Bodies larger than {@link #COPY_LIMIT} are not copied: their body frames are slices of the publisher's bytes.
 * Owned by the connection's event loop.
 */
final class FrameOutput {
    /** Bodies up to this size are copied into the buffer; larger ones are written as slices. */
    static final int COPY_LIMIT = 4096;
    private static final int BUFFER_SIZE = 16 * 1024;
    /**
     * Past this many bytes appended since the last flush, they are written and flushed: a long batch starts reaching
     * the socket before it ends, and what waits unflushed stays under the channel's write-buffer high-water mark.
     */
    private static final int FLUSH_THRESHOLD = 64 * 1024;

    private final ChannelHandlerContext ctx;
    private final Amqp091Content content = new Amqp091Content();
    private ByteBuf buffer;
    private boolean flushPending;
    /** Bytes written to the channel since the last flush (the buffer's not counted). */
    private int unflushed;
    private int frameMax;

    FrameOutput(ChannelHandlerContext ctx, int frameMax) {
        this.ctx = ctx;
        this.frameMax = frameMax;
    }

    /** The largest frame the peer takes (after {@code tune-ok}); body frames are cut to it. */
    void frameMax(int frameMax) {
        this.frameMax = frameMax;
    }

    void method(int channel, Method method) {
        Amqp091FrameWriter.writeMethod(buffer(), channel, method);
        afterAppend();
    }

    /**
     * A method with content ({@code basic.deliver}, {@code get-ok}, {@code return}): the method, the content header
     * with the message's 0-9-1 properties (as published, or converted straight into the frame: {@link
     * Amqp091Content}), and its body frames. The caller keeps its reference to the message.
     *
     * @throws IllegalStateException when the message cannot be converted to 0-9-1; nothing is written then
     */
    void content(int channel, Method method, Message message) {
        ByteBuf out = buffer();
        int start = out.writerIndex();
        Amqp091FrameWriter.writeMethod(out, channel, method);
        contentFrames(out, start, channel, message);
    }

    /**
     * {@code basic.deliver} and the message's content, as {@link #content} writes them for a {@link
     * BasicMethod.Deliver}, without making the record.
     */
    void deliver(int channel, String consumerTag, long deliveryTag, boolean redelivered, Message message) {
        ByteBuf out = buffer();
        int start = out.writerIndex();
        Amqp091FrameWriter.writeDeliver(out, channel, consumerTag, deliveryTag, redelivered, message.exchange(),
            message.routingKey());
        contentFrames(out, start, channel, message);
    }

    /** The content header and body frames after a method that starts at {@code start}; all of it undone on failure. */
    private void contentFrames(ByteBuf out, int start, int channel, Message message) {
        ByteBuf body;
        int at;
        int size;
        try {
            int header = Amqp091FrameWriter.beginContentHeader(out, channel, BasicMethod.CLASS_ID);
            content.writeProperties(message, out);
            body = content.body();
            at = content.bodyIndex();
            size = content.bodyLength();
            content.clear();
            Amqp091FrameWriter.endContentHeader(out, header, size);
        } catch (RuntimeException e) {
            out.writerIndex(start);
            throw e;
        }
        if (size <= COPY_LIMIT) {
            Amqp091FrameWriter.writeBody(out, channel, body, at, size, frameMax);
            afterAppend();
            return;
        }
        writeBuffer();
        ctx.write(Amqp091FrameWriter.bodyFrames(ctx.alloc(), channel, body, at, size, frameMax), ctx.voidPromise());
        flushPending = true;
        unflushed += size;
        if (unflushed >= FLUSH_THRESHOLD) {
            flush();
        }
    }

    void heartbeat() {
        Amqp091FrameWriter.writeHeartbeat(buffer());
        afterAppend();
    }

    /** Writes and flushes what was appended since the last flush, if anything. */
    void flush() {
        writeBuffer();
        if (flushPending) {
            flushPending = false;
            unflushed = 0;
            ctx.flush();
        }
    }

    /** Drops what was not written (the connection is gone). */
    void discard() {
        if (buffer != null) {
            buffer.release();
            buffer = null;
        }
    }

    boolean isWritable() {
        return ctx.channel().isWritable();
    }

    private ByteBuf buffer() {
        if (buffer == null) {
            buffer = ctx.alloc().ioBuffer(BUFFER_SIZE);
        }
        return buffer;
    }

    private void afterAppend() {
        if (buffer.readableBytes() + unflushed >= FLUSH_THRESHOLD) {
            flush();
        }
    }

    private void writeBuffer() {
        if (buffer != null && buffer.isReadable()) {
            unflushed += buffer.readableBytes();
            ctx.write(buffer, ctx.voidPromise());
            buffer = null;
            flushPending = true;
        }
    }
}
