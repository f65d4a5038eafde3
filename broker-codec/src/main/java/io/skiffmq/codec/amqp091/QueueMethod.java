package io.skiffmq.codec.amqp091;

import io.netty.buffer.ByteBuf;
import java.util.Map;

/**
 * Class {@code queue} (50): declare, bind, unbind, purge and delete.
 *
 * <p>Reserved arguments (the old {@code ticket}, {@code capabilities}, {@code insist}, {@code known-hosts},
 * {@code out-of-band}, {@code channel-id}, {@code cluster-id}) are read and dropped, and written as zero or
 * empty. Null strings, byte strings and tables are written empty. Immutable (tables are not copied).
 */
public sealed interface QueueMethod extends Method {
    /** Class id {@value}. */
    int CLASS_ID = 50;

    @Override
    default int classId() {
        return CLASS_ID;
    }

    /** {@code queue.declare} (50, 10). */
    record Declare(String queue, boolean passive, boolean durable, boolean exclusive, boolean autoDelete,
            boolean noWait, Map<String, Object> arguments) implements QueueMethod {
        public static final int METHOD_ID = 10;

        @Override
        public int methodId() {
            return METHOD_ID;
        }

        @Override
        public String name() {
            return "queue.declare";
        }

        @Override
        public void writeArguments(ByteBuf out) {
            out.writeShort(0); // ticket, reserved
            Wire.writeShortString(out, queue);
            out.writeByte((passive ? 1 : 0) | (durable ? 2 : 0) | (exclusive ? 4 : 0) | (autoDelete ? 8 : 0) |
                (noWait ? 16 : 0));
            Wire.writeTable(out, arguments);
        }

        static Declare read(ByteBuf in) throws Amqp091DecodeException {
            Wire.readShort(in); // ticket, reserved
            String queue = Wire.readShortString(in);
            int bits = Wire.readOctet(in);
            Map<String, Object> arguments = Wire.readTable(in);
            return new Declare(queue, (bits & 1) != 0, (bits & 2) != 0, (bits & 4) != 0, (bits & 8) != 0,
                (bits & 16) != 0, arguments);
        }
    }

    /** {@code queue.declare-ok} (50, 11). */
    record DeclareOk(String queue, long messageCount, long consumerCount) implements QueueMethod {
        public static final int METHOD_ID = 11;

        @Override
        public int methodId() {
            return METHOD_ID;
        }

        @Override
        public String name() {
            return "queue.declare-ok";
        }

        @Override
        public void writeArguments(ByteBuf out) {
            Wire.writeShortString(out, queue);
            Wire.writeLong(out, messageCount);
            Wire.writeLong(out, consumerCount);
        }

        static DeclareOk read(ByteBuf in) throws Amqp091DecodeException {
            String queue = Wire.readShortString(in);
            long messageCount = Wire.readLong(in);
            long consumerCount = Wire.readLong(in);
            return new DeclareOk(queue, messageCount, consumerCount);
        }
    }

    /** {@code queue.bind} (50, 20). */
    record Bind(String queue, String exchange, String routingKey, boolean noWait, Map<String,
            Object> arguments) implements QueueMethod {
        public static final int METHOD_ID = 20;

        @Override
        public int methodId() {
            return METHOD_ID;
        }

        @Override
        public String name() {
            return "queue.bind";
        }

        @Override
        public void writeArguments(ByteBuf out) {
            out.writeShort(0); // ticket, reserved
            Wire.writeShortString(out, queue);
            Wire.writeShortString(out, exchange);
            Wire.writeShortString(out, routingKey);
            out.writeByte((noWait ? 1 : 0));
            Wire.writeTable(out, arguments);
        }

        static Bind read(ByteBuf in) throws Amqp091DecodeException {
            Wire.readShort(in); // ticket, reserved
            String queue = Wire.readShortString(in);
            String exchange = Wire.readShortString(in);
            String routingKey = Wire.readShortString(in);
            int bits = Wire.readOctet(in);
            Map<String, Object> arguments = Wire.readTable(in);
            return new Bind(queue, exchange, routingKey, (bits & 1) != 0, arguments);
        }
    }

    /** {@code queue.bind-ok} (50, 21). */
    record BindOk() implements QueueMethod {
        public static final int METHOD_ID = 21;
        public static final BindOk INSTANCE = new BindOk();

        @Override
        public int methodId() {
            return METHOD_ID;
        }

        @Override
        public String name() {
            return "queue.bind-ok";
        }

        @Override
        public void writeArguments(ByteBuf out) {
        }

        static BindOk read(ByteBuf in) throws Amqp091DecodeException {
            return INSTANCE;
        }
    }

