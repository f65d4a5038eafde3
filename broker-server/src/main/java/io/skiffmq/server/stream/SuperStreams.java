package io.skiffmq.server.stream;

import io.skiffmq.codec.stream.CommandKey;
import io.skiffmq.codec.stream.ManagementCommand.CreateSuperStream;
import io.skiffmq.codec.stream.ManagementCommand.DeleteSuperStream;
import io.skiffmq.codec.stream.ManagementCommand.Partitions;
import io.skiffmq.codec.stream.ManagementCommand.Route;
import io.skiffmq.codec.stream.ManagementCommand.StreamsResponse;
import io.skiffmq.codec.stream.Response;
import io.skiffmq.codec.stream.ResponseCode;
import io.skiffmq.core.BrokerException;
import io.skiffmq.core.Exchange;
import io.skiffmq.core.VirtualHost;
import io.skiffmq.core.queue.Queue;
import io.skiffmq.core.routing.Binding;
import io.skiffmq.core.routing.Destination;
import io.skiffmq.core.routing.Router;
import io.skiffmq.core.stream.StreamQueue;
import io.skiffmq.server.authz.Access;
import io.skiffmq.server.authz.Permission;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Map;

/**
 * Super streams, as RabbitMQ keeps them ({@code rabbit_stream_manager}): a durable direct exchange with the argument
 * {@code x-super-stream = true}, bound to its partitions (streams) with the binding argument
 * {@code x-stream-partition-order}. {@code route} is the exchange's routing of a key (the streams it reaches),
 * {@code partitions} its stream bindings in that order; creating makes the exchange, the streams and the bindings
 * (undone on a failure), deleting removes the exchange and the streams. Any exchange bound to streams this way
 * (declared over 0-9-1 or the HTTP API) is a super stream too. Permission checks on the connection's loop; the work
 * that waits for the disk on the broker's management threads.
 */
final class SuperStreams {
    static final String SUPER_STREAM_ARGUMENT = "x-super-stream";
    static final String PARTITION_ORDER = "x-stream-partition-order";
    /** RabbitMQ's {@code max_super_stream_partitions} default. */
    static final int MAX_PARTITIONS = 1000;

    private final StreamConnectionHandler connection;

    SuperStreams(StreamConnectionHandler connection) {
        this.connection = connection;
    }

    void route(Route route) {
        long corr = route.correlationId();
        Access access = connection.access();
        if (access.refusal(Permission.WRITE, Access.Resource.EXCHANGE, route.superStream()) != null) {
            connection.respond(new StreamsResponse(CommandKey.ROUTE, corr, ResponseCode.ACCESS_REFUSED, List.of()));
            return;
        }
        VirtualHost vhost = connection.vhost();
        Exchange exchange = vhost.exchange(route.superStream());
        if (exchange == null) {
            connection.respond(new StreamsResponse(CommandKey.ROUTE, corr, ResponseCode.STREAM_DOES_NOT_EXIST,
                List.of()));
            return;
        }
        List<String> streams = new ArrayList<>();
        for (Queue queue : vhost.route(exchange, route.routingKey(), null, new Router(), new ArrayList<>())) {
            if (queue instanceof StreamQueue) {
                streams.add(queue.name());
            }
        }
        for (String stream : streams) {
            if (access.refusal(Permission.WRITE, Access.Resource.QUEUE, stream) != null) {
                connection.respond(new StreamsResponse(CommandKey.ROUTE, corr, ResponseCode.ACCESS_REFUSED,
                    List.of()));
                return;
            }
        }
        connection.respond(new StreamsResponse(CommandKey.ROUTE, corr, ResponseCode.OK, streams));
    }

