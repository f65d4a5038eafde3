package io.skiffmq.codec.amqp091;

import io.netty.buffer.ByteBuf;

/**
 * Class {@code channel} (20): opening, flow and closing a channel.
 *
 * <p>Reserved arguments (the old {@code ticket}, {@code capabilities}, {@code insist}, {@code known-hosts},
 * {@code out-of-band}, {@code channel-id}, {@code cluster-id}) are read and dropped, and written as zero or
 * empty. Null strings, byte strings and tables are written empty. Immutable (tables are not copied).
 */
public sealed interface ChannelMethod extends Method {
    /** Class id {@value}. */
    int CLASS_ID = 20;

    @Override
    default int classId() {
        return CLASS_ID;
    }

    /** {@code channel.open} (20, 10). */
    record Open() implements ChannelMethod {
        public static final int METHOD_ID = 10;
        public static final Open INSTANCE = new Open();

        @Override
        public int methodId() {
            return METHOD_ID;
        }

        @Override
        public String name() {
            return "channel.open";
        }

        @Override
        public void writeArguments(ByteBuf out) {
            out.writeByte(0); // outOfBand, reserved
        }

        static Open read(ByteBuf in) throws Amqp091DecodeException {
            Wire.skipShortString(in); // outOfBand, reserved
            return INSTANCE;
        }
    }

    /** {@code channel.open-ok} (20, 11). */
    record OpenOk() implements ChannelMethod {
        public static final int METHOD_ID = 11;
        public static final OpenOk INSTANCE = new OpenOk();

        @Override
        public int methodId() {
            return METHOD_ID;
        }

        @Override
        public String name() {
            return "channel.open-ok";
        }

        @Override
        public void writeArguments(ByteBuf out) {
            out.writeInt(0); // channelId, reserved
        }

        static OpenOk read(ByteBuf in) throws Amqp091DecodeException {
            Wire.skipLongString(in); // channelId, reserved
            return INSTANCE;
        }
    }

    /** {@code channel.flow} (20, 20). */
    record Flow(boolean active) implements ChannelMethod {
        public static final int METHOD_ID = 20;

        @Override
        public int methodId() {
            return METHOD_ID;
        }

        @Override
        public String name() {
            return "channel.flow";
        }

        @Override
        public void writeArguments(ByteBuf out) {
            out.writeByte((active ? 1 : 0));
        }

        static Flow read(ByteBuf in) throws Amqp091DecodeException {
            int bits = Wire.readOctet(in);
            return new Flow((bits & 1) != 0);
        }
    }

    /** {@code channel.flow-ok} (20, 21). */
    record FlowOk(boolean active) implements ChannelMethod {
        public static final int METHOD_ID = 21;

        @Override
        public int methodId() {
            return METHOD_ID;
        }

        @Override
        public String name() {
            return "channel.flow-ok";
        }

        @Override
        public void writeArguments(ByteBuf out) {
            out.writeByte((active ? 1 : 0));
        }

        static FlowOk read(ByteBuf in) throws Amqp091DecodeException {
            int bits = Wire.readOctet(in);
            return new FlowOk((bits & 1) != 0);
        }
    }

    /** {@code channel.close} (20, 40). */
    record Close(int replyCode, String replyText, int causeClassId, int causeMethodId) implements ChannelMethod {
        public static final int METHOD_ID = 40;

        @Override
        public int methodId() {
            return METHOD_ID;
        }

        @Override
        public String name() {
            return "channel.close";
        }

        @Override
        public void writeArguments(ByteBuf out) {
            Wire.writeShort(out, replyCode);
            Wire.writeShortString(out, replyText);
            Wire.writeShort(out, causeClassId);
            Wire.writeShort(out, causeMethodId);
        }

        static Close read(ByteBuf in) throws Amqp091DecodeException {
            int replyCode = Wire.readShort(in);
            String replyText = Wire.readShortString(in);
            int causeClassId = Wire.readShort(in);
            int causeMethodId = Wire.readShort(in);
            return new Close(replyCode, replyText, causeClassId, causeMethodId);
        }
    }

    /** {@code channel.close-ok} (20, 41). */
    record CloseOk() implements ChannelMethod {
        public static final int METHOD_ID = 41;
        public static final CloseOk INSTANCE = new CloseOk();

        @Override
        public int methodId() {
            return METHOD_ID;
        }

        @Override
        public String name() {
            return "channel.close-ok";
        }

        @Override
        public void writeArguments(ByteBuf out) {
        }

        static CloseOk read(ByteBuf in) throws Amqp091DecodeException {
            return INSTANCE;
        }
    }
}
