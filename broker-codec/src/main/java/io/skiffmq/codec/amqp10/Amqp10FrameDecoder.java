package io.skiffmq.codec.amqp10;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.ByteToMessageDecoder;
import io.skiffmq.codec.FrameCumulator;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;

/**
 * Splits the bytes of an AMQP 1.0 connection into {@link ProtocolHeader}s and {@link AmqpFrame}s. Frame bodies
 * are retained slices of the input: nothing is copied.
 *
 * <p>Accepted input, in order: one protocol header from the set given to the constructor; if it was
 * {@code SASL}, SASL frames and then an {@code AMQP} header; then AMQP frames. Which header is acceptable
 * at which point of the SASL exchange is the connection's business; this decoder only keeps SASL and AMQP
 * frames apart. Everything is checked on the 8-byte frame header before waiting for the body [2.3.1]:
 *
 * <table>
 *   <caption>Limits</caption>
 *   <tr><th>limit</th><th>default</th><th>failure</th></tr>
 *   <tr><td>frame size before {@code open} negotiates one</td><td>{@value #DEFAULT_INITIAL_MAX_FRAME_SIZE}</td>
 *       <td>{@link DecodeFailure#FRAME_SIZE}</td></tr>
 *   <tr><td>negotiated frame size ({@link #maxFrameSize(int)})</td><td>-</td><td>{@link DecodeFailure#FRAME_SIZE}</td></tr>
 * </table>
 *
 * <p>The first failure throws {@link AmqpDecodeException} (wrapped by Netty in a {@code DecoderException});
 * the decoder then discards all further input until the connection closes. Input that arrives once the
 * channel is no longer active is discarded too.
 *
 * <p>Emits one message per {@code decode} call, so the handler after it sees each frame (and can change
 * {@link #maxFrameSize(int)}) before the next one is cut. Owned by the channel's event loop.
 */
public final class Amqp10FrameDecoder extends ByteToMessageDecoder {
    /** [2.7.1] MIN-MAX-FRAME-SIZE: every peer must accept frames this large. */
    public static final int MIN_MAX_FRAME_SIZE = 512;
    /**
     * Frame limit before {@code open}. The spec's 512 is a floor peers must accept, not a ceiling we must
     * enforce; clients with large {@code open} properties exceed it, so we allow more, but bounded.
     */
    public static final int DEFAULT_INITIAL_MAX_FRAME_SIZE = 4096;
    /** Frame header: size (4), doff (1), type (1), type-specific (2) [2.3.1]. */
    public static final int FRAME_HEADER_SIZE = 8;

    private enum State { READ_PROTOCOL_HEADER, READ_FRAME, BAD_FRAME }

    private final Set<ProtocolHeader> firstHeaders;
    private State state = State.READ_PROTOCOL_HEADER;
    private ProtocolHeader lastHeader;
    private int maxFrameSize;

    /**
     * @param firstHeaders the protocol headers a client may open with (typically {@code SASL}, and {@code AMQP}
     *        when unauthenticated connections are allowed); {@code TLS} is never handled here
     * @param initialMaxFrameSize the frame size limit until {@link #maxFrameSize(int)} is called
     */
    public Amqp10FrameDecoder(Set<ProtocolHeader> firstHeaders, int initialMaxFrameSize) {
        if (initialMaxFrameSize < MIN_MAX_FRAME_SIZE) {
            throw new IllegalArgumentException("initial max frame size below " + MIN_MAX_FRAME_SIZE);
        }
        this.firstHeaders = EnumSet.copyOf(firstHeaders);
        this.firstHeaders.remove(ProtocolHeader.TLS);
        this.maxFrameSize = initialMaxFrameSize;
        setCumulator(FrameCumulator.INSTANCE);
    }

    /** Sets the frame size limit for the frames after the one being handled (after {@code open}). */
    public void maxFrameSize(int maxFrameSize) {
        if (maxFrameSize < MIN_MAX_FRAME_SIZE) {
            throw new IllegalArgumentException("max frame size below " + MIN_MAX_FRAME_SIZE);
        }
        this.maxFrameSize = maxFrameSize;
    }

