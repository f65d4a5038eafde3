package io.skiffmq.codec.amqp10;

import io.netty.buffer.ByteBuf;
import org.apache.qpid.proton.amqp.security.SaslFrameBody;
import org.apache.qpid.proton.amqp.transport.FrameBody;

/**
 * Decodes and encodes frame bodies. {@code transfer}, {@code flow} and {@code disposition} go through the
 * reusable {@link FastPerformative}s this codec owns; every other performative and SASL frame through proton-j,
 * after {@link TypeReader#validate} has checked it.
 *
 * <p>One per connection, used on its event loop only: the fast performatives it returns are overwritten by
 * the next {@link #decode}.
 */
public final class PerformativeCodec {
    private static final int EMPTY_FRAME_HIGH = 0x00000008;
    private static final int EMPTY_FRAME_LOW = 0x02000000;

    private final TransferPerformative transfer = new TransferPerformative();
    private final FlowPerformative flow = new FlowPerformative();
    private final DispositionPerformative disposition = new DispositionPerformative();

    /**
     * The performative at the start of an AMQP frame body: this codec's {@link TransferPerformative},
     * {@link FlowPerformative} or {@link DispositionPerformative}, or a proton-j {@link FrameBody}. Moves
     * {@code body}'s reader index past the performative, so a transfer's payload is what remains readable.
     * Does not change the reference count.
     */
    public Object decode(ByteBuf body) throws AmqpDecodeException {
        long code = Descriptor.code(body, body.readerIndex(), body.writerIndex(), PerformativeCode.FAST_SYMBOLS);
        if (code == PerformativeCode.TRANSFER) {
            transfer.decode(body);
            return transfer;
        }
        if (code == PerformativeCode.FLOW) {
            flow.decode(body);
            return flow;
        }
        if (code == PerformativeCode.DISPOSITION) {
            disposition.decode(body);
            return disposition;
        }
        FrameBody performative = decodeWithProton(body, FrameBody.class, "performative");
        requireNoPayload(body);
        return performative;
    }

    /** The SASL frame body in {@code body} [5.3.3]; consumes all of it. */
    public SaslFrameBody decodeSasl(ByteBuf body) throws AmqpDecodeException {
        SaslFrameBody sasl = decodeWithProton(body, SaslFrameBody.class, "SASL frame");
        requireNoPayload(body);
        return sasl;
    }

    private static <T> T decodeWithProton(ByteBuf body, Class<T> type, String what) throws AmqpDecodeException {
        int index = body.readerIndex();
        int end = TypeReader.valueEnd(body, index, body.writerIndex());
        Object decoded = ProtonCodec.current().decode(body, index, end);
        if (!type.isInstance(decoded)) {
            throw AmqpDecodeException.of(DecodeFailure.UNKNOWN_DESCRIPTOR, "expected a %s, found %s", what,
                decoded == null ? "null" : decoded.getClass().getSimpleName());
        }
        body.readerIndex(end);
        return type.cast(decoded);
    }

    private static void requireNoPayload(ByteBuf body) throws AmqpDecodeException {
        if (body.isReadable()) {
            throw AmqpDecodeException.of(DecodeFailure.TRAILING_BYTES, "%d bytes after a performative that has no payload",
                body.readableBytes());
        }
    }

    /** A transfer to fill in and {@link #writeFrame} (the same object {@link #decode} returns). */
    public TransferPerformative transfer() {
        transfer.reset();
        return transfer;
    }

    public FlowPerformative flow() {
        flow.reset();
        return flow;
    }

    public DispositionPerformative disposition() {
        disposition.reset();
        return disposition;
    }

    /**
     * Appends a frame header and {@code performative} (a {@link FastPerformative}, a proton-j {@link FrameBody} or
     * {@link SaslFrameBody}); the frame's size counts {@code payloadLength} more bytes, which the caller writes
     * next (into {@code out} or as a separate buffer).
     *
     * @param type {@link AmqpFrame#TYPE_AMQP} or {@link AmqpFrame#TYPE_SASL}
     * @return the number of bytes written to {@code out}
     */
    public static int writeFrame(ByteBuf out, int type, int channel, Object performative, int payloadLength) {
        int start = out.writerIndex();
        out.writeInt(0);
        out.writeByte(2);
        out.writeByte(type);
        out.writeShort(channel);
        if (performative instanceof FastPerformative fast) {
            fast.encode(out);
        } else if (performative instanceof FrameBody || performative instanceof SaslFrameBody) {
            ProtonCodec.current().encode(performative, out);
        } else {
            throw new IllegalArgumentException("not a performative: " + performative);
        }
        int written = out.writerIndex() - start;
        out.setInt(start, written + payloadLength);
        return written;
    }

    /** Appends an empty frame (a heartbeat [2.4.5]). */
    public static void writeEmptyFrame(ByteBuf out) {
        out.writeInt(EMPTY_FRAME_HIGH);
        out.writeInt(EMPTY_FRAME_LOW);
    }
}
