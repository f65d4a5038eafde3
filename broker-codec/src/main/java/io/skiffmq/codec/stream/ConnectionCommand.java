package io.skiffmq.codec.stream;

import io.netty.buffer.ByteBuf;
import io.skiffmq.codec.Bytes;
import java.util.List;
import java.util.Map;

/**
 * Opening, keeping and closing a connection: peer properties, SASL, tune, open, close, heartbeat and the exchange
 * of command versions (PROTOCOL.adoc "Authentication"). Immutable.
 */
public sealed interface ConnectionCommand extends Command {

    /** {@code peer_properties} (0x11): the client's properties. */
    record PeerProperties(long correlationId, Map<String, String> properties) implements ConnectionCommand, Correlated {
        @Override
        public CommandKey command() {
            return CommandKey.PEER_PROPERTIES;
        }

        @Override
        public void writeBody(ByteBuf out) {
            Wire.writeUint32(out, correlationId, "correlation id");
            Wire.writeStringMap(out, properties);
        }

        static PeerProperties read(ByteBuf in) throws StreamDecodeException {
            return new PeerProperties(Wire.readUint32(in, "correlation id"), Wire.readStringMap(in, "properties"));
        }
    }

    /** The server's properties; the Java client reads {@code version} to decide whether to exchange versions. */
    record PeerPropertiesResponse(long correlationId, ResponseCode code, Map<String, String> properties)
            implements ConnectionCommand, Correlated {
        @Override
        public CommandKey command() {
            return CommandKey.PEER_PROPERTIES;
        }

        @Override
        public boolean isResponse() {
            return true;
        }

        @Override
        public void writeBody(ByteBuf out) {
            Wire.writeUint32(out, correlationId, "correlation id");
            out.writeShort(code.code());
            Wire.writeStringMap(out, properties);
        }

        static PeerPropertiesResponse read(ByteBuf in) throws StreamDecodeException {
            return new PeerPropertiesResponse(Wire.readUint32(in, "correlation id"), Wire.readCode(in),
                Wire.readStringMap(in, "properties"));
        }
    }

    /** {@code sasl_handshake} (0x12): asks for the mechanisms; no fields. */
    record SaslHandshake(long correlationId) implements ConnectionCommand, Correlated {
        @Override
        public CommandKey command() {
            return CommandKey.SASL_HANDSHAKE;
        }

        @Override
        public void writeBody(ByteBuf out) {
            Wire.writeUint32(out, correlationId, "correlation id");
        }

        static SaslHandshake read(ByteBuf in) throws StreamDecodeException {
            return new SaslHandshake(Wire.readUint32(in, "correlation id"));
        }
    }

    record SaslHandshakeResponse(long correlationId, ResponseCode code, List<String> mechanisms)
            implements ConnectionCommand, Correlated {
        @Override
        public CommandKey command() {
            return CommandKey.SASL_HANDSHAKE;
        }

        @Override
        public boolean isResponse() {
            return true;
        }

        @Override
        public void writeBody(ByteBuf out) {
            Wire.writeUint32(out, correlationId, "correlation id");
            out.writeShort(code.code());
            Wire.writeStrings(out, mechanisms);
        }

        static SaslHandshakeResponse read(ByteBuf in) throws StreamDecodeException {
            return new SaslHandshakeResponse(Wire.readUint32(in, "correlation id"), Wire.readCode(in),
                Wire.readStrings(in, "mechanisms"));
        }
    }

    /**
     * {@code sasl_authenticate} (0x13): a mechanism and its response. Also sent after open, to refresh
     * credentials.
     *
     * @param response the SASL response; null is written as length -1, which the Java client sends for none
     */
    record SaslAuthenticate(long correlationId, String mechanism, Bytes response) implements ConnectionCommand, Correlated {
        @Override
        public CommandKey command() {
            return CommandKey.SASL_AUTHENTICATE;
        }

        @Override
        public void writeBody(ByteBuf out) {
            Wire.writeUint32(out, correlationId, "correlation id");
            Wire.writeString(out, mechanism);
            Wire.writeBytes(out, response);
        }