    public int maxFrameSize() {
        return maxFrameSize;
    }

    @Override
    protected void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) throws AmqpDecodeException {
        if (!ctx.channel().isActive()) {
            // closing (after an error found further up the pipeline): nothing more is worth decoding
            in.skipBytes(in.readableBytes());
            return;
        }
        try {
            switch (state) {
                case READ_PROTOCOL_HEADER -> readProtocolHeader(in, out);
                case READ_FRAME -> readFrame(in, out);
                default -> in.skipBytes(in.readableBytes());
            }
        } catch (AmqpDecodeException e) {
            state = State.BAD_FRAME;
            in.skipBytes(in.readableBytes());
            throw e;
        }
    }

    private void readProtocolHeader(ByteBuf in, List<Object> out) throws AmqpDecodeException {
        if (in.readableBytes() < ProtocolHeader.LENGTH) {
            // a peer speaking something else entirely may never send 8 bytes: fail as soon as we can tell
            for (int i = 0; i < Math.min(4, in.readableBytes()); i++) {
                if (in.getByte(in.readerIndex() + i) != "AMQP".charAt(i)) {
                    throw AmqpDecodeException.of(DecodeFailure.BAD_PROTOCOL_HEADER, "expected AMQP, got byte 0x%02x",
                        in.getByte(in.readerIndex() + i));
                }
            }
            return;
        }
        ProtocolHeader header = ProtocolHeader.read(in, in.readerIndex());
        boolean acceptable = lastHeader == null ? firstHeaders.contains(header)
            : lastHeader == ProtocolHeader.SASL && header == ProtocolHeader.AMQP;
        if (!acceptable) {
            throw AmqpDecodeException.of(DecodeFailure.UNSUPPORTED_PROTOCOL, "%s header %s", header,
                lastHeader == null ? "not accepted on this listener" : "after " + lastHeader);
        }
        in.skipBytes(ProtocolHeader.LENGTH);
        lastHeader = header;
        state = State.READ_FRAME;
        out.add(header);
    }

    private void readFrame(ByteBuf in, List<Object> out) throws AmqpDecodeException {
        int index = in.readerIndex();
        if (lastHeader == ProtocolHeader.SASL && ProtocolHeader.startsAt(in, index)) {
            // "AMQP" read as a size is over 1 GB, so a header after SASL frames is unambiguous [5.3.2]
            state = State.READ_PROTOCOL_HEADER;
            readProtocolHeader(in, out);
            return;
        }
        if (in.readableBytes() < FRAME_HEADER_SIZE) {
            return;
        }
        long size = in.getUnsignedInt(index);
        // [2.3.1] "The frame is malformed if the size is less than the size of the frame header (8 bytes)."
        if (size < FRAME_HEADER_SIZE || size > maxFrameSize) {
            throw AmqpDecodeException.of(DecodeFailure.FRAME_SIZE, "frame size %d outside [8, %d]", size, maxFrameSize);
        }
        // [2.3.1] "The frame is malformed if the value of DOFF is less than 2 or greater than SIZE / 4."
        int doff = in.getUnsignedByte(index + 4);
        if (doff < 2 || doff * 4L > size) {
            throw AmqpDecodeException.of(DecodeFailure.BAD_DOFF, "data offset %d in a frame of %d bytes", doff, size);
        }
        int type = in.getUnsignedByte(index + 5);
        int expected = lastHeader == ProtocolHeader.SASL ? AmqpFrame.TYPE_SASL : AmqpFrame.TYPE_AMQP;
        if (type != expected) {
            throw AmqpDecodeException.of(DecodeFailure.BAD_FRAME_TYPE, "frame type %d after the %s header", type,
                lastHeader);
        }
        if (in.readableBytes() < size) {
            return;
        }
        int channel = in.getUnsignedShort(index + 6);
        int bodyOffset = doff * 4;
        ByteBuf body = in.retainedSlice(index + bodyOffset, (int) size - bodyOffset);
        in.skipBytes((int) size);
        out.add(AmqpFrame.pooled(type, channel, body));
    }
}
