package io.skiffmq.codec.stream;

import io.netty.buffer.ByteBuf;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Streams and super streams as a whole: create, delete, metadata and its updates, statistics, routing and
 * partitions. Immutable.
 */
public sealed interface ManagementCommand extends Command {
    /** The leader reference of a stream without one in a metadata response: RabbitMQ writes -1 as a uint16. */
    int NO_LEADER = 0xffff;

    /**
     * {@code create_stream} (0x0d).
     *
     * @param arguments {@code max-length-bytes}, {@code max-age}, {@code stream-max-segment-size-bytes},
     *        {@code queue-leader-locator}, {@code initial-cluster-size}, {@code stream-filter-size-bytes}
     */
    record CreateStream(long correlationId, String stream, Map<String, String> arguments)
            implements ManagementCommand, Correlated {
        @Override
        public CommandKey command() {
            return CommandKey.CREATE_STREAM;
        }

        @Override
        public void writeBody(ByteBuf out) {
            Wire.writeUint32(out, correlationId, "correlation id");
            Wire.writeString(out, stream);
            Wire.writeStringMap(out, arguments);
        }

        static CreateStream read(ByteBuf in) throws StreamDecodeException {
            return new CreateStream(Wire.readUint32(in, "correlation id"), Wire.readString(in, "stream"),
                Wire.readStringMap(in, "arguments"));
        }
    }

    /** {@code delete_stream} (0x0e). */
    record DeleteStream(long correlationId, String stream) implements ManagementCommand, Correlated {
        @Override
        public CommandKey command() {
            return CommandKey.DELETE_STREAM;
        }

        @Override
        public void writeBody(ByteBuf out) {
            Wire.writeUint32(out, correlationId, "correlation id");
            Wire.writeString(out, stream);
        }

        static DeleteStream read(ByteBuf in) throws StreamDecodeException {
            return new DeleteStream(Wire.readUint32(in, "correlation id"), Wire.readString(in, "stream"));
        }
    }

    /** {@code metadata} (0x0f): where the streams' leaders and replicas are. */
    record Metadata(long correlationId, List<String> streams) implements ManagementCommand, Correlated {
        @Override
        public CommandKey command() {
            return CommandKey.METADATA;
        }

        @Override
        public void writeBody(ByteBuf out) {
            Wire.writeUint32(out, correlationId, "correlation id");
            Wire.writeStrings(out, streams);
        }

        static Metadata read(ByteBuf in) throws StreamDecodeException {
            return new Metadata(Wire.readUint32(in, "correlation id"), Wire.readStrings(in, "streams"));
        }
    }

    /** A node in a metadata response; streams name it by {@code reference}. */
    record Broker(int reference, String host, long port) {
    }

    /**
     * A stream in a metadata response.
     *
     * @param leaderReference {@link #NO_LEADER} when the stream has none (or is not {@link ResponseCode#OK})
     */
    record StreamMetadata(String stream, ResponseCode code, int leaderReference, List<Integer> replicaReferences) {
    }

