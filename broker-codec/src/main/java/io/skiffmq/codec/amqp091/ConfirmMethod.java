package io.skiffmq.codec.amqp091;

import io.netty.buffer.ByteBuf;

/**
 * Class {@code confirm} (85): RabbitMQ's publisher confirms.
 *
 * <p>Reserved arguments (the old {@code ticket}, {@code capabilities}, {@code insist}, {@code known-hosts},
 * {@code out-of-band}, {@code channel-id}, {@code cluster-id}) are read and dropped, and written as zero or
 * empty. Null strings, byte strings and tables are written empty. Immutable (tables are not copied).
 */
public sealed interface ConfirmMethod extends Method {
    /** Class id {@value}. */
    int CLASS_ID = 85;

    @Override
    default int classId() {
        return CLASS_ID;
    }

    /** {@code confirm.select} (85, 10). */
    record Select(boolean noWait) implements ConfirmMethod {
        public static final int METHOD_ID = 10;

        @Override
        public int methodId() {
            return METHOD_ID;
        }

        @Override
        public String name() {
            return "confirm.select";
        }

        @Override
        public void writeArguments(ByteBuf out) {
            out.writeByte((noWait ? 1 : 0));
        }

        static Select read(ByteBuf in) throws Amqp091DecodeException {
            int bits = Wire.readOctet(in);
            return new Select((bits & 1) != 0);
        }
    }

    /** {@code confirm.select-ok} (85, 11). */
    record SelectOk() implements ConfirmMethod {
        public static final int METHOD_ID = 11;
        public static final SelectOk INSTANCE = new SelectOk();

        @Override
        public int methodId() {
            return METHOD_ID;
        }

        @Override
        public String name() {
            return "confirm.select-ok";
        }

        @Override
        public void writeArguments(ByteBuf out) {
        }

        static SelectOk read(ByteBuf in) throws Amqp091DecodeException {
            return INSTANCE;
        }
    }
}
