package io.skiffmq.codec.amqp091;

import io.netty.buffer.ByteBuf;
import java.util.Map;

/**
 * Class {@code basic} (60): qos, consumers, publishing and delivery, acknowledgements. {@code publish},
 * {@code return}, {@code deliver} and {@code get-ok} are followed by content (a content header and body frames).
 *
 * <p>Reserved arguments (the old {@code ticket}, {@code capabilities}, {@code insist}, {@code known-hosts},
 * {@code out-of-band}, {@code channel-id}, {@code cluster-id}) are read and dropped, and written as zero or
 * empty. Null strings, byte strings and tables are written empty. Immutable (tables are not copied).
 */
public sealed interface BasicMethod extends Method {
    /** Class id {@value}. */
    int CLASS_ID = 60;

    @Override
    default int classId() {
        return CLASS_ID;
    }

    /** {@code basic.qos} (60, 10). */
    record Qos(long prefetchSize, int prefetchCount, boolean global) implements BasicMethod {
        public static final int METHOD_ID = 10;

        @Override
        public int methodId() {
            return METHOD_ID;
        }

        @Override
        public String name() {
            return "basic.qos";
        }

        @Override
        public void writeArguments(ByteBuf out) {
            Wire.writeLong(out, prefetchSize);
            Wire.writeShort(out, prefetchCount);
            out.writeByte((global ? 1 : 0));
        }

        static Qos read(ByteBuf in) throws Amqp091DecodeException {
            long prefetchSize = Wire.readLong(in);
            int prefetchCount = Wire.readShort(in);
            int bits = Wire.readOctet(in);
            return new Qos(prefetchSize, prefetchCount, (bits & 1) != 0);
        }
    }

    /** {@code basic.qos-ok} (60, 11). */
    record QosOk() implements BasicMethod {
        public static final int METHOD_ID = 11;
        public static final QosOk INSTANCE = new QosOk();

        @Override
        public int methodId() {
            return METHOD_ID;
        }

        @Override
        public String name() {
            return "basic.qos-ok";
        }

        @Override
        public void writeArguments(ByteBuf out) {
        }

        static QosOk read(ByteBuf in) throws Amqp091DecodeException {
            return INSTANCE;
        }
    }

    /** {@code basic.consume} (60, 20). */
    record Consume(String queue, String consumerTag, boolean noLocal, boolean noAck, boolean exclusive,
            boolean noWait, Map<String, Object> arguments) implements BasicMethod {
        public static final int METHOD_ID = 20;

        @Override
        public int methodId() {
            return METHOD_ID;
        }

        @Override
        public String name() {
            return "basic.consume";
        }

        @Override
        public void writeArguments(ByteBuf out) {
            out.writeShort(0); // ticket, reserved
            Wire.writeShortString(out, queue);
            Wire.writeShortString(out, consumerTag);
            out.writeByte((noLocal ? 1 : 0) | (noAck ? 2 : 0) | (exclusive ? 4 : 0) | (noWait ? 8 : 0));
            Wire.writeTable(out, arguments);
        }

        static Consume read(ByteBuf in) throws Amqp091DecodeException {
            Wire.readShort(in); // ticket, reserved
            String queue = Wire.readShortString(in);
            String consumerTag = Wire.readShortString(in);
            int bits = Wire.readOctet(in);
            Map<String, Object> arguments = Wire.readTable(in);
            return new Consume(queue, consumerTag, (bits & 1) != 0, (bits & 2) != 0, (bits & 4) != 0,
                (bits & 8) != 0, arguments);
        }
    }

    /** {@code basic.consume-ok} (60, 21). */
    record ConsumeOk(String consumerTag) implements BasicMethod {
        public static final int METHOD_ID = 21;

        @Override
        public int methodId() {
            return METHOD_ID;
        }

        @Override
        public String name() {
            return "basic.consume-ok";
        }

        @Override
        public void writeArguments(ByteBuf out) {
            Wire.writeShortString(out, consumerTag);
        }

        static ConsumeOk read(ByteBuf in) throws Amqp091DecodeException {
            String consumerTag = Wire.readShortString(in);
            return new ConsumeOk(consumerTag);
        }
    }

