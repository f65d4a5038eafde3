package io.skiffmq.codec.stream;

import io.netty.buffer.ByteBuf;
import java.util.Map;

/**
 * Subscribing, unsubscribing, the credit error response, stored offsets, single active consumer updates and
 * offset resolution. Credit, store offset and deliver themselves go through {@link CreditFrame},
 * {@link StoreOffsetFrame}, {@link DeliverFrame} and {@link StreamFrameWriter}. Immutable.
 */
public sealed interface ConsumerCommand extends Command {

    /**
     * {@code subscribe} (0x07).
     *
     * @param subscriptionId uint8, chosen by the client, unique on its connection
     * @param credit uint16: chunks the server may send before more credit comes
     * @param properties {@code single-active-consumer}, {@code name}, {@code super-stream}, {@code filter.N},
     *        {@code match-unfiltered}; left out of the frame when empty, as the Java client and RabbitMQ write it
     */
    record Subscribe(long correlationId, int subscriptionId, String stream, OffsetSpec offset, int credit,
            Map<String, String> properties) implements ConsumerCommand, Correlated {
        @Override
        public CommandKey command() {
            return CommandKey.SUBSCRIBE;
        }

        @Override
        public void writeBody(ByteBuf out) {
            Wire.writeUint32(out, correlationId, "correlation id");
            Wire.writeUint8(out, subscriptionId, "subscription id");
            Wire.writeString(out, stream);
            offset.write(out);
            Wire.writeUint16(out, credit, "credit");
            Wire.writeOptionalStringMap(out, properties);
        }

        static Subscribe read(ByteBuf in) throws StreamDecodeException {
            long correlationId = Wire.readUint32(in, "correlation id");
            int subscriptionId = Wire.readUint8(in, "subscription id");
            String stream = Wire.readString(in, "stream");
            OffsetSpec offset = OffsetSpec.read(in, false);
            int credit = Wire.readUint16(in, "credit");
            return new Subscribe(correlationId, subscriptionId, stream, offset, credit,
                Wire.readOptionalStringMap(in, "properties"));
        }
    }

    /** {@code unsubscribe} (0x0c). */
    record Unsubscribe(long correlationId, int subscriptionId) implements ConsumerCommand, Correlated {
        @Override
        public CommandKey command() {
            return CommandKey.UNSUBSCRIBE;
        }

        @Override
        public void writeBody(ByteBuf out) {
            Wire.writeUint32(out, correlationId, "correlation id");
            Wire.writeUint8(out, subscriptionId, "subscription id");
        }

        static Unsubscribe read(ByteBuf in) throws StreamDecodeException {
            return new Unsubscribe(Wire.readUint32(in, "correlation id"), Wire.readUint8(in, "subscription id"));
        }
    }

    /**
     * The answer to a {@code credit} the server could not apply (an unknown subscription: 0x04; an inactive single
     * active consumer: 0x11). No correlation id: code, then the subscription.
     */
    record CreditResponse(ResponseCode code, int subscriptionId) implements ConsumerCommand {
        @Override
        public CommandKey command() {
            return CommandKey.CREDIT;
        }

        @Override
        public boolean isResponse() {
            return true;
        }

        @Override
        public void writeBody(ByteBuf out) {
            out.writeShort(code.code());
            Wire.writeUint8(out, subscriptionId, "subscription id");
        }

        static CreditResponse read(ByteBuf in) throws StreamDecodeException {
            return new CreditResponse(Wire.readCode(in), Wire.readUint8(in, "subscription id"));
        }
    }

    /** {@code query_offset} (0x0b): the offset stored under a consumer's name. */
    record QueryOffset(long correlationId, String reference, String stream) implements ConsumerCommand, Correlated {
        @Override
        public CommandKey command() {
            return CommandKey.QUERY_OFFSET;
        }

        @Override
        public void writeBody(ByteBuf out) {
            Wire.writeUint32(out, correlationId, "correlation id");
            Wire.writeString(out, reference);
            Wire.writeString(out, stream);
        }

        static QueryOffset read(ByteBuf in) throws StreamDecodeException {
            return new QueryOffset(Wire.readUint32(in, "correlation id"), Wire.readString(in, "reference"),
                Wire.readString(in, "stream"));
        }
    }

    /** @param offset uint64; the code is {@link ResponseCode#NO_OFFSET} for a name never stored */
    record QueryOffsetResponse(long correlationId, ResponseCode code, long offset) implements ConsumerCommand, Correlated {
        @Override
        public CommandKey command() {
            return CommandKey.QUERY_OFFSET;
        }

        @Override
        public boolean isResponse() {
            return true;
        }