        static SaslAuthenticate read(ByteBuf in) throws StreamDecodeException {
            return new SaslAuthenticate(Wire.readUint32(in, "correlation id"), Wire.readString(in, "mechanism"),
                Wire.readBytes(in, "SASL response"));
        }
    }

    /**
     * The outcome; a challenge ({@link ResponseCode#SASL_CHALLENGE}) carries bytes with an int32 length, as
     * PROTOCOL.adoc says and the Java client reads them (RabbitMQ's own encoder writes an int16 length there, but
     * none of its mechanisms sends a challenge on this protocol).
     *
     * @param challenge left out of the frame when null
     */
    record SaslAuthenticateResponse(long correlationId, ResponseCode code, Bytes challenge)
            implements ConnectionCommand, Correlated {
        @Override
        public CommandKey command() {
            return CommandKey.SASL_AUTHENTICATE;
        }

        @Override
        public boolean isResponse() {
            return true;
        }

        @Override
        public void writeBody(ByteBuf out) {
            Wire.writeUint32(out, correlationId, "correlation id");
            out.writeShort(code.code());
            if (challenge != null) {
                Wire.writeBytes(out, challenge);
            }
        }

        static SaslAuthenticateResponse read(ByteBuf in) throws StreamDecodeException {
            long correlationId = Wire.readUint32(in, "correlation id");
            ResponseCode code = Wire.readCode(in);
            return new SaslAuthenticateResponse(correlationId, code,
                in.isReadable() ? Wire.readBytes(in, "challenge") : null);
        }
    }

    /**
     * {@code tune} (0x14), no correlation id: the server's proposal, then the client's answer, which the Java
     * client sends with the response key and RabbitMQ accepts under either.
     *
     * @param frameMax bytes, 0 = no limit
     * @param heartbeat seconds, 0 = none
     * @param response whether this is the answer (key 0x8014)
     */
    record Tune(long frameMax, long heartbeat, boolean response) implements ConnectionCommand {
        @Override
        public CommandKey command() {
            return CommandKey.TUNE;
        }

        @Override
        public boolean isResponse() {
            return response;
        }

        @Override
        public void writeBody(ByteBuf out) {
            Wire.writeUint32(out, frameMax, "frame-max");
            Wire.writeUint32(out, heartbeat, "heartbeat");
        }

        static Tune read(ByteBuf in, boolean response) throws StreamDecodeException {
            return new Tune(Wire.readUint32(in, "frame-max"), Wire.readUint32(in, "heartbeat"), response);
        }
    }

    /** {@code open} (0x15): the virtual host. */
    record Open(long correlationId, String virtualHost) implements ConnectionCommand, Correlated {
        @Override
        public CommandKey command() {
            return CommandKey.OPEN;
        }

        @Override
        public void writeBody(ByteBuf out) {
            Wire.writeUint32(out, correlationId, "correlation id");
            Wire.writeString(out, virtualHost);
        }

        static Open read(ByteBuf in) throws StreamDecodeException {
            return new Open(Wire.readUint32(in, "correlation id"), Wire.readString(in, "virtual host"));
        }
    }

    /**
     * The connection properties, which must hold {@code advertised_host} and {@code advertised_port}; left out of
     * the frame when empty, as RabbitMQ does for a refusal.
     */
    record OpenResponse(long correlationId, ResponseCode code, Map<String, String> properties)
            implements ConnectionCommand, Correlated {
        @Override
        public CommandKey command() {
            return CommandKey.OPEN;
        }

        @Override
        public boolean isResponse() {
            return true;
        }

        @Override
        public void writeBody(ByteBuf out) {
            Wire.writeUint32(out, correlationId, "correlation id");
            out.writeShort(code.code());
            Wire.writeOptionalStringMap(out, properties);
        }

        static OpenResponse read(ByteBuf in) throws StreamDecodeException {
            return new OpenResponse(Wire.readUint32(in, "correlation id"), Wire.readCode(in),
                Wire.readOptionalStringMap(in, "connection properties"));
        }
    }

