package io.skiffmq.codec.amqp10;

import io.netty.buffer.ByteBuf;
import org.apache.qpid.proton.amqp.transport.DeliveryState;

/**
 * The {@code transfer} performative [2.7.5], decoded and encoded without proton-j and without allocating.
 * See {@link FastPerformative} for ownership. Absent {@code uint}/{@code ubyte} fields read as -1, absent
 * booleans as their default; {@link #settledSet()} tells an absent {@code settled} from false, which matters
 * on continuation frames.
 */
public final class TransferPerformative extends FastPerformative {
    private long handle;
    private long deliveryId;
    private ByteBuf tagBuffer;
    private int tagIndex;
    private int tagLength;
    private long messageFormat;
    private int settled;
    private boolean more;
    private int rcvSettleMode;
    private final DeliveryStateField state = new DeliveryStateField();
    private boolean resume;
    private boolean aborted;
    private boolean batchable;

    public TransferPerformative() {
        super(PerformativeCode.TRANSFER);
        reset();
    }

    @Override
    public void reset() {
        handle = NONE;
        deliveryId = NONE;
        tagBuffer = null;
        tagLength = -1;
        messageFormat = NONE;
        settled = -1;
        more = false;
        rcvSettleMode = -1;
        state.reset();
        resume = false;
        aborted = false;
        batchable = false;
    }

    @Override
    void readField(int field, ByteBuf buf, int index, int end) throws AmqpDecodeException {
        switch (field) {
            case 0 -> handle = TypeReader.readUIntOrNull(buf, index, end);
            case 1 -> deliveryId = TypeReader.readUIntOrNull(buf, index, end);
            case 2 -> {
                int code = TypeReader.formatCode(buf, index, end);
                if (code == FormatCode.VBIN8 || code == FormatCode.VBIN32) {
                    tagBuffer = buf;
                    tagIndex = TypeReader.variableContentStart(buf, index);
                    tagLength = end - tagIndex;
                } else if (code != FormatCode.NULL) {
                    throw TypeReader.typeError("delivery-tag (binary)", code, index);
                }
            }
            case 3 -> messageFormat = TypeReader.readUIntOrNull(buf, index, end);
            case 4 -> settled = readTriState(buf, index, end);
            case 5 -> more = TypeReader.readBooleanOr(buf, index, end, false);
            case 6 -> rcvSettleMode = TypeReader.readUByteOrNull(buf, index, end);
            case 7 -> state.read(buf, index, end);
            case 8 -> resume = TypeReader.readBooleanOr(buf, index, end, false);
            case 9 -> aborted = TypeReader.readBooleanOr(buf, index, end, false);
            case 10 -> batchable = TypeReader.readBooleanOr(buf, index, end, false);
            default -> {
                // [2.7.5] defines 11 fields; later ones are ignored
            }
        }
    }

    @Override
    void checkMandatory() throws AmqpDecodeException {
        if (handle == NONE) {
            throw missing("transfer", "handle");
        }
    }

    @Override
    int encodedFieldCount() {
        if (batchable) {
            return 11;
        }
        if (aborted) {
            return 10;
        }
        if (resume) {
            return 9;
        }
        if (state.isSet()) {
            return 8;
        }
        if (rcvSettleMode >= 0) {
            return 7;
        }
        if (more) {
            return 6;
        }
        if (settled >= 0) {
            return 5;
        }
        return messageFormat >= 0 ? 4 : tagLength >= 0 ? 3 : deliveryId >= 0 ? 2 : 1;
    }

    @Override
    int maxEncodedFieldBytes() {
        return 32 + Math.max(0, tagLength) + state.maxEncodedBytes();
    }

    @Override
    void writeField(int field, ByteBuf out) {
        switch (field) {
            case 0 -> TypeWriter.writeUInt(out, handle);
            case 1 -> TypeWriter.writeUIntOrNull(out, deliveryId);
            case 2 -> {
                if (tagLength < 0) {
                    TypeWriter.writeNull(out);
                } else {
                    TypeWriter.writeBinary(out, tagBuffer, tagIndex, tagLength);
                }
            }
            case 3 -> TypeWriter.writeUIntOrNull(out, messageFormat);
            case 4 -> writeTriState(out, settled);
            case 5 -> TypeWriter.writeBoolean(out, more);
            case 6 -> {
                if (rcvSettleMode < 0) {
                    TypeWriter.writeNull(out);
                } else {
                    TypeWriter.writeUByte(out, rcvSettleMode);
                }
            }
            case 7 -> state.write(out);
            case 8 -> TypeWriter.writeBoolean(out, resume);
            case 9 -> TypeWriter.writeBoolean(out, aborted);
            default -> TypeWriter.writeBoolean(out, batchable);
        }
    }

    public long handle() {
        return handle;
    }

    public TransferPerformative handle(long handle) {
        this.handle = handle;
        return this;
    }

    /** The delivery-id, -1 when absent (allowed on continuation frames). */
    public long deliveryId() {
        return deliveryId;
    }

    public TransferPerformative deliveryId(long deliveryId) {
        this.deliveryId = deliveryId;
        return this;
    }

    /** True when the frame carried a delivery-tag. */
    public boolean hasDeliveryTag() {
        return tagLength >= 0;
    }

    /** Length of the delivery-tag, -1 when absent. */
    public int deliveryTagLength() {
        return tagLength;
    }

    /** The delivery-tag's bytes, copied into {@code dst} (which must have room for {@link #deliveryTagLength()}). */
    public void copyDeliveryTag(byte[] dst) {
        tagBuffer.getBytes(tagIndex, dst, 0, tagLength);
    }

    /** A slice of the frame holding the delivery-tag; valid while the frame is. */
    public ByteBuf deliveryTag() {
        return tagLength < 0 ? null : tagBuffer.slice(tagIndex, tagLength);
    }

    /**
     * Sets the delivery-tag to {@code length} bytes of {@code buf} from {@code index}; they are read when the
     * transfer is encoded, so they must stay valid until then.
     */
    public TransferPerformative deliveryTag(ByteBuf buf, int index, int length) {
        this.tagBuffer = buf;
        this.tagIndex = index;
        this.tagLength = length;
        return this;
    }

    public long messageFormat() {
        return messageFormat;
    }

    public TransferPerformative messageFormat(long messageFormat) {
        this.messageFormat = messageFormat;
        return this;
    }

    /** The settled flag; false when absent. */
    public boolean settled() {
        return settled == 1;
    }

    public boolean settledSet() {
        return settled >= 0;
    }

    public TransferPerformative settled(boolean settled) {
        this.settled = settled ? 1 : 0;
        return this;
    }

    public boolean more() {
        return more;
    }

    public TransferPerformative more(boolean more) {
        this.more = more;
        return this;
    }

    /** rcv-settle-mode (0 first, 1 second), -1 when absent. */
    public int rcvSettleMode() {
        return rcvSettleMode;
    }

    public TransferPerformative rcvSettleMode(int mode) {
        this.rcvSettleMode = mode;
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

    public TransferPerformative state(DeliveryState value) {
        state.set(value);
        return this;
    }

    public boolean resume() {
        return resume;
    }

    public TransferPerformative resume(boolean resume) {
        this.resume = resume;
        return this;
    }

    public boolean aborted() {
        return aborted;
    }

    public TransferPerformative aborted(boolean aborted) {
        this.aborted = aborted;
        return this;
    }

    public boolean batchable() {
        return batchable;
    }

    public TransferPerformative batchable(boolean batchable) {
        this.batchable = batchable;
        return this;
    }
}
