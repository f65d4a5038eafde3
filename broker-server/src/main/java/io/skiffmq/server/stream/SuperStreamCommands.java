package io.skiffmq.server.stream;

import io.skiffmq.codec.stream.CommandKey;
import io.skiffmq.codec.stream.ManagementCommand.CreateSuperStream;
import io.skiffmq.codec.stream.ManagementCommand.DeleteSuperStream;
import io.skiffmq.codec.stream.ManagementCommand.Partitions;
import io.skiffmq.codec.stream.ManagementCommand.Route;
import io.skiffmq.codec.stream.ManagementCommand.StreamsResponse;
import io.skiffmq.codec.stream.Response;
import io.skiffmq.codec.stream.ResponseCode;
import io.skiffmq.core.MetadataTimeouts;
import io.skiffmq.core.VirtualHost;
import io.skiffmq.core.stream.SuperStreamException;
import io.skiffmq.server.authz.Access;
import io.skiffmq.server.authz.Permission;
import java.util.List;
import java.util.Map;

/**
 * The stream protocol's super stream commands ({@code create_super_stream}, {@code delete_super_stream},
 * {@code partitions}, {@code route}) on the core's {@link io.skiffmq.core.stream.SuperStreams}: the permission checks
 * and response codes of {@code rabbit_stream_reader}, which maps the manager's reasons {@code validation_failed} to
 * 0x11, {@code reference_already_exists} to 0x05 and {@code stream_not_found} to 0x02. Owned by the connection's
 * event loop; creating and deleting wait for the store on the broker's management threads.
 */
final class SuperStreamCommands {
    private final StreamConnectionHandler connection;

    SuperStreamCommands(StreamConnectionHandler connection) {
        this.connection = connection;
    }

    void route(Route route) {
        long corr = route.correlationId();
        Access access = connection.access();
        ResponseCode code = ResponseCode.OK;
        List<String> streams = List.of();
        if (access.refusal(Permission.WRITE, Access.Resource.EXCHANGE, route.superStream()) != null) {
            code = ResponseCode.ACCESS_REFUSED;
        } else {
            try {
                streams = io.skiffmq.core.stream.SuperStreams.route(connection.vhost(), route.superStream(),
                    route.routingKey());
                if (streams.stream().anyMatch(s -> !permitted(access, Permission.WRITE, s))) {
                    code = ResponseCode.ACCESS_REFUSED;
                }
            } catch (SuperStreamException e) {
                code = code(e);
            }
        }
        connection.respond(new StreamsResponse(CommandKey.ROUTE, corr, code,
            code == ResponseCode.OK ? streams : List.of()));
    }

    void partitions(Partitions partitions) {
        long corr = partitions.correlationId();
        Access access = connection.access();
        ResponseCode code = ResponseCode.OK;
        List<String> streams = List.of();
        if (!readOrWrite(access, Access.Resource.EXCHANGE, partitions.superStream())) {
            code = ResponseCode.ACCESS_REFUSED;
        } else {
            try {
                streams = io.skiffmq.core.stream.SuperStreams.partitions(connection.vhost(),
                    partitions.superStream());
                if (streams.stream().anyMatch(s -> !readOrWrite(access, Access.Resource.QUEUE, s))) {
                    code = ResponseCode.ACCESS_REFUSED;
                }
            } catch (SuperStreamException e) {
                code = code(e);
            }
        }
        connection.respond(new StreamsResponse(CommandKey.PARTITIONS, corr, code,
            code == ResponseCode.OK ? streams : List.of()));
    }

