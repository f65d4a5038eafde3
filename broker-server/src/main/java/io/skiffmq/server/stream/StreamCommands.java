package io.skiffmq.server.stream;

import io.skiffmq.codec.stream.CommandKey;
import io.skiffmq.codec.stream.ManagementCommand;
import io.skiffmq.codec.stream.ManagementCommand.CreateStream;
import io.skiffmq.codec.stream.ManagementCommand.DeleteStream;
import io.skiffmq.codec.stream.ManagementCommand.Metadata;
import io.skiffmq.codec.stream.ManagementCommand.StreamMetadata;
import io.skiffmq.codec.stream.ManagementCommand.StreamStats;
import io.skiffmq.codec.stream.Response;
import io.skiffmq.codec.stream.ResponseCode;
import io.skiffmq.core.BrokerException;
import io.skiffmq.core.VirtualHost;
import io.skiffmq.core.queue.Queue;
import io.skiffmq.core.queue.QueueDeclaration;
import io.skiffmq.core.stream.StreamQueue;
import io.skiffmq.core.stream.SuperStreamException;
import io.skiffmq.core.stream.SuperStreams;
import io.skiffmq.server.authz.Permission;
import io.skiffmq.store.stream.StreamLog;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * Streams as a whole over the stream protocol: create and delete (RabbitMQ's {@code rabbit_stream_manager}),
 * metadata (where each stream's leader and replicas are: here, on one node, this broker, as advertised) and
 * statistics. Codes as RabbitMQ answers: create needs configure permission (0x10) and a name that is not empty nor
 * starts with {@code amq.} (0x11); creating a stream that exists as declared is 0x05, with other arguments (or as
 * another queue type) 0x11, a bad argument 0x11; delete of what is not a stream 0x02. Owned by the connection's
 * event loop; a create or delete waits for the disk on the broker's management threads, the connection's reading
 * suspended meanwhile.
 */
final class StreamCommands {
    private final StreamConnectionHandler connection;

    StreamCommands(StreamConnectionHandler connection) {
        this.connection = connection;
    }

    /** A stream's {@code x-} arguments from the protocol's; null when a number is not one. */
    private static Map<String, Object> queueArguments(Map<String, String> arguments) {
        Map<String, Object> x = new LinkedHashMap<>();
        x.put("x-queue-type", "stream");
        try {
            x.putAll(SuperStreams.queueArguments(arguments));
        } catch (SuperStreamException e) {
            return null;
        }
        return x;
    }

    /** A stream's declaration: durable, neither exclusive nor auto-delete. */
    private static QueueDeclaration declaration(String name, Map<String, Object> arguments) {
        return new QueueDeclaration(name, true, false, false, arguments);
    }

    void create(CreateStream create) {
        long corr = create.correlationId();
        String name = SuperStreams.correctName(create.stream());
        ResponseCode refused = name == null ? ResponseCode.PRECONDITION_FAILED
            : connection.permission(Permission.CONFIGURE, name);
        Map<String, Object> arguments = refused == null ? queueArguments(create.arguments()) : null;
        if (refused == null && arguments == null) {
            refused = ResponseCode.PRECONDITION_FAILED;
        }
        VirtualHost vhost = connection.vhost();
        QueueDeclaration wanted = refused == null ? declaration(name, arguments) : null;
        Queue existing = refused == null ? vhost.queue(name) : null;
        if (existing != null) {
            refused = existing instanceof StreamQueue && existing.declaration().equivalent(wanted)
                ? ResponseCode.STREAM_ALREADY_EXISTS : ResponseCode.PRECONDITION_FAILED;
        }
        if (refused != null) {
            connection.respond(new Response(CommandKey.CREATE_STREAM, corr, refused));
            return;
        }
        // a new stream opens its log (files, directory syncs): on a management thread
        connection.offload(() -> {
            try {
                vhost.declareQueue(wanted, null);
                return ResponseCode.OK;
            } catch (BrokerException e) {
                connection.log("cannot create stream '" + name + "': " + e.getMessage());
                return switch (e.kind()) {
                    case PRECONDITION_FAILED, INVALID, RESOURCE_LIMIT -> ResponseCode.PRECONDITION_FAILED;
                    default -> ResponseCode.INTERNAL_ERROR;
                };
            }
        }, code -> connection.respond(new Response(CommandKey.CREATE_STREAM, corr, code)));
    }

    void delete(DeleteStream delete) {
        long corr = delete.correlationId();
        String name = delete.stream();
        ResponseCode refused = connection.permission(Permission.CONFIGURE, name);
        StreamQueue queue = refused == null ? connection.stream(name) : null;
        if (refused == null && queue == null) {
            refused = ResponseCode.STREAM_DOES_NOT_EXIST;
        }
        if (refused != null) {
            connection.respond(new Response(CommandKey.DELETE_STREAM, corr, refused));
            return;
        }
        CompletableFuture<Integer> deleted = connection.vhost().deleteQueue(queue);
        if (deleted == null) {
            connection.respond(new Response(CommandKey.DELETE_STREAM, corr, ResponseCode.STREAM_DOES_NOT_EXIST));
            return;
        }
        // this connection's publishers and subscriptions on it go with the deletion's watch (metadata update)
        connection.await(deleted, count -> connection.respond(new Response(CommandKey.DELETE_STREAM, corr,
            ResponseCode.OK)));
    }

    /**
     * Where the streams are: this broker (reference 0, as advertised to this connection) leads each, with no
     * replica. A stream the user may neither read nor write is 0x10 (RabbitMQ's {@code stream_not_allowed}), one
     * that does not exist 0x02; the broker is listed only when a stream found names it.
     */
    void metadata(Metadata metadata) {
        List<ManagementCommand.Broker> brokers = List.of();
        List<StreamMetadata> streams = new java.util.ArrayList<>();
        for (String stream : new LinkedHashSet<>(metadata.streams())) {
            ResponseCode code = connection.permission(Permission.READ, stream) == null
                || connection.permission(Permission.WRITE, stream) == null ? null : ResponseCode.ACCESS_REFUSED;
            if (code == null && connection.stream(stream) == null) {
                code = ResponseCode.STREAM_DOES_NOT_EXIST;
            }
            if (code == null) {
                streams.add(new StreamMetadata(stream, ResponseCode.OK, 0, List.of()));
                brokers = List.of(new ManagementCommand.Broker(0, connection.advertisedHost(),
                    connection.advertisedPort()));
            } else {
                streams.add(new StreamMetadata(stream, code, ManagementCommand.NO_LEADER, List.of()));
            }
        }
        connection.respond(new ManagementCommand.MetadataResponse(metadata.correlationId(), brokers, streams));
    }

    /**
     * {@code first_chunk_id}, {@code committed_chunk_id} and {@code last_chunk_id} as osiris reports them (-1 while
     * the stream has no message), and {@code committed_offset}, which the Java client reads when present.
     */
    void stats(StreamStats stats) {
        long corr = stats.correlationId();
        ResponseCode refused = connection.permission(Permission.READ, stats.stream());
        StreamQueue queue = refused == null ? connection.stream(stats.stream()) : null;
        if (refused == null && queue == null) {
            refused = ResponseCode.STREAM_DOES_NOT_EXIST;
        }
        if (refused != null) {
            connection.respond(new ManagementCommand.StreamStatsResponse(corr, refused, Map.of()));
            return;
        }
        StreamLog log = StreamConnectionHandler.log(queue);
        long committedOffset = log.committedOffset();
        long committedChunk = log.committedChunkId();
        Map<String, Long> values = new LinkedHashMap<>();
        values.put("first_chunk_id", committedOffset < 0 ? -1 : Math.min(log.firstOffset(), committedChunk));
        values.put("committed_chunk_id", committedChunk);
        values.put("last_chunk_id", committedChunk);
        values.put("committed_offset", committedOffset);
        connection.respond(new ManagementCommand.StreamStatsResponse(corr, ResponseCode.OK, values));
    }
}
