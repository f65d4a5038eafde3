package io.skiffmq.codec.amqp10;

import io.netty.buffer.ByteBuf;
import org.apache.qpid.proton.amqp.transport.DeliveryState;

/**
 * The {@code disposition} performative [2.7.6], decoded and encoded without proton-j and without allocating
 * for the common outcomes. See {@link FastPerformative} for ownership. An absent {@code last} reads as -1
 * (meaning: the same as {@code first}).
 */
public final class DispositionPerformative extends FastPerformative {
    private int role;
    private long first;
    private long last;
    private boolean settled;
    private final DeliveryStateField state = new DeliveryStateField();
    private boolean batchable;

    public DispositionPerformative() {
        super(PerformativeCode.DISPOSITION);
        reset();
    }

    @Override
    public void reset() {
        role = -1;
        first = NONE;
        last = NONE;
        settled = false;
        state.reset();
        batchable = false;
    }

    @Override
    void readField(int field, ByteBuf buf, int index, int end) throws AmqpDecodeException {
        switch (field) {
            case 0 -> role = readTriState(buf, index, end);
            case 1 -> first = TypeReader.readUIntOrNull(buf, index, end);
            case 2 -> last = TypeReader.readUIntOrNull(buf, index, end);
            case 3 -> settled = TypeReader.readBooleanOr(buf, index, end, false);
            case 4 -> state.read(buf, index, end);
            case 5 -> batchable = TypeReader.readBooleanOr(buf, index, end, false);
            default -> {
                // [2.7.6] defines 6 fields; later ones are ignored
            }
        }
    }

    @Override
    void checkMandatory() throws AmqpDecodeException {
        if (role < 0) {
            throw missing("disposition", "role");
        }
        if (first == NONE) {
            throw missing("disposition", "first");
        }
    }

    @Override
    int encodedFieldCount() {
        return batchable ? 6 : state.isSet() ? 5 : settled ? 4 : last >= 0 ? 3 : 2;
    }

    @Override
    int maxEncodedFieldBytes() {
        return 16 + state.maxEncodedBytes();
    }

    @Override
    void writeField(int field, ByteBuf out) {
        switch (field) {
            case 0 -> TypeWriter.writeBoolean(out, role == 1);
            case 1 -> TypeWriter.writeUInt(out, first);
            case 2 -> TypeWriter.writeUIntOrNull(out, last);
            case 3 -> TypeWriter.writeBoolean(out, settled);
            case 4 -> state.write(out);
            default -> TypeWriter.writeBoolean(out, batchable);
        }
    }

    /** True when the sender of the disposition is the receiver of the deliveries [2.8.1]. */
    public boolean receiverRole() {
        return role == 1;
    }

    public DispositionPerformative receiverRole(boolean receiver) {
        this.role = receiver ? 1 : 0;
        return this;
    }

    public long first() {
        return first;
    }

    public DispositionPerformative first(long value) {
        this.first = value;
        return this;
    }

    /** -1 when absent, which means the same as {@link #first()}. */
    public long last() {
        return last;
    }

    public DispositionPerformative last(long value) {
        this.last = value;
        return this;
    }

    public boolean settled() {
        return settled;
    }

    public DispositionPerformative settled(boolean value) {
        this.settled = value;
        return this;
    }

    /** Descriptor code of the state ({@link PerformativeCode#ACCEPTED}…), -1 when absent. */
    public long stateCode() {
        return state.code();
    }

    /** The state, decoded through proton-j on first call; null when absent. */
    public DeliveryState state() throws AmqpDecodeException {
        return state.get();
    }

    public DispositionPerformative state(DeliveryState value) {
        state.set(value);
        return this;
    }

    public boolean batchable() {
        return batchable;
    }

    public DispositionPerformative batchable(boolean value) {
        this.batchable = value;
        return this;
    }
}
