package io.skiffmq.codec.amqp10;

import io.netty.buffer.ByteBuf;
import java.util.Map;

/**
 * The {@code flow} performative [2.7.4], decoded and encoded without proton-j and without allocating.
 * See {@link FastPerformative} for ownership. Absent {@code uint} fields read as -1. The rarely used
 * {@code properties} map is decoded through proton-j when asked for.
 */
public final class FlowPerformative extends FastPerformative {
    private long nextIncomingId;
    private long incomingWindow;
    private long nextOutgoingId;
    private long outgoingWindow;
    private long handle;
    private long deliveryCount;
    private long linkCredit;
    private long available;
    private boolean drain;
    private boolean echo;
    private ByteBuf propertiesBuffer;
    private int propertiesIndex;
    private int propertiesEnd;
    private Map<?, ?> properties;

    public FlowPerformative() {
        super(PerformativeCode.FLOW);
        reset();
    }

    @Override
    public void reset() {
        nextIncomingId = NONE;
        incomingWindow = NONE;
        nextOutgoingId = NONE;
        outgoingWindow = NONE;
        handle = NONE;
        deliveryCount = NONE;
        linkCredit = NONE;
        available = NONE;
        drain = false;
        echo = false;
        propertiesBuffer = null;
        properties = null;
    }

    @Override
    void readField(int field, ByteBuf buf, int index, int end) throws AmqpDecodeException {
        switch (field) {
            case 0 -> nextIncomingId = TypeReader.readUIntOrNull(buf, index, end);
            case 1 -> incomingWindow = TypeReader.readUIntOrNull(buf, index, end);
            case 2 -> nextOutgoingId = TypeReader.readUIntOrNull(buf, index, end);
            case 3 -> outgoingWindow = TypeReader.readUIntOrNull(buf, index, end);
            case 4 -> handle = TypeReader.readUIntOrNull(buf, index, end);
            case 5 -> deliveryCount = TypeReader.readUIntOrNull(buf, index, end);
            case 6 -> linkCredit = TypeReader.readUIntOrNull(buf, index, end);
            case 7 -> available = TypeReader.readUIntOrNull(buf, index, end);
            case 8 -> drain = TypeReader.readBooleanOr(buf, index, end, false);
            case 9 -> echo = TypeReader.readBooleanOr(buf, index, end, false);
            case 10 -> {
                int code = TypeReader.formatCode(buf, index, end);
                if (FormatCode.isMap(code)) {
                    propertiesBuffer = buf;
                    propertiesIndex = index;
                    propertiesEnd = end;
                } else if (code != FormatCode.NULL) {
                    throw TypeReader.typeError("properties (map)", code, index);
                }
            }
            default -> {
                // [2.7.4] defines 11 fields; later ones are ignored
            }
        }
    }

    @Override
    void checkMandatory() throws AmqpDecodeException {
        if (incomingWindow == NONE) {
            throw missing("flow", "incoming-window");
        }
        if (nextOutgoingId == NONE) {
            throw missing("flow", "next-outgoing-id");
        }
        if (outgoingWindow == NONE) {
            throw missing("flow", "outgoing-window");
        }
    }

    @Override
    int encodedFieldCount() {
        if (properties != null || propertiesBuffer != null) {
            return 11;
        }
        if (echo) {
            return 10;
        }
        if (drain) {
            return 9;
        }
        if (available >= 0) {
            return 8;
        }
        if (linkCredit >= 0) {
            return 7;
        }
        if (deliveryCount >= 0) {
            return 6;
        }
        if (handle >= 0) {
            return 5;
        }
        return 4;
    }

    @Override
    int maxEncodedFieldBytes() {
        return properties != null ? 1024 : 64 + (propertiesBuffer == null ? 0 : propertiesEnd - propertiesIndex);
    }

    @Override
    void writeField(int field, ByteBuf out) {
        switch (field) {
            case 0 -> TypeWriter.writeUIntOrNull(out, nextIncomingId);
            case 1 -> TypeWriter.writeUInt(out, incomingWindow);
            case 2 -> TypeWriter.writeUInt(out, nextOutgoingId);
            case 3 -> TypeWriter.writeUInt(out, outgoingWindow);
            case 4 -> TypeWriter.writeUIntOrNull(out, handle);
            case 5 -> TypeWriter.writeUIntOrNull(out, deliveryCount);
            case 6 -> TypeWriter.writeUIntOrNull(out, linkCredit);
            case 7 -> TypeWriter.writeUIntOrNull(out, available);
            case 8 -> TypeWriter.writeBoolean(out, drain);
            case 9 -> TypeWriter.writeBoolean(out, echo);
            default -> {
                if (properties != null) {
                    ProtonCodec.current().encode(properties, out);
                } else {
                    out.writeBytes(propertiesBuffer, propertiesIndex, propertiesEnd - propertiesIndex);
                }
            }
        }
    }

    /** -1 when absent (the sender has not yet received begin). */
    public long nextIncomingId() {
        return nextIncomingId;
    }

    public FlowPerformative nextIncomingId(long value) {
        this.nextIncomingId = value;
        return this;
    }

    public long incomingWindow() {
        return incomingWindow;
    }

    public FlowPerformative incomingWindow(long value) {
        this.incomingWindow = value;
        return this;
    }

    public long nextOutgoingId() {
        return nextOutgoingId;
    }

    public FlowPerformative nextOutgoingId(long value) {
        this.nextOutgoingId = value;
        return this;
    }

    public long outgoingWindow() {
        return outgoingWindow;
    }

    public FlowPerformative outgoingWindow(long value) {
        this.outgoingWindow = value;
        return this;
    }

    /** -1 for a session-only flow. */
    public long handle() {
        return handle;
    }

    public FlowPerformative handle(long value) {
        this.handle = value;
        return this;
    }

    public long deliveryCount() {
        return deliveryCount;
    }

    public FlowPerformative deliveryCount(long value) {
        this.deliveryCount = value;
        return this;
    }

    public long linkCredit() {
        return linkCredit;
    }

    public FlowPerformative linkCredit(long value) {
        this.linkCredit = value;
        return this;
    }

    public long available() {
        return available;
    }

    public FlowPerformative available(long value) {
        this.available = value;
        return this;
    }

    public boolean drain() {
        return drain;
    }

    public FlowPerformative drain(boolean value) {
        this.drain = value;
        return this;
    }

    public boolean echo() {
        return echo;
    }

    public FlowPerformative echo(boolean value) {
        this.echo = value;
        return this;
    }

    /** The properties map, decoded through proton-j on first call; null when absent. */
    public Map<?, ?> properties() throws AmqpDecodeException {
        if (properties == null && propertiesBuffer != null) {
            properties = (Map<?, ?>) ProtonCodec.current().decode(propertiesBuffer, propertiesIndex, propertiesEnd);
        }
        return properties;
    }

    public FlowPerformative properties(Map<?, ?> value) {
        this.properties = value;
        this.propertiesBuffer = null;
        return this;
    }
}