    /** {@code basic.cancel} (60, 30). */
    record Cancel(String consumerTag, boolean noWait) implements BasicMethod {
        public static final int METHOD_ID = 30;

        @Override
        public int methodId() {
            return METHOD_ID;
        }

        @Override
        public String name() {
            return "basic.cancel";
        }

        @Override
        public void writeArguments(ByteBuf out) {
            Wire.writeShortString(out, consumerTag);
            out.writeByte((noWait ? 1 : 0));
        }

        static Cancel read(ByteBuf in) throws Amqp091DecodeException {
            String consumerTag = Wire.readShortString(in);
            int bits = Wire.readOctet(in);
            return new Cancel(consumerTag, (bits & 1) != 0);
        }
    }

    /** {@code basic.cancel-ok} (60, 31). */
    record CancelOk(String consumerTag) implements BasicMethod {
        public static final int METHOD_ID = 31;

        @Override
        public int methodId() {
            return METHOD_ID;
        }

        @Override
        public String name() {
            return "basic.cancel-ok";
        }

        @Override
        public void writeArguments(ByteBuf out) {
            Wire.writeShortString(out, consumerTag);
        }

        static CancelOk read(ByteBuf in) throws Amqp091DecodeException {
            String consumerTag = Wire.readShortString(in);
            return new CancelOk(consumerTag);
        }
    }

    /** {@code basic.publish} (60, 40), followed by content. */
    record Publish(String exchange, String routingKey, boolean mandatory, boolean immediate) implements BasicMethod {
        public static final int METHOD_ID = 40;

        @Override
        public int methodId() {
            return METHOD_ID;
        }

        @Override
        public String name() {
            return "basic.publish";
        }

        @Override
        public boolean hasContent() {
            return true;
        }

        @Override
        public void writeArguments(ByteBuf out) {
            out.writeShort(0); // ticket, reserved
            Wire.writeShortString(out, exchange);
            Wire.writeShortString(out, routingKey);
            out.writeByte((mandatory ? 1 : 0) | (immediate ? 2 : 0));
        }

        static Publish read(ByteBuf in) throws Amqp091DecodeException {
            Wire.readShort(in); // ticket, reserved
            String exchange = Wire.readShortString(in);
            String routingKey = Wire.readShortString(in);
            int bits = Wire.readOctet(in);
            return new Publish(exchange, routingKey, (bits & 1) != 0, (bits & 2) != 0);
        }

        /**
         * True when the arguments at {@code at} (to {@code in}'s writer index) are exactly these, as {@link
         * #writeArguments} encodes them, ticket aside: ASCII names compared byte by byte, without decoding. False for
         * anything else (other names, non-ASCII ones, other bits, bytes left over), which is then decoded as usual.
         */
        boolean sameArguments(ByteBuf in, int at) {
            int end = in.writerIndex();
            at = matchShortString(in, at + 2, end, exchange);
            at = at < 0 ? -1 : matchShortString(in, at, end, routingKey);
            return at >= 0 && at + 1 == end && in.getUnsignedByte(at) == ((mandatory ? 1 : 0) | (immediate ? 2 : 0));
        }

        /** Where the short string at {@code at} ends if it is {@code s} in ASCII, else -1. */
        private static int matchShortString(ByteBuf in, int at, int end, String s) {
            if (at >= end || in.getUnsignedByte(at) != s.length() || at + 1 + s.length() > end) {
                return -1;
            }
            for (int i = 0; i < s.length(); i++) {
                int b = in.getByte(at + 1 + i);
                if (b < 0 || b != s.charAt(i)) {
                    return -1;
                }
            }
            return at + 1 + s.length();
        }
    }

    /** {@code basic.return} (60, 50), followed by content. */
    record Return(int replyCode, String replyText, String exchange, String routingKey) implements BasicMethod {
        public static final int METHOD_ID = 50;

        @Override
        public int methodId() {
            return METHOD_ID;
        }

        @Override
        public String name() {
            return "basic.return";
        }

        @Override
        public boolean hasContent() {
            return true;
        }

        @Override
        public void writeArguments(ByteBuf out) {
            Wire.writeShort(out, replyCode);
            Wire.writeShortString(out, replyText);
            Wire.writeShortString(out, exchange);
            Wire.writeShortString(out, routingKey);
        }

