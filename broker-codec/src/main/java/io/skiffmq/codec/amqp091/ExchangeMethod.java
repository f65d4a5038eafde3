package io.skiffmq.codec.amqp091;

import io.netty.buffer.ByteBuf;
import java.util.Map;

/**
 * Class {@code exchange} (40): declare and delete, and RabbitMQ's exchange-to-exchange bind/unbind.
 *
 * <p>Reserved arguments (the old {@code ticket}, {@code capabilities}, {@code insist}, {@code known-hosts},
 * {@code out-of-band}, {@code channel-id}, {@code cluster-id}) are read and dropped, and written as zero or
 * empty. Null strings, byte strings and tables are written empty. Immutable (tables are not copied).
 */
public sealed interface ExchangeMethod extends Method {
    /** Class id {@value}. */
    int CLASS_ID = 40;

    @Override
    default int classId() {
        return CLASS_ID;
    }

    /** {@code exchange.declare} (40, 10). */
    record Declare(String exchange, String type, boolean passive, boolean durable, boolean autoDelete,
            boolean internal, boolean noWait, Map<String, Object> arguments) implements ExchangeMethod {
        public static final int METHOD_ID = 10;

        @Override
        public int methodId() {
            return METHOD_ID;
        }

        @Override
        public String name() {
            return "exchange.declare";
        }

        @Override
        public void writeArguments(ByteBuf out) {
            out.writeShort(0); // ticket, reserved
            Wire.writeShortString(out, exchange);
            Wire.writeShortString(out, type);
            out.writeByte((passive ? 1 : 0) | (durable ? 2 : 0) | (autoDelete ? 4 : 0) | (internal ? 8 : 0) |
                (noWait ? 16 : 0));
            Wire.writeTable(out, arguments);
        }

        static Declare read(ByteBuf in) throws Amqp091DecodeException {
            Wire.readShort(in); // ticket, reserved
            String exchange = Wire.readShortString(in);
            String type = Wire.readShortString(in);
            int bits = Wire.readOctet(in);
            Map<String, Object> arguments = Wire.readTable(in);
            return new Declare(exchange, type, (bits & 1) != 0, (bits & 2) != 0, (bits & 4) != 0,
                (bits & 8) != 0, (bits & 16) != 0, arguments);
        }
    }

    /** {@code exchange.declare-ok} (40, 11). */
    record DeclareOk() implements ExchangeMethod {
        public static final int METHOD_ID = 11;
        public static final DeclareOk INSTANCE = new DeclareOk();

        @Override
        public int methodId() {
            return METHOD_ID;
        }

        @Override
        public String name() {
            return "exchange.declare-ok";
        }

        @Override
        public void writeArguments(ByteBuf out) {
        }

        static DeclareOk read(ByteBuf in) throws Amqp091DecodeException {
            return INSTANCE;
        }
    }

    /** {@code exchange.delete} (40, 20). */
    record Delete(String exchange, boolean ifUnused, boolean noWait) implements ExchangeMethod {
        public static final int METHOD_ID = 20;

        @Override
        public int methodId() {
            return METHOD_ID;
        }

        @Override
        public String name() {
            return "exchange.delete";
        }

        @Override
        public void writeArguments(ByteBuf out) {
            out.writeShort(0); // ticket, reserved
            Wire.writeShortString(out, exchange);
            out.writeByte((ifUnused ? 1 : 0) | (noWait ? 2 : 0));
        }

        static Delete read(ByteBuf in) throws Amqp091DecodeException {
            Wire.readShort(in); // ticket, reserved
            String exchange = Wire.readShortString(in);
            int bits = Wire.readOctet(in);
            return new Delete(exchange, (bits & 1) != 0, (bits & 2) != 0);
        }
    }

    /** {@code exchange.delete-ok} (40, 21). */
    record DeleteOk() implements ExchangeMethod {
        public static final int METHOD_ID = 21;
        public static final DeleteOk INSTANCE = new DeleteOk();

        @Override
        public int methodId() {
            return METHOD_ID;
        }

        @Override
        public String name() {
            return "exchange.delete-ok";
        }

        @Override
        public void writeArguments(ByteBuf out) {
        }

        static DeleteOk read(ByteBuf in) throws Amqp091DecodeException {
            return INSTANCE;
        }
    }

    /** {@code exchange.bind} (40, 30). */
    record Bind(String destination, String source, String routingKey, boolean noWait, Map<String,
            Object> arguments) implements ExchangeMethod {
        public static final int METHOD_ID = 30;

        @Override
        public int methodId() {
            return METHOD_ID;
        }

        @Override
        public String name() {
            return "exchange.bind";
        }

        @Override
        public void writeArguments(ByteBuf out) {
            out.writeShort(0); // ticket, reserved
            Wire.writeShortString(out, destination);
            Wire.writeShortString(out, source);
            Wire.writeShortString(out, routingKey);
            out.writeByte((noWait ? 1 : 0));
            Wire.writeTable(out, arguments);
        }

        static Bind read(ByteBuf in) throws Amqp091DecodeException {
            Wire.readShort(in); // ticket, reserved
            String destination = Wire.readShortString(in);
            String source = Wire.readShortString(in);
            String routingKey = Wire.readShortString(in);
            int bits = Wire.readOctet(in);
            Map<String, Object> arguments = Wire.readTable(in);
            return new Bind(destination, source, routingKey, (bits & 1) != 0, arguments);
        }
    }

    /** {@code exchange.bind-ok} (40, 31). */
    record BindOk() implements ExchangeMethod {
        public static final int METHOD_ID = 31;
        public static final BindOk INSTANCE = new BindOk();

        @Override
        public int methodId() {
            return METHOD_ID;
        }

        @Override
        public String name() {
            return "exchange.bind-ok";
        }

        @Override
        public void writeArguments(ByteBuf out) {
        }

        static BindOk read(ByteBuf in) throws Amqp091DecodeException {
            return INSTANCE;
        }
    }

    /** {@code exchange.unbind} (40, 40). */
    record Unbind(String destination, String source, String routingKey, boolean noWait, Map<String,
            Object> arguments) implements ExchangeMethod {
        public static final int METHOD_ID = 40;

        @Override
        public int methodId() {
            return METHOD_ID;
        }

        @Override
        public String name() {
            return "exchange.unbind";
        }

        @Override
        public void writeArguments(ByteBuf out) {
            out.writeShort(0); // ticket, reserved
            Wire.writeShortString(out, destination);
            Wire.writeShortString(out, source);
            Wire.writeShortString(out, routingKey);
            out.writeByte((noWait ? 1 : 0));
            Wire.writeTable(out, arguments);
        }

        static Unbind read(ByteBuf in) throws Amqp091DecodeException {
            Wire.readShort(in); // ticket, reserved
            String destination = Wire.readShortString(in);
            String source = Wire.readShortString(in);
            String routingKey = Wire.readShortString(in);
            int bits = Wire.readOctet(in);
            Map<String, Object> arguments = Wire.readTable(in);
            return new Unbind(destination, source, routingKey, (bits & 1) != 0, arguments);
        }
    }

    /** {@code exchange.unbind-ok} (40, 51). */
    record UnbindOk() implements ExchangeMethod {
        public static final int METHOD_ID = 51;
        public static final UnbindOk INSTANCE = new UnbindOk();

        @Override
        public int methodId() {
            return METHOD_ID;
        }

        @Override
        public String name() {
            return "exchange.unbind-ok";
        }

        @Override
        public void writeArguments(ByteBuf out) {
        }

        static UnbindOk read(ByteBuf in) throws Amqp091DecodeException {
            return INSTANCE;
        }
    }
}
