package io.skiffmq.codec.amqp10;

import io.netty.buffer.ByteBuf;
import org.apache.qpid.proton.ProtonException;
import org.apache.qpid.proton.codec.AMQPDefinedTypes;
import org.apache.qpid.proton.codec.DecodeException;
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
 * or reads past its range, and {@link CompositeShapes#check}, so every described type AMQP defines has its
 * mandatory fields and the field types proton-j casts to. What proton-j still rejects (its
 * {@code DecodeException}, or an {@code IllegalArgumentException} such as a string that is not UTF-8) becomes
 * {@link DecodeFailure#MALFORMED} naming the type. A {@code NullPointerException}, {@code ClassCastException} or
 * index exception from proton-j is never caught as a decode failure: it would mean the checks above missed a
 * case, a bug, and it escapes (proton-j wraps a {@code NullPointerException} in its {@code DecodeException}:
 * that one is unwrapped and escapes too).
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
        String type = CompositeShapes.check(buf, index, end);
        decoder.setBuffer(ReadableBuffer.ByteBufferReader.wrap(buf.nioBuffer(index, end - index)));
        try {
            return decoder.readObject();
        } catch (DecodeException | ProtonException | IllegalArgumentException e) {
            if (e.getCause() instanceof RuntimeException unchecked && !(unchecked instanceof DecodeException)
                    && !(unchecked instanceof ProtonException) && !(unchecked instanceof IllegalArgumentException)) {
                throw new IllegalStateException("proton-j failed on a value our checks passed", unchecked);
            }
            throw AmqpDecodeException.of(DecodeFailure.MALFORMED, "%s at %d: %s", type == null ? "value" : type,
                index, e.getMessage());
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