    /**
     * The answer to {@link Metadata}: brokers, then streams. The one response without a response code: each
     * stream has its own.
     */
    record MetadataResponse(long correlationId, List<Broker> brokers, List<StreamMetadata> streams)
            implements ManagementCommand, Correlated {
        @Override
        public CommandKey command() {
            return CommandKey.METADATA;
        }

        @Override
        public boolean isResponse() {
            return true;
        }

        @Override
        public void writeBody(ByteBuf out) {
            Wire.writeUint32(out, correlationId, "correlation id");
            out.writeInt(brokers.size());
            for (Broker b : brokers) {
                Wire.writeUint16(out, b.reference(), "broker reference");
                Wire.writeString(out, b.host());
                Wire.writeUint32(out, b.port(), "port");
            }
            out.writeInt(streams.size());
            for (StreamMetadata s : streams) {
                Wire.writeString(out, s.stream());
                out.writeShort(s.code().code());
                Wire.writeUint16(out, s.leaderReference(), "leader reference");
                out.writeInt(s.replicaReferences().size());
                for (int replica : s.replicaReferences()) {
                    Wire.writeUint16(out, replica, "replica reference");
                }
            }
        }

        static MetadataResponse read(ByteBuf in) throws StreamDecodeException {
            long correlationId = Wire.readUint32(in, "correlation id");
            // reference, host length and port: 8 bytes at least
            Broker[] brokers = new Broker[Wire.readCount(in, 8, "brokers")];
            for (int i = 0; i < brokers.length; i++) {
                brokers[i] = new Broker(Wire.readUint16(in, "broker reference"), Wire.readString(in, "host"),
                    Wire.readUint32(in, "port"));
            }
            // name length, code, leader and replica count: 10 bytes at least
            StreamMetadata[] streams = new StreamMetadata[Wire.readCount(in, 10, "streams")];
            for (int i = 0; i < streams.length; i++) {
                String stream = Wire.readString(in, "stream");
                ResponseCode code = Wire.readCode(in);
                int leader = Wire.readUint16(in, "leader reference");
                Integer[] replicas = new Integer[Wire.readCount(in, 2, "replicas")];
                for (int r = 0; r < replicas.length; r++) {
                    replicas[r] = in.readUnsignedShort();
                }
                streams[i] = new StreamMetadata(stream, code, leader, List.of(replicas));
            }
            return new MetadataResponse(correlationId, List.of(brokers), List.of(streams));
        }
    }

    /**
     * {@code metadata_update} (0x10), from the server, no correlation id: a stream in use was deleted or lost its
     * leader ({@link ResponseCode#STREAM_NOT_AVAILABLE}, the one code the Java client acts on).
     */
    record MetadataUpdate(ResponseCode code, String stream) implements ManagementCommand {
        @Override
        public CommandKey command() {
            return CommandKey.METADATA_UPDATE;
        }

        @Override
        public void writeBody(ByteBuf out) {
            out.writeShort(code.code());
            Wire.writeString(out, stream);
        }

        static MetadataUpdate read(ByteBuf in) throws StreamDecodeException {
            return new MetadataUpdate(Wire.readCode(in), Wire.readString(in, "stream"));
        }
    }

    /** {@code stream_stats} (0x1c). */
    record StreamStats(long correlationId, String stream) implements ManagementCommand, Correlated {
        @Override
        public CommandKey command() {
            return CommandKey.STREAM_STATS;
        }

        @Override
        public void writeBody(ByteBuf out) {
            Wire.writeUint32(out, correlationId, "correlation id");
            Wire.writeString(out, stream);
        }

        static StreamStats read(ByteBuf in) throws StreamDecodeException {
            return new StreamStats(Wire.readUint32(in, "correlation id"), Wire.readString(in, "stream"));
        }
    }

    /** @param stats {@code first_chunk_id}, {@code committed_chunk_id}, {@code last_chunk_id} (-1 when none)… */
    record StreamStatsResponse(long correlationId, ResponseCode code, Map<String, Long> stats)
            implements ManagementCommand, Correlated {
        @Override
        public CommandKey command() {
            return CommandKey.STREAM_STATS;
        }

        @Override
        public boolean isResponse() {
            return true;
        }

        @Override
        public void writeBody(ByteBuf out) {
            Wire.writeUint32(out, correlationId, "correlation id");
            out.writeShort(code.code());
            out.writeInt(stats.size());
            for (Map.Entry<String, Long> e : stats.entrySet()) {
                Wire.writeString(out, e.getKey());
                out.writeLong(e.getValue());
            }
        }

        static StreamStatsResponse read(ByteBuf in) throws StreamDecodeException {
            long correlationId = Wire.readUint32(in, "correlation id");
            ResponseCode code = Wire.readCode(in);
            int count = Wire.readCount(in, 10, "statistics");
            Map<String, Long> stats = new LinkedHashMap<>(Math.min(count, 16) * 2);
            for (int i = 0; i < count; i++) {
                stats.put(Wire.readString(in, "statistic"), Wire.readInt64(in, "statistic value"));
            }
            return new StreamStatsResponse(correlationId, code, Collections.unmodifiableMap(stats));
        }
    }

