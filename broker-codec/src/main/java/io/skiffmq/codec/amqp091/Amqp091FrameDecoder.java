package io.skiffmq.codec.amqp091;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.ByteToMessageDecoder;
import io.skiffmq.codec.FrameCumulator;
import java.util.List;

/**
 * Splits the bytes of an AMQP 0-9-1 connection, after its protocol header, into {@link Amqp091Frame}s. Payloads
 * are retained slices of the input: nothing is copied. Everything but the frame-end octet is checked on the
 * 7-byte header, before waiting for the payload [4.2.3]:
 *
 * <pre>
 *   0      1         3             7                  7+size
 *   | type | channel |    size     | payload ...      | 0xCE |
 * </pre>
 *
 * <table>
 *   <caption>Limits and checks</caption>
 *   <tr><th>check</th><th>failure</th></tr>
 *   <tr><td>type is method (1), header (2), body (3) or heartbeat (8)</td>
 *       <td>{@link DecodeFailure#UNKNOWN_FRAME_TYPE}</td></tr>
 *   <tr><td>size + 8 &le; frame-max (the initial frame-max, {@value #DEFAULT_FRAME_MAX} unless given, until
 *       {@link #frameMax(int)}), with {@value #FRAME_MAX_SLACK} bytes of slack</td>
 *       <td>{@link DecodeFailure#FRAME_TOO_LARGE}</td></tr>
 *   <tr><td>method payload &ge; 4 bytes, header payload &ge; 12, heartbeat payload empty</td>
 *       <td>{@link DecodeFailure#MALFORMED_FRAME}</td></tr>
 *   <tr><td>heartbeat on channel 0</td><td>{@link DecodeFailure#HEARTBEAT_ON_CHANNEL}</td></tr>
 *   <tr><td>frame-end octet is {@code 0xCE}</td><td>{@link DecodeFailure#BAD_FRAME_END}</td></tr>
 * </table>
 *
 * <p>The first failure throws {@link Amqp091DecodeException} (wrapped by Netty in a {@code DecoderException});
 * the decoder then discards all further input until the connection closes, as does input that arrives once the
 * channel is no longer active.
 *
 * <p>Emits one frame per {@code decode} call, so the handler after it sees each frame (and can change
 * {@link #frameMax(int)} after {@code tune-ok}) before the next one is cut. Owned by the channel's event loop.
 */
public final class Amqp091FrameDecoder extends ByteToMessageDecoder {
    /** Type, channel and size. */
    public static final int FRAME_HEADER_SIZE = 7;
    /** Header and frame-end octet: frame-max counts the whole frame, so a payload may be frame-max - 8. */
    public static final int FRAME_OVERHEAD = 8;
    /** Frame-end octet [4.2.3]. */
    public static final int FRAME_END = 0xCE;
    /**
     * RabbitMQ's {@code frame-min-size} (the spec said 4096; RabbitMQ raised it): its default limit before
     * {@code tune-ok} ({@code initial_frame_max}) and the smallest frame-max a client may ask for.
     */
    public static final int DEFAULT_FRAME_MAX = 8192;
    /** The spec's {@code frame-min-size} [4.2.3]: frames every peer must take, so the lowest initial frame-max. */
    public static final int SPEC_FRAME_MIN_SIZE = 4096;
    /**
     * Bytes a frame may exceed frame-max by. RabbitMQ accepts that much ({@code FRAME_SIZE_FUDGE} in
     * {@code rabbit_reader}) because clients that count frame-max as the payload size, or are off by one, are
     * common; a broker that clients move to from RabbitMQ should not break them.
     */
    public static final int FRAME_MAX_SLACK = 8;

    private enum State { READ_FRAME, BAD_FRAME }

    private State state = State.READ_FRAME;
    private int frameMax;

    /** A decoder accepting frames up to {@value #DEFAULT_FRAME_MAX} bytes until {@link #frameMax(int)} is called. */
    public Amqp091FrameDecoder() {
        this(DEFAULT_FRAME_MAX);
    }

    /**
     * A decoder accepting frames up to {@code initialFrameMax} bytes until {@link #frameMax(int)} is called: the
     * limit on {@code start-ok}, {@code secure-ok} and {@code tune-ok}, before any frame-max is agreed.
     */
    public Amqp091FrameDecoder(int initialFrameMax) {
        if (initialFrameMax < SPEC_FRAME_MIN_SIZE) {
            throw new IllegalArgumentException("initial frame-max " + initialFrameMax + " below "
                + SPEC_FRAME_MIN_SIZE);
        }
        this.frameMax = initialFrameMax;
        setCumulator(FrameCumulator.INSTANCE);
    }

