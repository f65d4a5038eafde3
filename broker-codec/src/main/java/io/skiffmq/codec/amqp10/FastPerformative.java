package io.skiffmq.codec.amqp10;

import io.netty.buffer.ByteBuf;

/**
 * Shared decoding and encoding for the performatives sent once or more per message (transfer, flow,
 * disposition), read and written by hand instead of through proton-j: decoding fills primitive fields of a
 * reused object and allocates nothing; encoding writes the smallest encoding of each field and omits trailing
 * nulls.
 *
 * <p>One instance per connection, used only on that connection's event loop. After {@link #decode} the
 * object describes that frame until the next call; references into the frame (delivery tag, state,
 * properties) are valid while the frame's buffer is.
 */
abstract sealed class FastPerformative permits TransferPerformative, FlowPerformative, DispositionPerformative {
    /** Marks an absent {@code uint} or {@code ubyte} field. */
    static final long NONE = -1;

    private final int descriptor;

    FastPerformative(int descriptor) {
        this.descriptor = descriptor;
    }

    /**
     * Decodes the performative at {@code body}'s reader index and moves the reader index past it, to the
     * payload if there is one. Does not change the reference count.
     */
    public final void decode(ByteBuf body) throws AmqpDecodeException {
        int index = body.readerIndex();
        int limit = body.writerIndex();
        long code = Descriptor.code(body, index, limit, PerformativeCode.FAST_SYMBOLS);
        if (code != descriptor) {
            throw AmqpDecodeException.of(DecodeFailure.UNKNOWN_DESCRIPTOR, "expected performative 0x%02x, found 0x%02x",
                descriptor, code);
        }
        int list = Descriptor.end(body, index, limit);
        int count = TypeReader.listCount(body, list, limit);
        int end = TypeReader.valueEnd(body, list, limit);
        int position = TypeReader.compoundContentStart(body, list);
        reset();
        for (int field = 0; field < count; field++) {
            int next = TypeReader.valueEnd(body, position, end);
            readField(field, body, position, next);
            position = next;
        }
        checkMandatory();
        body.readerIndex(end);
    }

    /** Appends the performative (descriptor and list, without frame header). */
    public final void encode(ByteBuf out) {
        TypeWriter.writeDescriptor(out, descriptor);
        int count = encodedFieldCount();
        if (count == 0) {
            out.writeByte(FormatCode.LIST0);
            return;
        }
        int list = TypeWriter.beginCompound(out, false, maxEncodedFieldBytes());
        for (int field = 0; field < count; field++) {
            writeField(field, out);
        }
        TypeWriter.endCompound(out, list, count);
    }

    /** Clears every field to its absent value. */
    public abstract void reset();

    /** Decodes field {@code field} occupying {@code [index, end)} of {@code buf}. */
    abstract void readField(int field, ByteBuf buf, int index, int end) throws AmqpDecodeException;

    abstract void checkMandatory() throws AmqpDecodeException;

    /** Fields to write: one past the last field that is not null. */
    abstract int encodedFieldCount();

    /** Upper bound of the bytes the fields take, to choose list8 or list32. */
    abstract int maxEncodedFieldBytes();

    abstract void writeField(int field, ByteBuf out);

    static AmqpDecodeException missing(String performative, String field) {
        return AmqpDecodeException.of(DecodeFailure.MISSING_FIELD, "%s without %s", performative, field);
    }

    /** Reads a boolean field that may be null as -1 (null), 0 or 1. */
    static int readTriState(ByteBuf buf, int index, int end) throws AmqpDecodeException {
        return TypeReader.isNull(buf, index, end) ? -1 : TypeReader.readBooleanOr(buf, index, end, false) ? 1 : 0;
    }

    static void writeTriState(ByteBuf out, int value) {
        if (value < 0) {
            TypeWriter.writeNull(out);
        } else {
            TypeWriter.writeBoolean(out, value == 1);
        }
    }
}