        static Return read(ByteBuf in) throws Amqp091DecodeException {
            int replyCode = Wire.readShort(in);
            String replyText = Wire.readShortString(in);
            String exchange = Wire.readShortString(in);
            String routingKey = Wire.readShortString(in);
            return new Return(replyCode, replyText, exchange, routingKey);
        }
    }

    /** {@code basic.deliver} (60, 60), followed by content. */
    record Deliver(String consumerTag, long deliveryTag, boolean redelivered, String exchange,
            String routingKey) implements BasicMethod {
        public static final int METHOD_ID = 60;

        @Override
        public int methodId() {
            return METHOD_ID;
        }

        @Override
        public String name() {
            return "basic.deliver";
        }

        @Override
        public boolean hasContent() {
            return true;
        }

        @Override
        public void writeArguments(ByteBuf out) {
            writeArguments(out, consumerTag, deliveryTag, redelivered, exchange, routingKey);
        }

        /** The arguments of a {@code basic.deliver}, without making its record (one per delivery otherwise). */
        static void writeArguments(ByteBuf out, String consumerTag, long deliveryTag, boolean redelivered,
                String exchange, String routingKey) {
            Wire.writeShortString(out, consumerTag);
            out.writeLong(deliveryTag);
            out.writeByte((redelivered ? 1 : 0));
            Wire.writeShortString(out, exchange);
            Wire.writeShortString(out, routingKey);
        }

        static Deliver read(ByteBuf in) throws Amqp091DecodeException {
            String consumerTag = Wire.readShortString(in);
            long deliveryTag = Wire.readLongLong(in);
            int bits = Wire.readOctet(in);
            String exchange = Wire.readShortString(in);
            String routingKey = Wire.readShortString(in);
            return new Deliver(consumerTag, deliveryTag, (bits & 1) != 0, exchange, routingKey);
        }
    }

    /** {@code basic.get} (60, 70). */
    record Get(String queue, boolean noAck) implements BasicMethod {
        public static final int METHOD_ID = 70;

        @Override
        public int methodId() {
            return METHOD_ID;
        }

        @Override
        public String name() {
            return "basic.get";
        }

        @Override
        public void writeArguments(ByteBuf out) {
            out.writeShort(0); // ticket, reserved
            Wire.writeShortString(out, queue);
            out.writeByte((noAck ? 1 : 0));
        }

        static Get read(ByteBuf in) throws Amqp091DecodeException {
            Wire.readShort(in); // ticket, reserved
            String queue = Wire.readShortString(in);
            int bits = Wire.readOctet(in);
            return new Get(queue, (bits & 1) != 0);
        }
    }

    /** {@code basic.get-ok} (60, 71), followed by content. */
    record GetOk(long deliveryTag, boolean redelivered, String exchange, String routingKey,
            long messageCount) implements BasicMethod {
        public static final int METHOD_ID = 71;

        @Override
        public int methodId() {
            return METHOD_ID;
        }

        @Override
        public String name() {
            return "basic.get-ok";
        }

        @Override
        public boolean hasContent() {
            return true;
        }

        @Override
        public void writeArguments(ByteBuf out) {
            out.writeLong(deliveryTag);
            out.writeByte((redelivered ? 1 : 0));
            Wire.writeShortString(out, exchange);
            Wire.writeShortString(out, routingKey);
            Wire.writeLong(out, messageCount);
        }

        static GetOk read(ByteBuf in) throws Amqp091DecodeException {
            long deliveryTag = Wire.readLongLong(in);
            int bits = Wire.readOctet(in);
            String exchange = Wire.readShortString(in);
            String routingKey = Wire.readShortString(in);
            long messageCount = Wire.readLong(in);
            return new GetOk(deliveryTag, (bits & 1) != 0, exchange, routingKey, messageCount);
        }
    }

    /** {@code basic.get-empty} (60, 72). */
    record GetEmpty() implements BasicMethod {
        public static final int METHOD_ID = 72;
        public static final GetEmpty INSTANCE = new GetEmpty();

        @Override
        public int methodId() {
            return METHOD_ID;
        }

        @Override
        public String name() {
            return "basic.get-empty";
        }

        @Override
        public void writeArguments(ByteBuf out) {
            out.writeByte(0); // clusterId, reserved
        }

