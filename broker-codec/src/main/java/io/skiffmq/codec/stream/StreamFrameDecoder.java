package io.skiffmq.codec.stream;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.ByteToMessageDecoder;
import java.util.List;
import java.util.Locale;

/**
 * Splits the bytes of a stream protocol connection into frames. Each frame is emitted as a retained slice of the
 * input holding key, version and fields (the size field left out; see {@link StreamFrame}): nothing is copied, and
 * whoever receives a frame releases it once. Everything but the fields is checked on the first 8 bytes, before
 * waiting for the rest:
 *
 * <table>
 *   <caption>Limits and checks</caption>
 *   <tr><th>check</th><th>failure</th></tr>
 *   <tr><td>size &le; frame-max: {@value #DEFAULT_INITIAL_FRAME_MAX} until {@link #frameMax(long)} is called
 *       (RabbitMQ's ceiling before {@code open}), then the tuned value; 0 = no limit, within what a buffer can
 *       hold</td><td>{@link DecodeFailure#FRAME_TOO_LARGE} (closed with 0x0e)</td></tr>
 *   <tr><td>size &ge; {@value StreamFrame#MIN_SIZE}: room for key and version</td>
 *       <td>{@link DecodeFailure#FRAME_TOO_SMALL} (0x0d)</td></tr>
 *   <tr><td>key, version and direction: a command the sending peer may send, in a version RabbitMQ parses
 *       ({@link CommandKey#accepts})</td><td>{@link DecodeFailure#UNKNOWN_COMMAND} (0x0d)</td></tr>
 * </table>
 *
 * <p>Like RabbitMQ, which compares the size field with frame-max ({@code rabbit_stream_core:frame_size_ok}), the
 * limit is on the size field, which leaves out its own 4 bytes. The fields are the command decoders' to check
 * ({@link StreamCodec}, the flyweights).
 *
 * <p>The first failure throws {@link StreamDecodeException} (wrapped by Netty in a {@code DecoderException}); the
 * decoder then discards all further input until the connection closes, as RabbitMQ's parser does after a frame that
 * is too large. Input that arrives once the channel is no longer active is discarded too.
 *
 * <p>Emits one frame per {@code decode} call, so the handler after it sees each frame (and can raise
 * {@link #frameMax(long)} after {@code open}) before the next one is cut. Owned by the channel's event loop.
 */
public final class StreamFrameDecoder extends ByteToMessageDecoder {
    /** RabbitMQ's {@code DEFAULT_INITIAL_FRAME_MAX} ({@code stream.initial_frame_max}): the limit before open. */
    public static final int DEFAULT_INITIAL_FRAME_MAX = 8192;
    /** RabbitMQ's {@code DEFAULT_FRAME_MAX}: what a server proposes in {@code tune} unless configured otherwise. */
    public static final int DEFAULT_FRAME_MAX = 1_048_576;
    /** The largest frame a buffer can hold, whatever frame-max says. */
    static final long MAX_BUFFERABLE = Integer.MAX_VALUE - StreamFrame.SIZE_FIELD;
    /** Size, key and version. */
    private static final int HEADER = StreamFrame.SIZE_FIELD + StreamFrame.MIN_SIZE;

    private enum State { READ_HEADER, READ_BODY, BAD_FRAME }

    private final Peer sender;
    private State state = State.READ_HEADER;
    private long frameMax;
    /** The size field of the frame being read, once its header passed. */
    private int size;

    /**
     * A decoder of the frames {@code sender} sends: {@link Peer#CLIENT} on a server, {@link Peer#SERVER} on a
     * client.
     *
     * @param initialFrameMax the limit on the size field until {@link #frameMax(long)}; 0 for none
     */
    public StreamFrameDecoder(Peer sender, long initialFrameMax) {
        this.sender = sender;
        frameMax(initialFrameMax);
    }

    /** A server's decoder: frames from a client, {@value #DEFAULT_INITIAL_FRAME_MAX} bytes at most until open. */
    public static StreamFrameDecoder server() {
        return new StreamFrameDecoder(Peer.CLIENT, DEFAULT_INITIAL_FRAME_MAX);
    }

    /**
     * Sets frame-max (the largest size field) for the frames after the one being handled: the connection raises
     * it to the tuned value once {@code open} succeeds. 0 means no limit, as in {@code tune}.
     */
    public void frameMax(long frameMax) {
        if (frameMax < 0 || frameMax > 0xffff_ffffL) {
            throw new IllegalArgumentException("frame-max " + frameMax + " is not a uint32");
        }
        this.frameMax = frameMax;
    }

    public long frameMax() {
        return frameMax;
    }

    /** True once a frame failed: the decoder has lost its place in the stream and reads nothing more. */
    public boolean broken() {
        return state == State.BAD_FRAME;
    }

    @Override
    protected void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) throws StreamDecodeException {
        if (state == State.BAD_FRAME || !ctx.channel().isActive()) {
            // after an error or once closing, nothing more is worth decoding
            in.skipBytes(in.readableBytes());
            return;
        }
        try {
            if (state == State.READ_HEADER && !readHeader(in)) {
                return;
            }
            if (in.readableBytes() >= StreamFrame.SIZE_FIELD + size) {
                out.add(in.retainedSlice(in.readerIndex() + StreamFrame.SIZE_FIELD, size));
                in.skipBytes(StreamFrame.SIZE_FIELD + size);
                state = State.READ_HEADER;
            }
        } catch (StreamDecodeException e) {
            state = State.BAD_FRAME;
            in.skipBytes(in.readableBytes());
            throw e;
        }
    }

    /** Checks size, key and version; true once they passed and the body is awaited. */
    private boolean readHeader(ByteBuf in) throws StreamDecodeException {
        int readable = in.readableBytes();
        if (readable < StreamFrame.SIZE_FIELD) {
            return false;
        }
        int index = in.readerIndex();
        long frameSize = in.getUnsignedInt(index);
        if ((frameMax != 0 && frameSize > frameMax) || frameSize > MAX_BUFFERABLE) {
            throw StreamDecodeException.of(DecodeFailure.FRAME_TOO_LARGE, "frame of %d bytes, frame-max %d",
                frameSize, frameMax);
        }
        if (frameSize < StreamFrame.MIN_SIZE) {
            throw StreamDecodeException.of(DecodeFailure.FRAME_TOO_SMALL, "frame of %d bytes, no room for a key",
                frameSize);
        }
        if (readable < HEADER) {
            return false;
        }
        int key = in.getUnsignedShort(index + StreamFrame.SIZE_FIELD);
        int version = in.getUnsignedShort(index + StreamFrame.SIZE_FIELD + 2);
        if (!CommandKey.accepts(sender, key, version)) {
            throw StreamDecodeException.of(DecodeFailure.UNKNOWN_COMMAND, "key 0x%04x, version %d from the %s",
                key, version, sender.name().toLowerCase(Locale.ROOT));
        }
        size = (int) frameSize;
        state = State.READ_BODY;
        return true;
    }
}