        @Override
        public void writeBody(ByteBuf out) {
            Wire.writeUint32(out, correlationId, "correlation id");
            out.writeShort(code.code());
            out.writeLong(offset);
        }

        static QueryOffsetResponse read(ByteBuf in) throws StreamDecodeException {
            return new QueryOffsetResponse(Wire.readUint32(in, "correlation id"), Wire.readCode(in),
                Wire.readInt64(in, "offset"));
        }
    }

    /** {@code consumer_update} (0x1a), a request from the server: a single active consumer becomes (in)active. */
    record ConsumerUpdate(long correlationId, int subscriptionId, boolean active) implements ConsumerCommand, Correlated {
        @Override
        public CommandKey command() {
            return CommandKey.CONSUMER_UPDATE;
        }

        @Override
        public void writeBody(ByteBuf out) {
            Wire.writeUint32(out, correlationId, "correlation id");
            Wire.writeUint8(out, subscriptionId, "subscription id");
            out.writeByte(active ? 1 : 0);
        }

        static ConsumerUpdate read(ByteBuf in) throws StreamDecodeException {
            return new ConsumerUpdate(Wire.readUint32(in, "correlation id"), Wire.readUint8(in, "subscription id"),
                Wire.readBoolean(in, "active"));
        }
    }

    /** The client's answer: where the newly active consumer starts ({@link OffsetSpec#NONE} for no change). */
    record ConsumerUpdateResponse(long correlationId, ResponseCode code, OffsetSpec offset)
            implements ConsumerCommand, Correlated {
        @Override
        public CommandKey command() {
            return CommandKey.CONSUMER_UPDATE;
        }

        @Override
        public boolean isResponse() {
            return true;
        }

        @Override
        public void writeBody(ByteBuf out) {
            Wire.writeUint32(out, correlationId, "correlation id");
            out.writeShort(code.code());
            offset.write(out);
        }

        static ConsumerUpdateResponse read(ByteBuf in) throws StreamDecodeException {
            return new ConsumerUpdateResponse(Wire.readUint32(in, "correlation id"), Wire.readCode(in),
                OffsetSpec.read(in, true));
        }
    }

    /**
     * {@code resolve_offset_spec} (0x1f): the offset an offset specification stands for.
     *
     * @param properties {@code filter.N}, {@code match-unfiltered}, {@code chunk_selector}; left out when empty
     */
    record ResolveOffsetSpec(long correlationId, String stream, OffsetSpec offset, Map<String, String> properties)
            implements ConsumerCommand, Correlated {
        @Override
        public CommandKey command() {
            return CommandKey.RESOLVE_OFFSET_SPEC;
        }

        @Override
        public void writeBody(ByteBuf out) {
            Wire.writeUint32(out, correlationId, "correlation id");
            Wire.writeString(out, stream);
            offset.write(out);
            Wire.writeOptionalStringMap(out, properties);
        }

        static ResolveOffsetSpec read(ByteBuf in) throws StreamDecodeException {
            long correlationId = Wire.readUint32(in, "correlation id");
            String stream = Wire.readString(in, "stream");
            OffsetSpec offset = OffsetSpec.read(in, false);
            return new ResolveOffsetSpec(correlationId, stream, offset, Wire.readOptionalStringMap(in, "properties"));
        }
    }

    /**
     * The resolved offset: always a type and a 64-bit value on the wire (RabbitMQ answers type 4, offset), even
     * for types that carry no value elsewhere.
     */
    record ResolveOffsetSpecResponse(long correlationId, ResponseCode code, OffsetSpec.Type type, long offset)
            implements ConsumerCommand, Correlated {
        @Override
        public CommandKey command() {
            return CommandKey.RESOLVE_OFFSET_SPEC;
        }

        @Override
        public boolean isResponse() {
            return true;
        }

        @Override
        public void writeBody(ByteBuf out) {
            Wire.writeUint32(out, correlationId, "correlation id");
            out.writeShort(code.code());
            out.writeShort(type.code());
            out.writeLong(offset);
        }

        static ResolveOffsetSpecResponse read(ByteBuf in) throws StreamDecodeException {
            long correlationId = Wire.readUint32(in, "correlation id");
            ResponseCode code = Wire.readCode(in);
            int typeCode = Wire.readUint16(in, "offset type");
            OffsetSpec.Type type = OffsetSpec.Type.of(typeCode);
            if (type == null) {
                throw StreamDecodeException.of(DecodeFailure.BAD_VALUE, "offset type %d", typeCode);
            }
            return new ResolveOffsetSpecResponse(correlationId, code, type, Wire.readInt64(in, "offset"));
        }
    }
}
