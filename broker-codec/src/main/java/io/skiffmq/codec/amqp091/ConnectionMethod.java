package io.skiffmq.codec.amqp091;

import io.netty.buffer.ByteBuf;
import io.skiffmq.codec.Bytes;
import java.util.Map;

/**
 * Class {@code connection} (10): the handshake, tuning, close, and RabbitMQ's blocked/unblocked and
 * update-secret extensions. Always on channel 0.
 *
 * <p>Reserved arguments (the old {@code ticket}, {@code capabilities}, {@code insist}, {@code known-hosts},
 * {@code out-of-band}, {@code channel-id}, {@code cluster-id}) are read and dropped, and written as zero or
 * empty. Null strings, byte strings and tables are written empty. Immutable (tables are not copied).
 */
public sealed interface ConnectionMethod extends Method {
    /** Class id {@value}. */
    int CLASS_ID = 10;

    @Override
    default int classId() {
        return CLASS_ID;
    }

    /** {@code connection.start} (10, 10). */
    record Start(int versionMajor, int versionMinor, Map<String, Object> serverProperties, String mechanisms,
            String locales) implements ConnectionMethod {
        public static final int METHOD_ID = 10;

        @Override
        public int methodId() {
            return METHOD_ID;
        }

        @Override
        public String name() {
            return "connection.start";
        }

        @Override
        public void writeArguments(ByteBuf out) {
            Wire.writeOctet(out, versionMajor);
            Wire.writeOctet(out, versionMinor);
            Wire.writeTable(out, serverProperties);
            Wire.writeLongString(out, mechanisms);
            Wire.writeLongString(out, locales);
        }

        static Start read(ByteBuf in) throws Amqp091DecodeException {
            int versionMajor = Wire.readOctet(in);
            int versionMinor = Wire.readOctet(in);
            Map<String, Object> serverProperties = Wire.readTable(in);
            String mechanisms = Wire.readLongString(in);
            String locales = Wire.readLongString(in);
            return new Start(versionMajor, versionMinor, serverProperties, mechanisms, locales);
        }
    }

    /** {@code connection.start-ok} (10, 11). */
    record StartOk(Map<String, Object> clientProperties, String mechanism, Bytes response,
            String locale) implements ConnectionMethod {
        public static final int METHOD_ID = 11;

        @Override
        public int methodId() {
            return METHOD_ID;
        }

        @Override
        public String name() {
            return "connection.start-ok";
        }

        @Override
        public void writeArguments(ByteBuf out) {
            Wire.writeTable(out, clientProperties);
            Wire.writeShortString(out, mechanism);
            Wire.writeLongString(out, response);
            Wire.writeShortString(out, locale);
        }

        static StartOk read(ByteBuf in) throws Amqp091DecodeException {
            Map<String, Object> clientProperties = Wire.readTable(in);
            String mechanism = Wire.readShortString(in);
            Bytes response = Wire.readLongBytes(in);
            String locale = Wire.readShortString(in);
            return new StartOk(clientProperties, mechanism, response, locale);
        }
    }

    /** {@code connection.secure} (10, 20). */
    record Secure(Bytes challenge) implements ConnectionMethod {
        public static final int METHOD_ID = 20;

        @Override
        public int methodId() {
            return METHOD_ID;
        }

        @Override
        public String name() {
            return "connection.secure";
        }

        @Override
        public void writeArguments(ByteBuf out) {
            Wire.writeLongString(out, challenge);
        }

        static Secure read(ByteBuf in) throws Amqp091DecodeException {
            Bytes challenge = Wire.readLongBytes(in);
            return new Secure(challenge);
        }
    }

    /** {@code connection.secure-ok} (10, 21). */
    record SecureOk(Bytes response) implements ConnectionMethod {
        public static final int METHOD_ID = 21;

        @Override
        public int methodId() {
            return METHOD_ID;
        }

        @Override
        public String name() {
            return "connection.secure-ok";
        }

        @Override
        public void writeArguments(ByteBuf out) {
            Wire.writeLongString(out, response);
        }

        static SecureOk read(ByteBuf in) throws Amqp091DecodeException {
            Bytes response = Wire.readLongBytes(in);
            return new SecureOk(response);
        }
    }

    /** {@code connection.tune} (10, 30). */
    record Tune(int channelMax, long frameMax, int heartbeat) implements ConnectionMethod {
        public static final int METHOD_ID = 30;

        @Override
        public int methodId() {
            return METHOD_ID;
        }

        @Override
        public String name() {
            return "connection.tune";
        }

        @Override
        public void writeArguments(ByteBuf out) {
            Wire.writeShort(out, channelMax);
            Wire.writeLong(out, frameMax);
            Wire.writeShort(out, heartbeat);
        }

        static Tune read(ByteBuf in) throws Amqp091DecodeException {
            int channelMax = Wire.readShort(in);
            long frameMax = Wire.readLong(in);
            int heartbeat = Wire.readShort(in);
            return new Tune(channelMax, frameMax, heartbeat);
        }
    }

    /** {@code connection.tune-ok} (10, 31). */
    record TuneOk(int channelMax, long frameMax, int heartbeat) implements ConnectionMethod {
        public static final int METHOD_ID = 31;

        @Override
        public int methodId() {
            return METHOD_ID;
        }