    /** {@code route} (0x18): the partitions of a super stream a routing key goes to. */
    record Route(long correlationId, String routingKey, String superStream) implements ManagementCommand, Correlated {
        @Override
        public CommandKey command() {
            return CommandKey.ROUTE;
        }

        @Override
        public void writeBody(ByteBuf out) {
            Wire.writeUint32(out, correlationId, "correlation id");
            Wire.writeString(out, routingKey);
            Wire.writeString(out, superStream);
        }

        static Route read(ByteBuf in) throws StreamDecodeException {
            return new Route(Wire.readUint32(in, "correlation id"), Wire.readString(in, "routing key"),
                Wire.readString(in, "super stream"));
        }
    }

    /** {@code partitions} (0x19): a super stream's partitions, in order. */
    record Partitions(long correlationId, String superStream) implements ManagementCommand, Correlated {
        @Override
        public CommandKey command() {
            return CommandKey.PARTITIONS;
        }

        @Override
        public void writeBody(ByteBuf out) {
            Wire.writeUint32(out, correlationId, "correlation id");
            Wire.writeString(out, superStream);
        }

        static Partitions read(ByteBuf in) throws StreamDecodeException {
            return new Partitions(Wire.readUint32(in, "correlation id"), Wire.readString(in, "super stream"));
        }
    }

    /** The answer to {@link Route} or {@link Partitions}, which share a layout: a code and stream names. */
    record StreamsResponse(CommandKey command, long correlationId, ResponseCode code, List<String> streams)
            implements ManagementCommand, Correlated {
        public StreamsResponse {
            if (command != CommandKey.ROUTE && command != CommandKey.PARTITIONS) {
                throw new IllegalArgumentException(command + " is not answered with streams");
            }
        }

        @Override
        public boolean isResponse() {
            return true;
        }

        @Override
        public void writeBody(ByteBuf out) {
            Wire.writeUint32(out, correlationId, "correlation id");
            out.writeShort(code.code());
            Wire.writeStrings(out, streams);
        }

        static StreamsResponse read(CommandKey command, ByteBuf in) throws StreamDecodeException {
            return new StreamsResponse(command, Wire.readUint32(in, "correlation id"), Wire.readCode(in),
                Wire.readStrings(in, "streams"));
        }
    }

    /**
     * {@code create_super_stream} (0x1d): partitions and their binding keys, one for one (the client checks it;
     * the broker must too), and the partitions' arguments.
     */
    record CreateSuperStream(long correlationId, String name, List<String> partitions, List<String> bindingKeys,
            Map<String, String> arguments) implements ManagementCommand, Correlated {
        @Override
        public CommandKey command() {
            return CommandKey.CREATE_SUPER_STREAM;
        }

        @Override
        public void writeBody(ByteBuf out) {
            Wire.writeUint32(out, correlationId, "correlation id");
            Wire.writeString(out, name);
            Wire.writeStrings(out, partitions);
            Wire.writeStrings(out, bindingKeys);
            Wire.writeStringMap(out, arguments);
        }

        static CreateSuperStream read(ByteBuf in) throws StreamDecodeException {
            return new CreateSuperStream(Wire.readUint32(in, "correlation id"), Wire.readString(in, "super stream"),
                Wire.readStrings(in, "partitions"), Wire.readStrings(in, "binding keys"),
                Wire.readStringMap(in, "arguments"));
        }
    }

    /** {@code delete_super_stream} (0x1e). */
    record DeleteSuperStream(long correlationId, String name) implements ManagementCommand, Correlated {
        @Override
        public CommandKey command() {
            return CommandKey.DELETE_SUPER_STREAM;
        }

        @Override
        public void writeBody(ByteBuf out) {
            Wire.writeUint32(out, correlationId, "correlation id");
            Wire.writeString(out, name);
        }

        static DeleteSuperStream read(ByteBuf in) throws StreamDecodeException {
            return new DeleteSuperStream(Wire.readUint32(in, "correlation id"), Wire.readString(in, "super stream"));
        }
    }
}