    void create(CreateSuperStream create) {
        long corr = create.correlationId();
        String name = io.skiffmq.core.stream.SuperStreams.correctName(create.name());
        List<String> partitions = create.partitions();
        ResponseCode refused = name == null ? ResponseCode.PRECONDITION_FAILED
            : managementPermitted(connection.access(), name, partitions) ? null : ResponseCode.ACCESS_REFUSED;
        if (refused != null) {
            connection.respond(new Response(CommandKey.CREATE_SUPER_STREAM, corr, refused));
            return;
        }
        VirtualHost vhost = connection.vhost();
        List<String> keys = create.bindingKeys();
        Map<String, String> arguments = create.arguments();
        int maxPartitions = connection.maxSuperStreamPartitions();
        connection.offload(() -> {
            try {
                io.skiffmq.core.stream.SuperStreams.create(vhost, name, partitions, keys,
                    io.skiffmq.core.stream.SuperStreams.queueArguments(arguments), maxPartitions);
                return ResponseCode.OK;
            } catch (SuperStreamException e) {
                connection.log("cannot create super stream '" + name + "': " + e.getMessage());
                return code(e);
            }
        }, code -> connection.respond(new Response(CommandKey.CREATE_SUPER_STREAM, corr, code)));
    }

    void delete(DeleteSuperStream delete) {
        delete(delete, false);
    }

    /** @param caughtUp whether this node has applied what the cluster committed when the delete arrived */
    private void delete(DeleteSuperStream delete, boolean caughtUp) {
        long corr = delete.correlationId();
        Access access = connection.access();
        String name = delete.name();
        if (access.refusal(Permission.CONFIGURE, Access.Resource.EXCHANGE, name) != null) {
            connection.respond(new Response(CommandKey.DELETE_SUPER_STREAM, corr, ResponseCode.ACCESS_REFUSED));
            return;
        }
        VirtualHost vhost = connection.vhost();
        List<String> partitions;
        try {
            partitions = io.skiffmq.core.stream.SuperStreams.partitions(vhost, name);
        } catch (SuperStreamException e) {
            if (!caughtUp && e.reason() == SuperStreamException.Reason.STREAM_NOT_FOUND && vhost.clustered()) {
                // created on another node and not applied here yet? Look again once it would be (without a
                // majority, with what this node has)
                connection.await(vhost.caughtUp(String.format(MetadataTimeouts.EXCHANGE_DELETE, name, vhost.name()))
                    .handle((done, failure) -> done), done -> delete(delete, true));
                return;
            }
            connection.respond(new Response(CommandKey.DELETE_SUPER_STREAM, corr, code(e)));
            return;
        }
        if (!managementPermitted(access, name, partitions)) {
            connection.respond(new Response(CommandKey.DELETE_SUPER_STREAM, corr, ResponseCode.ACCESS_REFUSED));
            return;
        }
        // the partitions checked, not those bound by then (RabbitMQ deletes its authorized snapshot)
        connection.offload(() -> {
            io.skiffmq.core.stream.SuperStreams.delete(vhost, name, partitions);
            return ResponseCode.OK;
        }, code -> connection.respond(new Response(CommandKey.DELETE_SUPER_STREAM, corr, code)));
    }

    /** {@code rabbit_stream_reader}'s codes for {@code rabbit_stream_manager}'s reasons. */
    private static ResponseCode code(SuperStreamException e) {
        return switch (e.reason()) {
            case VALIDATION_FAILED -> ResponseCode.PRECONDITION_FAILED;
            case REFERENCE_ALREADY_EXISTS -> ResponseCode.STREAM_ALREADY_EXISTS;
            case STREAM_NOT_FOUND -> ResponseCode.STREAM_DOES_NOT_EXIST;
        };
    }

    /** RabbitMQ's {@code check_super_stream_management_permitted}. */
    private static boolean managementPermitted(Access access, String name, List<String> partitions) {
        if (!permitted(access, Permission.CONFIGURE, Access.Resource.EXCHANGE, name)
                || !permitted(access, Permission.READ, Access.Resource.EXCHANGE, name)) {
            return false;
        }
        for (String partition : partitions) {
            if (!permitted(access, Permission.CONFIGURE, partition) || !permitted(access, Permission.WRITE, partition)) {
                return false;
            }
        }
        return true;
    }

    private static boolean readOrWrite(Access access, Access.Resource resource, String name) {
        return permitted(access, Permission.READ, resource, name) || permitted(access, Permission.WRITE, resource, name);
    }

    private static boolean permitted(Access access, Permission permission, String stream) {
        return permitted(access, permission, Access.Resource.QUEUE, stream);
    }

    private static boolean permitted(Access access, Permission permission, Access.Resource resource, String name) {
        return access.refusal(permission, resource, name) == null;
    }
}