    void partitions(Partitions partitions) {
        long corr = partitions.correlationId();
        Access access = connection.access();
        if (!readOrWrite(access, Access.Resource.EXCHANGE, partitions.superStream())) {
            connection.respond(new StreamsResponse(CommandKey.PARTITIONS, corr, ResponseCode.ACCESS_REFUSED,
                List.of()));
            return;
        }
        List<String> streams = partitions(connection.vhost(), partitions.superStream());
        if (streams == null) {
            connection.respond(new StreamsResponse(CommandKey.PARTITIONS, corr, ResponseCode.STREAM_DOES_NOT_EXIST,
                List.of()));
            return;
        }
        for (String stream : streams) {
            if (!readOrWrite(access, Access.Resource.QUEUE, stream)) {
                connection.respond(new StreamsResponse(CommandKey.PARTITIONS, corr, ResponseCode.ACCESS_REFUSED,
                    List.of()));
                return;
            }
        }
        connection.respond(new StreamsResponse(CommandKey.PARTITIONS, corr, ResponseCode.OK, streams));
    }

    private static boolean readOrWrite(Access access, Access.Resource resource, String name) {
        return access.refusal(Permission.READ, resource, name) == null
            || access.refusal(Permission.WRITE, resource, name) == null;
    }

    /** The streams bound to the exchange {@code superStream}, by partition order; null when it does not exist. */
    static List<String> partitions(VirtualHost vhost, String superStream) {
        if (vhost.exchange(superStream) == null) {
            return null;
        }
        List<String> streams = new ArrayList<>();
        for (Binding binding : partitionBindings(vhost, superStream)) {
            streams.add(binding.destination().name());
        }
        return streams;
    }

    /** The bindings from {@code superStream} to streams, sorted by {@code x-stream-partition-order} (none last). */
    private static List<Binding> partitionBindings(VirtualHost vhost, String superStream) {
        List<Binding> bindings = new ArrayList<>();
        for (Binding binding : vhost.bindings().bindingsFrom(superStream)) {
            Destination d = binding.destination();
            if (!d.isExchange() && vhost.queue(d.name()) instanceof StreamQueue) {
                bindings.add(binding);
            }
        }
        bindings.sort(Comparator.comparingLong(b -> order(b) == null ? Long.MAX_VALUE : order(b)));
        return bindings;
    }

    private static Long order(Binding binding) {
        Object order = binding.arguments().get(PARTITION_ORDER);
        if (order instanceof Number n) {
            return n.longValue();
        }
        if (order != null) {
            try {
                return Long.parseLong(order.toString());
            } catch (NumberFormatException e) {
                return null;
            }
        }
        return null;
    }

    /**
     * The index of {@code stream} among the partitions of {@code superStream}: its binding's partition order, or the
     * number after its name's last {@code -}; -1 when it is no partition of it (RabbitMQ's
     * {@code partition_index}).
     */
    static int partitionIndex(VirtualHost vhost, String superStream, String stream) {
        if (vhost.exchange(superStream) == null) {
            return -1;
        }
        for (Binding binding : partitionBindings(vhost, superStream)) {
            if (binding.destination().name().equals(stream)) {
                Long order = order(binding);
                if (order != null) {
                    return (int) (long) order;
                }
                int dash = stream.lastIndexOf('-');
                try {
                    return dash < 0 ? -1 : Integer.parseInt(stream.substring(dash + 1));
                } catch (NumberFormatException e) {
                    return -1;
                }
            }
        }
        return -1;
    }

    void create(CreateSuperStream create) {
        long corr = create.correlationId();
        String name = StreamCommands.correctName(create.name());
        List<String> partitions = create.partitions();
        Access access = connection.access();
        ResponseCode refused = null;
        if (name == null || partitions.size() != create.bindingKeys().size()) {
            refused = ResponseCode.PRECONDITION_FAILED;
        } else if (!managementPermitted(access, name, partitions)) {
            refused = ResponseCode.ACCESS_REFUSED;
        } else if (partitions.isEmpty() || new HashSet<>(partitions).size() != partitions.size()
                || partitions.size() > MAX_PARTITIONS
                || partitions.stream().anyMatch(p -> StreamCommands.correctName(p) == null)) {
            refused = ResponseCode.PRECONDITION_FAILED;
        }
        VirtualHost vhost = connection.vhost();
        if (refused == null && (vhost.exchange(name) != null
                || partitions.stream().anyMatch(p -> vhost.queue(p) != null))) {
            refused = ResponseCode.STREAM_ALREADY_EXISTS;
        }
        Map<String, Object> arguments = refused == null ? StreamCommands.queueArguments(create.arguments(), true)
            : null;
        if (refused == null && arguments == null) {
            refused = ResponseCode.PRECONDITION_FAILED;
        }
        if (refused != null) {
            connection.respond(new Response(CommandKey.CREATE_SUPER_STREAM, corr, refused));
            return;
        }
        List<String> keys = create.bindingKeys();
        connection.offload(() -> createSuperStream(vhost, name, partitions, keys, arguments),
            code -> connection.respond(new Response(CommandKey.CREATE_SUPER_STREAM, corr, code)));
    }

