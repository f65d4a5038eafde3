package io.skiffmq.codec.amqp091;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.CompositeByteBuf;
import io.skiffmq.codec.ByteCopy;

/**
 * Writes whole AMQP 0-9-1 frames [4.2.3]: method, content header, body and heartbeat. Every method appends at
 * the writer index of the {@code out} it is given and neither retains nor releases a buffer unless its
 * documentation says so. Stateless; safe from any thread.
 */
public final class Amqp091FrameWriter {
    private static final int HEADER = Amqp091FrameDecoder.FRAME_HEADER_SIZE;

    private Amqp091FrameWriter() {
    }

    /**
     * A method frame for {@code method} on {@code channel}.
     *
     * @throws IllegalArgumentException as {@link Method#writeArguments} does; {@code out} is then as it was
     */
    public static void writeMethod(ByteBuf out, int channel, Method method) {
        int start = begin(out, Amqp091Frame.TYPE_METHOD, channel);
        try {
            MethodCodec.encode(method, out);
        } catch (RuntimeException e) {
            out.writerIndex(start);
            throw e;
        }
        end(out, start);
    }

    /**
     * A {@code basic.deliver} method frame, as {@link #writeMethod} writes a {@link BasicMethod.Deliver}, without the
     * record: a consumer's every delivery has one.
     *
     * @throws IllegalArgumentException as {@link #writeMethod}; {@code out} is then as it was
     */
    public static void writeDeliver(ByteBuf out, int channel, String consumerTag, long deliveryTag,
            boolean redelivered, String exchange, String routingKey) {
        int start = begin(out, Amqp091Frame.TYPE_METHOD, channel);
        try {
            out.writeShort(BasicMethod.CLASS_ID).writeShort(BasicMethod.Deliver.METHOD_ID);
            BasicMethod.Deliver.writeArguments(out, consumerTag, deliveryTag, redelivered, exchange, routingKey);
        } catch (RuntimeException e) {
            out.writerIndex(start);
            throw e;
        }
        end(out, start);
    }

    /** A content header frame with freshly encoded properties. */
    public static void writeContentHeader(ByteBuf out, int channel, int classId, long bodySize,
            BasicProperties properties) {
        int start = begin(out, Amqp091Frame.TYPE_HEADER, channel);
        out.writeShort(classId).writeShort(0).writeLong(bodySize);
        properties.encode(out);
        end(out, start);
    }

    /**
     * A content header frame with properties already encoded (the publisher's, as kept by
     * {@link ContentHeader#properties()}): their readable bytes are copied, their indexes left alone.
     */
    public static void writeContentHeader(ByteBuf out, int channel, int classId, long bodySize, ByteBuf properties) {
        int start = begin(out, Amqp091Frame.TYPE_HEADER, channel);
        out.writeShort(classId).writeShort(0).writeLong(bodySize);
        ByteCopy.copy(out, properties, properties.readerIndex(), properties.readableBytes());
        end(out, start);
    }

    /**
     * Starts a content header frame whose properties (flags and list) the caller appends next, at {@code out}'s
     * writer index: properties written straight into the frame, without a buffer of their own.
     * {@link #endContentHeader} finishes it.
     *
     * @return where the frame starts, for {@link #endContentHeader}
     */
    public static int beginContentHeader(ByteBuf out, int channel, int classId) {
        int start = begin(out, Amqp091Frame.TYPE_HEADER, channel);
        out.writeShort(classId).writeShort(0).writeLong(0);
        return start;
    }

    /** Finishes the content header frame begun at {@code start}: its body size, its length, its frame-end. */
    public static void endContentHeader(ByteBuf out, int start, long bodySize) {
        out.setLong(start + HEADER + 4, bodySize); // after class-id and weight
        end(out, start);
    }

    /**
     * Body frames carrying the readable bytes of {@code body}, each at most {@code frameMax} bytes long (frame-max
     * counts the whole frame), copied into {@code out}. An empty body takes no frame [4.2.6.2]. {@code body}'s
     * indexes are left alone.
     */
    public static void writeBody(ByteBuf out, int channel, ByteBuf body, int frameMax) {
        writeBody(out, channel, body, body.readerIndex(), body.readableBytes(), frameMax);
    }

    /** As {@link #writeBody(ByteBuf, int, ByteBuf, int)}, of the {@code length} bytes of {@code body} at {@code index}. */
    public static void writeBody(ByteBuf out, int channel, ByteBuf body, int index, int length, int frameMax) {
        int chunk = maxPayload(frameMax);
        for (int at = index, to = index + length; at < to; at += chunk) {
            int size = Math.min(chunk, to - at);
            out.writeByte(Amqp091Frame.TYPE_BODY).writeShort(channel).writeInt(size);
            ByteCopy.copy(out, body, at, size);
            out.writeByte(Amqp091FrameDecoder.FRAME_END);
        }
    }

    /**
     * Body frames as a composite buffer whose payloads are retained slices of {@code body}, so a delivery writes the
     * publisher's bytes to the socket without copying them; only the 8 bytes of framing per frame are new. The
     * caller releases the returned buffer (typically by writing it to the channel) and still owns {@code body}.
     */
    public static ByteBuf bodyFrames(ByteBufAllocator alloc, int channel, ByteBuf body, int frameMax) {
        return bodyFrames(alloc, channel, body, body.readerIndex(), body.readableBytes(), frameMax);
    }

    /**
     * As {@link #bodyFrames(ByteBufAllocator, int, ByteBuf, int)}, of the {@code length} bytes of {@code body} at
     * {@code index}.
     */
    public static ByteBuf bodyFrames(ByteBufAllocator alloc, int channel, ByteBuf body, int index, int length,
            int frameMax) {
        int chunk = maxPayload(frameMax);
        int frames = (length + chunk - 1) / chunk;
        CompositeByteBuf out = alloc.compositeBuffer(Math.max(2, frames * 3));
        try {
            for (int at = index, to = index + length; at < to; at += chunk) {
                int size = Math.min(chunk, to - at);
                ByteBuf header = alloc.buffer(HEADER).writeByte(Amqp091Frame.TYPE_BODY).writeShort(channel)
                    .writeInt(size);
                out.addComponent(true, header);
                out.addComponent(true, body.retainedSlice(at, size));
                out.addComponent(true, alloc.buffer(1).writeByte(Amqp091FrameDecoder.FRAME_END));
            }
            return out;
        } catch (RuntimeException | Error e) {
            out.release();
            throw e;
        }
    }

    /** A heartbeat frame: type 8, channel 0, empty payload [4.2.7]. */
    public static void writeHeartbeat(ByteBuf out) {
        out.writeByte(Amqp091Frame.TYPE_HEARTBEAT).writeShort(0).writeInt(0).writeByte(Amqp091FrameDecoder.FRAME_END);
    }

    private static int maxPayload(int frameMax) {
        if (frameMax < Amqp091FrameDecoder.FRAME_OVERHEAD + 1) {
            throw new IllegalArgumentException("frame-max " + frameMax + " leaves no room for a payload");
        }
        return frameMax - Amqp091FrameDecoder.FRAME_OVERHEAD;
    }

    private static int begin(ByteBuf out, int type, int channel) {
        if (channel < 0 || channel > 0xffff) {
            throw new IllegalArgumentException("channel out of range: " + channel);
        }
        int start = out.writerIndex();
        out.writeByte(type).writeShort(channel).writeInt(0);
        return start;
    }

    private static void end(ByteBuf out, int start) {
        out.setInt(start + 3, out.writerIndex() - start - HEADER);
        out.writeByte(Amqp091FrameDecoder.FRAME_END);
    }
}