        @Override
        public String name() {
            return "connection.tune-ok";
        }

        @Override
        public void writeArguments(ByteBuf out) {
            Wire.writeShort(out, channelMax);
            Wire.writeLong(out, frameMax);
            Wire.writeShort(out, heartbeat);
        }

        static TuneOk read(ByteBuf in) throws Amqp091DecodeException {
            int channelMax = Wire.readShort(in);
            long frameMax = Wire.readLong(in);
            int heartbeat = Wire.readShort(in);
            return new TuneOk(channelMax, frameMax, heartbeat);
        }
    }

    /** {@code connection.open} (10, 40). */
    record Open(String virtualHost) implements ConnectionMethod {
        public static final int METHOD_ID = 40;

        @Override
        public int methodId() {
            return METHOD_ID;
        }

        @Override
        public String name() {
            return "connection.open";
        }

        @Override
        public void writeArguments(ByteBuf out) {
            Wire.writeShortString(out, virtualHost);
            out.writeByte(0); // capabilities, reserved
            out.writeByte(0); // reserved bits
        }

        static Open read(ByteBuf in) throws Amqp091DecodeException {
            String virtualHost = Wire.readShortString(in);
            Wire.skipShortString(in); // capabilities, reserved
            Wire.readOctet(in); // reserved bits
            return new Open(virtualHost);
        }
    }

    /** {@code connection.open-ok} (10, 41). */
    record OpenOk() implements ConnectionMethod {
        public static final int METHOD_ID = 41;
        public static final OpenOk INSTANCE = new OpenOk();

        @Override
        public int methodId() {
            return METHOD_ID;
        }

        @Override
        public String name() {
            return "connection.open-ok";
        }

        @Override
        public void writeArguments(ByteBuf out) {
            out.writeByte(0); // knownHosts, reserved
        }

        static OpenOk read(ByteBuf in) throws Amqp091DecodeException {
            Wire.skipShortString(in); // knownHosts, reserved
            return INSTANCE;
        }
    }

    /** {@code connection.close} (10, 50). */
    record Close(int replyCode, String replyText, int causeClassId, int causeMethodId) implements ConnectionMethod {
        public static final int METHOD_ID = 50;

        @Override
        public int methodId() {
            return METHOD_ID;
        }

        @Override
        public String name() {
            return "connection.close";
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

    /** {@code connection.close-ok} (10, 51). */
    record CloseOk() implements ConnectionMethod {
        public static final int METHOD_ID = 51;
        public static final CloseOk INSTANCE = new CloseOk();

        @Override
        public int methodId() {
            return METHOD_ID;
        }

        @Override
        public String name() {
            return "connection.close-ok";
        }

        @Override
        public void writeArguments(ByteBuf out) {
        }

        static CloseOk read(ByteBuf in) throws Amqp091DecodeException {
            return INSTANCE;
        }
    }

    /** {@code connection.blocked} (10, 60). */
    record Blocked(String reason) implements ConnectionMethod {
        public static final int METHOD_ID = 60;

        @Override
        public int methodId() {
            return METHOD_ID;
        }

        @Override
        public String name() {
            return "connection.blocked";
        }

        @Override
        public void writeArguments(ByteBuf out) {
            Wire.writeShortString(out, reason);
        }

        static Blocked read(ByteBuf in) throws Amqp091DecodeException {
            String reason = Wire.readShortString(in);
            return new Blocked(reason);
        }
    }

    /** {@code connection.unblocked} (10, 61). */
    record Unblocked() implements ConnectionMethod {
        public static final int METHOD_ID = 61;
        public static final Unblocked INSTANCE = new Unblocked();

        @Override
        public int methodId() {
            return METHOD_ID;
        }

        @Override
        public String name() {
            return "connection.unblocked";
        }

        @Override
        public void writeArguments(ByteBuf out) {
        }

        static Unblocked read(ByteBuf in) throws Amqp091DecodeException {
            return INSTANCE;
        }
    }

    /** {@code connection.update-secret} (10, 70). */
    record UpdateSecret(Bytes newSecret, String reason) implements ConnectionMethod {
        public static final int METHOD_ID = 70;

        @Override
        public int methodId() {
            return METHOD_ID;
        }

        @Override
        public String name() {
            return "connection.update-secret";
        }

        @Override
        public void writeArguments(ByteBuf out) {
            Wire.writeLongString(out, newSecret);
            Wire.writeShortString(out, reason);
        }

        static UpdateSecret read(ByteBuf in) throws Amqp091DecodeException {
            Bytes newSecret = Wire.readLongBytes(in);
            String reason = Wire.readShortString(in);
            return new UpdateSecret(newSecret, reason);
        }
    }

    /** {@code connection.update-secret-ok} (10, 71). */
    record UpdateSecretOk() implements ConnectionMethod {
        public static final int METHOD_ID = 71;
        public static final UpdateSecretOk INSTANCE = new UpdateSecretOk();

        @Override
        public int methodId() {
            return METHOD_ID;
        }

        @Override
        public String name() {
            return "connection.update-secret-ok";
        }

        @Override
        public void writeArguments(ByteBuf out) {
        }

        static UpdateSecretOk read(ByteBuf in) throws Amqp091DecodeException {
            return INSTANCE;
        }
    }
}