        static GetEmpty read(ByteBuf in) throws Amqp091DecodeException {
            Wire.skipShortString(in); // clusterId, reserved
            return INSTANCE;
        }
    }

    /** {@code basic.ack} (60, 80). */
    record Ack(long deliveryTag, boolean multiple) implements BasicMethod {
        public static final int METHOD_ID = 80;

        @Override
        public int methodId() {
            return METHOD_ID;
        }

        @Override
        public String name() {
            return "basic.ack";
        }

        @Override
        public void writeArguments(ByteBuf out) {
            out.writeLong(deliveryTag);
            out.writeByte((multiple ? 1 : 0));
        }

        static Ack read(ByteBuf in) throws Amqp091DecodeException {
            long deliveryTag = Wire.readLongLong(in);
            int bits = Wire.readOctet(in);
            return new Ack(deliveryTag, (bits & 1) != 0);
        }
    }

    /** {@code basic.reject} (60, 90). */
    record Reject(long deliveryTag, boolean requeue) implements BasicMethod {
        public static final int METHOD_ID = 90;

        @Override
        public int methodId() {
            return METHOD_ID;
        }

        @Override
        public String name() {
            return "basic.reject";
        }

        @Override
        public void writeArguments(ByteBuf out) {
            out.writeLong(deliveryTag);
            out.writeByte((requeue ? 1 : 0));
        }

        static Reject read(ByteBuf in) throws Amqp091DecodeException {
            long deliveryTag = Wire.readLongLong(in);
            int bits = Wire.readOctet(in);
            return new Reject(deliveryTag, (bits & 1) != 0);
        }
    }

    /** {@code basic.recover-async} (60, 100). */
    record RecoverAsync(boolean requeue) implements BasicMethod {
        public static final int METHOD_ID = 100;

        @Override
        public int methodId() {
            return METHOD_ID;
        }

        @Override
        public String name() {
            return "basic.recover-async";
        }

        @Override
        public void writeArguments(ByteBuf out) {
            out.writeByte((requeue ? 1 : 0));
        }

        static RecoverAsync read(ByteBuf in) throws Amqp091DecodeException {
            int bits = Wire.readOctet(in);
            return new RecoverAsync((bits & 1) != 0);
        }
    }

    /** {@code basic.recover} (60, 110). */
    record Recover(boolean requeue) implements BasicMethod {
        public static final int METHOD_ID = 110;

        @Override
        public int methodId() {
            return METHOD_ID;
        }

        @Override
        public String name() {
            return "basic.recover";
        }

        @Override
        public void writeArguments(ByteBuf out) {
            out.writeByte((requeue ? 1 : 0));
        }

        static Recover read(ByteBuf in) throws Amqp091DecodeException {
            int bits = Wire.readOctet(in);
            return new Recover((bits & 1) != 0);
        }
    }

    /** {@code basic.recover-ok} (60, 111). */
    record RecoverOk() implements BasicMethod {
        public static final int METHOD_ID = 111;
        public static final RecoverOk INSTANCE = new RecoverOk();

        @Override
        public int methodId() {
            return METHOD_ID;
        }

        @Override
        public String name() {
            return "basic.recover-ok";
        }

        @Override
        public void writeArguments(ByteBuf out) {
        }

        static RecoverOk read(ByteBuf in) throws Amqp091DecodeException {
            return INSTANCE;
        }
    }

    /** {@code basic.nack} (60, 120). */
    record Nack(long deliveryTag, boolean multiple, boolean requeue) implements BasicMethod {
        public static final int METHOD_ID = 120;

        @Override
        public int methodId() {
            return METHOD_ID;
        }

        @Override
        public String name() {
            return "basic.nack";
        }

        @Override
        public void writeArguments(ByteBuf out) {
            out.writeLong(deliveryTag);
            out.writeByte((multiple ? 1 : 0) | (requeue ? 2 : 0));
        }

        static Nack read(ByteBuf in) throws Amqp091DecodeException {
            long deliveryTag = Wire.readLongLong(in);
            int bits = Wire.readOctet(in);
            return new Nack(deliveryTag, (bits & 1) != 0, (bits & 2) != 0);
        }
    }
}
