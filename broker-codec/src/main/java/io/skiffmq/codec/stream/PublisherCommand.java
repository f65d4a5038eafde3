package io.skiffmq.codec.stream;

import io.netty.buffer.ByteBuf;

/**
 * Declaring and deleting publishers, and asking for a named publisher's sequence (deduplication). Publishing
 * itself goes through {@link PublishFrame} and {@link PublishFrameWriter}. Immutable.
 */
public sealed interface PublisherCommand extends Command {
    /** RabbitMQ refuses a publisher or offset reference longer than this ({@code IS_INVALID_REF}). */
    int MAX_REFERENCE_LENGTH = 255;

    /**
     * {@code declare_publisher} (0x01).
     *
     * @param publisherId uint8, chosen by the client, unique on its connection
     * @param reference the producer's name for deduplication; empty for none
     */
    record DeclarePublisher(long correlationId, int publisherId, String reference, String stream)
            implements PublisherCommand, Correlated {
        @Override
        public CommandKey command() {
            return CommandKey.DECLARE_PUBLISHER;
        }

        @Override
        public void writeBody(ByteBuf out) {
            Wire.writeUint32(out, correlationId, "correlation id");
            Wire.writeUint8(out, publisherId, "publisher id");
            Wire.writeString(out, reference);
            Wire.writeString(out, stream);
        }

        static DeclarePublisher read(ByteBuf in) throws StreamDecodeException {
            return new DeclarePublisher(Wire.readUint32(in, "correlation id"), Wire.readUint8(in, "publisher id"),
                Wire.readString(in, "publisher reference"), Wire.readString(in, "stream"));
        }
    }

    /** {@code query_publisher_sequence} (0x05): the highest publishing id stored for a named producer. */
    record QueryPublisherSequence(long correlationId, String reference, String stream) implements PublisherCommand, Correlated {
        @Override
        public CommandKey command() {
            return CommandKey.QUERY_PUBLISHER_SEQUENCE;
        }

        @Override
        public void writeBody(ByteBuf out) {
            Wire.writeUint32(out, correlationId, "correlation id");
            Wire.writeString(out, reference);
            Wire.writeString(out, stream);
        }

        static QueryPublisherSequence read(ByteBuf in) throws StreamDecodeException {
            return new QueryPublisherSequence(Wire.readUint32(in, "correlation id"),
                Wire.readString(in, "publisher reference"), Wire.readString(in, "stream"));
        }
    }

    /** @param sequence uint64; 0 when the reference is unknown, as RabbitMQ answers */
    record QueryPublisherSequenceResponse(long correlationId, ResponseCode code, long sequence)
            implements PublisherCommand, Correlated {
        @Override
        public CommandKey command() {
            return CommandKey.QUERY_PUBLISHER_SEQUENCE;
        }

        @Override
        public boolean isResponse() {
            return true;
        }

        @Override
        public void writeBody(ByteBuf out) {
            Wire.writeUint32(out, correlationId, "correlation id");
            out.writeShort(code.code());
            out.writeLong(sequence);
        }

        static QueryPublisherSequenceResponse read(ByteBuf in) throws StreamDecodeException {
            return new QueryPublisherSequenceResponse(Wire.readUint32(in, "correlation id"), Wire.readCode(in),
                Wire.readInt64(in, "sequence"));
        }
    }

    /** {@code delete_publisher} (0x06). */
    record DeletePublisher(long correlationId, int publisherId) implements PublisherCommand, Correlated {
        @Override
        public CommandKey command() {
            return CommandKey.DELETE_PUBLISHER;
        }

        @Override
        public void writeBody(ByteBuf out) {
            Wire.writeUint32(out, correlationId, "correlation id");
            Wire.writeUint8(out, publisherId, "publisher id");
        }

        static DeletePublisher read(ByteBuf in) throws StreamDecodeException {
            return new DeletePublisher(Wire.readUint32(in, "correlation id"), Wire.readUint8(in, "publisher id"));
        }
    }
}