    /** {@code queue.purge} (50, 30). */
    record Purge(String queue, boolean noWait) implements QueueMethod {
        public static final int METHOD_ID = 30;

        @Override
        public int methodId() {
            return METHOD_ID;
        }

        @Override
        public String name() {
            return "queue.purge";
        }

        @Override
        public void writeArguments(ByteBuf out) {
            out.writeShort(0); // ticket, reserved
            Wire.writeShortString(out, queue);
            out.writeByte((noWait ? 1 : 0));
        }

        static Purge read(ByteBuf in) throws Amqp091DecodeException {
            Wire.readShort(in); // ticket, reserved
            String queue = Wire.readShortString(in);
            int bits = Wire.readOctet(in);
            return new Purge(queue, (bits & 1) != 0);
        }
    }

    /** {@code queue.purge-ok} (50, 31). */
    record PurgeOk(long messageCount) implements QueueMethod {
        public static final int METHOD_ID = 31;

        @Override
        public int methodId() {
            return METHOD_ID;
        }

        @Override
        public String name() {
            return "queue.purge-ok";
        }

        @Override
        public void writeArguments(ByteBuf out) {
            Wire.writeLong(out, messageCount);
        }

        static PurgeOk read(ByteBuf in) throws Amqp091DecodeException {
            long messageCount = Wire.readLong(in);
            return new PurgeOk(messageCount);
        }
    }

    /** {@code queue.delete} (50, 40). */
    record Delete(String queue, boolean ifUnused, boolean ifEmpty, boolean noWait) implements QueueMethod {
        public static final int METHOD_ID = 40;

        @Override
        public int methodId() {
            return METHOD_ID;
        }

        @Override
        public String name() {
            return "queue.delete";
        }

        @Override
        public void writeArguments(ByteBuf out) {
            out.writeShort(0); // ticket, reserved
            Wire.writeShortString(out, queue);
            out.writeByte((ifUnused ? 1 : 0) | (ifEmpty ? 2 : 0) | (noWait ? 4 : 0));
        }

        static Delete read(ByteBuf in) throws Amqp091DecodeException {
            Wire.readShort(in); // ticket, reserved
            String queue = Wire.readShortString(in);
            int bits = Wire.readOctet(in);
            return new Delete(queue, (bits & 1) != 0, (bits & 2) != 0, (bits & 4) != 0);
        }
    }

    /** {@code queue.delete-ok} (50, 41). */
    record DeleteOk(long messageCount) implements QueueMethod {
        public static final int METHOD_ID = 41;

        @Override
        public int methodId() {
            return METHOD_ID;
        }

        @Override
        public String name() {
            return "queue.delete-ok";
        }

        @Override
        public void writeArguments(ByteBuf out) {
            Wire.writeLong(out, messageCount);
        }

        static DeleteOk read(ByteBuf in) throws Amqp091DecodeException {
            long messageCount = Wire.readLong(in);
            return new DeleteOk(messageCount);
        }
    }

    /** {@code queue.unbind} (50, 50). */
    record Unbind(String queue, String exchange, String routingKey, Map<String,
            Object> arguments) implements QueueMethod {
        public static final int METHOD_ID = 50;

        @Override
        public int methodId() {
            return METHOD_ID;
        }

        @Override
        public String name() {
            return "queue.unbind";
        }

        @Override
        public void writeArguments(ByteBuf out) {
            out.writeShort(0); // ticket, reserved
            Wire.writeShortString(out, queue);
            Wire.writeShortString(out, exchange);
            Wire.writeShortString(out, routingKey);
            Wire.writeTable(out, arguments);
        }

        static Unbind read(ByteBuf in) throws Amqp091DecodeException {
            Wire.readShort(in); // ticket, reserved
            String queue = Wire.readShortString(in);
            String exchange = Wire.readShortString(in);
            String routingKey = Wire.readShortString(in);
            Map<String, Object> arguments = Wire.readTable(in);
            return new Unbind(queue, exchange, routingKey, arguments);
        }
    }

    /** {@code queue.unbind-ok} (50, 51). */
    record UnbindOk() implements QueueMethod {
        public static final int METHOD_ID = 51;
        public static final UnbindOk INSTANCE = new UnbindOk();

        @Override
        public int methodId() {
            return METHOD_ID;
        }

        @Override
        public String name() {
            return "queue.unbind-ok";
        }

        @Override
        public void writeArguments(ByteBuf out) {
        }

        static UnbindOk read(ByteBuf in) throws Amqp091DecodeException {
            return INSTANCE;
        }
    }
}