    /**
     * Sets frame-max (whole frames, header and end octet included) for the frames after the one being handled.
     * The protocol's 0, "no limit", is the connection's to translate into its own ceiling before calling this.
     */
    public void frameMax(int frameMax) {
        if (frameMax < DEFAULT_FRAME_MAX) {
            throw new IllegalArgumentException("frame-max " + frameMax + " below " + DEFAULT_FRAME_MAX);
        }
        this.frameMax = frameMax;
    }

    public int frameMax() {
        return frameMax;
    }

    /**
     * True once a frame failed: the decoder has lost its place in the stream and reads nothing more, so the
     * connection cannot read the peer's {@code close-ok} either.
     */
    public boolean broken() {
        return state == State.BAD_FRAME;
    }

    @Override
    protected void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) throws Amqp091DecodeException {
        if (state == State.BAD_FRAME || !ctx.channel().isActive()) {
            // after an error or once closing, nothing more is worth decoding
            in.skipBytes(in.readableBytes());
            return;
        }
        try {
            readFrame(in, out);
        } catch (Amqp091DecodeException e) {
            state = State.BAD_FRAME;
            in.skipBytes(in.readableBytes());
            throw e;
        }
    }

    private void readFrame(ByteBuf in, List<Object> out) throws Amqp091DecodeException {
        if (in.readableBytes() < FRAME_HEADER_SIZE) {
            return;
        }
        int index = in.readerIndex();
        int type = in.getUnsignedByte(index);
        int channel = in.getUnsignedShort(index + 1);
        long size = in.getUnsignedInt(index + 3);
        checkHeader(type, channel, size);
        if (in.readableBytes() < FRAME_HEADER_SIZE + size + 1) {
            return;
        }
        int end = in.getUnsignedByte(index + FRAME_HEADER_SIZE + (int) size);
        if (end != FRAME_END) {
            throw Amqp091DecodeException.of(DecodeFailure.BAD_FRAME_END,
                "type %d, frame end 0x%02x after a %d-byte payload", type, end, size);
        }
        ByteBuf payload = in.retainedSlice(index + FRAME_HEADER_SIZE, (int) size);
        in.skipBytes(FRAME_HEADER_SIZE + (int) size + 1);
        out.add(Amqp091Frame.pooled(type, channel, payload));
    }

    private void checkHeader(int type, int channel, long size) throws Amqp091DecodeException {
        switch (type) {
            case Amqp091Frame.TYPE_METHOD -> minimum(type, size, 4, "method");
            case Amqp091Frame.TYPE_HEADER -> minimum(type, size, ContentHeader.FIXED_SIZE, "content header");
            case Amqp091Frame.TYPE_BODY -> {
            }
            case Amqp091Frame.TYPE_HEARTBEAT -> {
                // [4.2.7] heartbeats are channel 0 only and carry nothing
                if (channel != 0) {
                    throw Amqp091DecodeException.of(DecodeFailure.HEARTBEAT_ON_CHANNEL,
                        "type %d, heartbeat on channel %d", type, channel);
                }
                if (size != 0) {
                    throw Amqp091DecodeException.of(DecodeFailure.MALFORMED_FRAME, "type %d, heartbeat with %d bytes",
                        type, size);
                }
            }
            default -> throw Amqp091DecodeException.of(DecodeFailure.UNKNOWN_FRAME_TYPE, "type %d, unknown frame type",
                type);
        }
        if (size + FRAME_OVERHEAD > (long) frameMax + FRAME_MAX_SLACK) {
            throw Amqp091DecodeException.of(DecodeFailure.FRAME_TOO_LARGE, "type %d, frame of %d bytes, frame-max %d",
                type, size + FRAME_OVERHEAD, frameMax);
        }
    }

    private static void minimum(int type, long size, int minimum, String what) throws Amqp091DecodeException {
        if (size < minimum) {
            throw Amqp091DecodeException.of(DecodeFailure.MALFORMED_FRAME,
                "type %d, %s frame of %d bytes, at least %d needed", type, what, size, minimum);
        }
    }
}