    /** RabbitMQ's {@code check_super_stream_management_permitted}. */
    private static boolean managementPermitted(Access access, String name, List<String> partitions) {
        if (access.refusal(Permission.CONFIGURE, Access.Resource.EXCHANGE, name) != null
                || access.refusal(Permission.READ, Access.Resource.EXCHANGE, name) != null) {
            return false;
        }
        for (String partition : partitions) {
            if (access.refusal(Permission.CONFIGURE, Access.Resource.QUEUE, partition) != null
                    || access.refusal(Permission.WRITE, Access.Resource.QUEUE, partition) != null) {
                return false;
            }
        }
        return true;
    }

    /** On a management thread: the exchange, the streams, the bindings; what was made goes again on a failure. */
    private static ResponseCode createSuperStream(VirtualHost vhost, String name, List<String> partitions,
            List<String> keys, Map<String, Object> arguments) {
        List<String> made = new ArrayList<>();
        boolean exchangeMade = false;
        try {
            vhost.declareExchange(new Exchange(name, Exchange.Type.DIRECT, true, false, false,
                Map.of(SUPER_STREAM_ARGUMENT, true)));
            exchangeMade = true;
            for (String partition : partitions) {
                vhost.declareQueue(StreamCommands.declaration(partition, arguments), null);
                made.add(partition);
            }
            for (int i = 0; i < partitions.size(); i++) {
                vhost.bind(new Binding(name, Destination.queue(partitions.get(i)), keys.get(i),
                    Map.of(PARTITION_ORDER, (long) i)));
            }
            return ResponseCode.OK;
        } catch (BrokerException e) {
            for (String partition : made) {
                vhost.deleteQueue(partition);
            }
            if (exchangeMade) {
                vhost.deleteExchange(name);
            }
            return e.kind() == BrokerException.Kind.PRECONDITION_FAILED
                || e.kind() == BrokerException.Kind.RESOURCE_LIMIT ? ResponseCode.PRECONDITION_FAILED
                : ResponseCode.INTERNAL_ERROR;
        }
    }

    void delete(DeleteSuperStream delete) {
        long corr = delete.correlationId();
        Access access = connection.access();
        String name = delete.name();
        if (access.refusal(Permission.CONFIGURE, Access.Resource.EXCHANGE, name) != null) {
            connection.respond(new Response(CommandKey.DELETE_SUPER_STREAM, corr, ResponseCode.ACCESS_REFUSED));
            return;
        }
        VirtualHost vhost = connection.vhost();
        List<String> partitions = partitions(vhost, name);
        if (partitions == null) {
            connection.respond(new Response(CommandKey.DELETE_SUPER_STREAM, corr,
                ResponseCode.STREAM_DOES_NOT_EXIST));
            return;
        }
        if (!managementPermitted(access, name, partitions)) {
            connection.respond(new Response(CommandKey.DELETE_SUPER_STREAM, corr, ResponseCode.ACCESS_REFUSED));
            return;
        }
        // the partitions checked, not those bound by then (RabbitMQ deletes its authorized snapshot)
        connection.offload(() -> {
            vhost.deleteExchange(name);
            for (String partition : partitions) {
                if (vhost.queue(partition) instanceof StreamQueue) {
                    vhost.deleteQueue(partition);
                }
            }
            return ResponseCode.OK;
        }, code -> connection.respond(new Response(CommandKey.DELETE_SUPER_STREAM, corr, code)));
    }
}