    /**
     * {@code close} (0x16), from either end; answered with a {@link Response}.
     *
     * @param closingCode a response code: 0x01 from a client closing normally, the failure's from a server (see
     *        {@link ResponseCode#of}); kept as the number so that any uint16 a peer sends can be read
     */
    record Close(long correlationId, int closingCode, String reason) implements ConnectionCommand, Correlated {
        @Override
        public CommandKey command() {
            return CommandKey.CLOSE;
        }

        @Override
        public void writeBody(ByteBuf out) {
            Wire.writeUint32(out, correlationId, "correlation id");
            Wire.writeUint16(out, closingCode, "closing code");
            Wire.writeString(out, reason);
        }

        static Close read(ByteBuf in) throws StreamDecodeException {
            return new Close(Wire.readUint32(in, "correlation id"), Wire.readUint16(in, "closing code"),
                Wire.readString(in, "closing reason"));
        }
    }

    /** {@code heartbeat} (0x17), from either end: key and version only. Decodes to {@link #INSTANCE}. */
    record Heartbeat() implements ConnectionCommand {
        public static final Heartbeat INSTANCE = new Heartbeat();

        @Override
        public CommandKey command() {
            return CommandKey.HEARTBEAT;
        }

        @Override
        public void writeBody(ByteBuf out) {
        }
    }

    /** One command's version range, in an exchange of command versions. */
    record CommandVersion(int key, int minVersion, int maxVersion) {
        void write(ByteBuf out) {
            Wire.writeUint16(out, key, "command key");
            Wire.writeUint16(out, minVersion, "min version");
            Wire.writeUint16(out, maxVersion, "max version");
        }

        static List<CommandVersion> readAll(ByteBuf in) throws StreamDecodeException {
            int count = Wire.readCount(in, 6, "command versions");
            CommandVersion[] versions = new CommandVersion[count];
            for (int i = 0; i < count; i++) {
                versions[i] = new CommandVersion(in.readUnsignedShort(), in.readUnsignedShort(), in.readUnsignedShort());
            }
            return List.of(versions);
        }

        static void writeAll(ByteBuf out, List<CommandVersion> versions) {
            out.writeInt(versions.size());
            versions.forEach(v -> v.write(out));
        }
    }

    /**
     * {@code exchange_command_versions} (0x1b): the versions the client can receive. The Java client sends it only
     * to a server whose peer property {@code version} is 3.11 or later.
     */
    record ExchangeCommandVersions(long correlationId, List<CommandVersion> versions) implements ConnectionCommand, Correlated {
        @Override
        public CommandKey command() {
            return CommandKey.EXCHANGE_COMMAND_VERSIONS;
        }

        @Override
        public void writeBody(ByteBuf out) {
            Wire.writeUint32(out, correlationId, "correlation id");
            CommandVersion.writeAll(out, versions);
        }

        static ExchangeCommandVersions read(ByteBuf in) throws StreamDecodeException {
            return new ExchangeCommandVersions(Wire.readUint32(in, "correlation id"), CommandVersion.readAll(in));
        }
    }

    /** The versions the server can receive. */
    record ExchangeCommandVersionsResponse(long correlationId, ResponseCode code, List<CommandVersion> versions)
            implements ConnectionCommand, Correlated {
        @Override
        public CommandKey command() {
            return CommandKey.EXCHANGE_COMMAND_VERSIONS;
        }

        @Override
        public boolean isResponse() {
            return true;
        }

        @Override
        public void writeBody(ByteBuf out) {
            Wire.writeUint32(out, correlationId, "correlation id");
            out.writeShort(code.code());
            CommandVersion.writeAll(out, versions);
        }

        static ExchangeCommandVersionsResponse read(ByteBuf in) throws StreamDecodeException {
            return new ExchangeCommandVersionsResponse(Wire.readUint32(in, "correlation id"), Wire.readCode(in),
                CommandVersion.readAll(in));
        }
    }
}
