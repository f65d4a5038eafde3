package io.skiffmq.codec.amqp10;

import io.netty.buffer.ByteBuf;
import org.apache.qpid.proton.amqp.messaging.Accepted;
import org.apache.qpid.proton.amqp.messaging.Released;
import org.apache.qpid.proton.amqp.transport.DeliveryState;

/**
 * The {@code state} field of a transfer or disposition. The descriptor code is read eagerly (accepted and
 * released, the common outcomes, need nothing more); the state object (rejected with its error, modified with
 * its annotations…) is decoded through proton-j only when asked for. Owned by its performative.
 */
final class DeliveryStateField {
    private static final Descriptor.SymbolTable SYMBOLS = Descriptor.symbols(PerformativeCode.RECEIVED,
        "amqp:received:list", "amqp:accepted:list", "amqp:rejected:list", "amqp:released:list", "amqp:modified:list");

    private long code = FastPerformative.NONE;
    private ByteBuf source;
    private int index;
    private int end;
    private DeliveryState value;

    void reset() {
        code = FastPerformative.NONE;
        source = null;
        value = null;
    }

    void read(ByteBuf buf, int index, int end) throws AmqpDecodeException {
        if (TypeReader.isNull(buf, index, end)) {
            reset();
            return;
        }
        this.code = Descriptor.code(buf, index, end, SYMBOLS);
        this.source = buf;
        this.index = index;
        this.end = end;
        this.value = null;
    }

    /** The state's descriptor code ({@link PerformativeCode#ACCEPTED}…), -1 when absent or not AMQP-defined. */
    long code() {
        return code;
    }

    boolean isSet() {
        return code != FastPerformative.NONE || value != null || source != null;
    }

    DeliveryState get() throws AmqpDecodeException {
        if (value == null && source != null) {
            Object decoded = ProtonCodec.current().decode(source, index, end);
            if (!(decoded instanceof DeliveryState state)) {
                throw AmqpDecodeException.of(DecodeFailure.UNEXPECTED_TYPE, "delivery state at %d is a %s", index,
                    decoded == null ? "null" : decoded.getClass().getSimpleName());
            }
            value = state;
        }
        return value;
    }

    void set(DeliveryState state) {
        reset();
        value = state;
        if (state instanceof Accepted) {
            code = PerformativeCode.ACCEPTED;
        } else if (state instanceof Released) {
            code = PerformativeCode.RELEASED;
        }
    }

    int maxEncodedBytes() {
        if (source != null && value == null) {
            return end - index;
        }
        return code == PerformativeCode.ACCEPTED || code == PerformativeCode.RELEASED ? 4 : 256;
    }

    void write(ByteBuf out) {
        if (code == PerformativeCode.ACCEPTED || code == PerformativeCode.RELEASED) {
            TypeWriter.writeDescriptor(out, (int) code);
            out.writeByte(FormatCode.LIST0);
        } else if (value != null) {
            ProtonCodec.current().encode(value, out);
        } else if (source != null) {
            out.writeBytes(source, index, end - index);
        } else {
            TypeWriter.writeNull(out);
        }
    }
}
