package io.skiffmq.codec.amqp10;

import io.netty.buffer.ByteBuf;
import org.apache.qpid.proton.codec.AMQPDefinedTypes;
import org.apache.qpid.proton.codec.DecoderImpl;
import org.apache.qpid.proton.codec.EncoderImpl;
import org.apache.qpid.proton.codec.ReadableBuffer;

/**
 * proton-j's type codec for the values we do not decode by hand: performatives other than transfer, flow
 * and disposition, SASL frames, delivery states with fields, and compound or described values inside
 * properties and annotations.
 *
 * <p>proton-j's decoder and encoder are not thread-safe and each costs a few KB of type tables, so there is
 * one pair per thread (in the broker: per event loop), not per connection. Everything handed to proton-j has
 * passed {@link TypeReader#validate} first, so it never recurses deeper than {@link TypeReader#MAX_NESTING}
 * or reads past its range; whatever it still rejects becomes {@link DecodeFailure#MALFORMED}.
 */
public final class ProtonCodec {
    private static final ThreadLocal<ProtonCodec> CURRENT = ThreadLocal.withInitial(ProtonCodec::new);

    private final DecoderImpl decoder = new DecoderImpl();
    private final EncoderImpl encoder = new EncoderImpl(decoder);
    private final ByteBufWritableBuffer output = new ByteBufWritableBuffer();

    private ProtonCodec() {
        AMQPDefinedTypes.registerAllTypes(decoder, encoder);
    }

    /** The calling thread's codec. */
    public static ProtonCodec current() {
        return CURRENT.get();
    }

    /**
     * Decodes the single value that occupies exactly {@code [index, end)} of {@code buf}. Does not change the
     * buffer's indexes or reference count.
     */
    public Object decode(ByteBuf buf, int index, int end) throws AmqpDecodeException {
        int valueEnd = TypeReader.validate(buf, index, end);
        if (valueEnd != end) {
            throw AmqpDecodeException.of(DecodeFailure.TRAILING_BYTES, "%d bytes after the value at %d",
                end - valueEnd, index);
        }
        decoder.setBuffer(ReadableBuffer.ByteBufferReader.wrap(buf.nioBuffer(index, end - index)));
        try {
            return decoder.readObject();
        } catch (RuntimeException e) {
            throw AmqpDecodeException.of(DecodeFailure.MALFORMED, "value at %d: %s", index, e.getMessage());
        } finally {
            decoder.setBuffer(null);
        }
    }

    /** Appends the AMQP encoding of {@code value} at {@code out}'s writer index. */
    public void encode(Object value, ByteBuf out) {
        encoder.setByteBuffer(output.wrap(out));
        try {
            encoder.writeObject(value);
        } finally {
            encoder.setByteBuffer((org.apache.qpid.proton.codec.WritableBuffer) null);
            output.wrap(null);
        }
    }
}
