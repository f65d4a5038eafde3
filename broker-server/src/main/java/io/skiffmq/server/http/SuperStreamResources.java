package io.skiffmq.server.http;

import io.skiffmq.core.VirtualHost;
import io.skiffmq.core.stream.SuperStreamException;
import io.skiffmq.core.stream.SuperStreams;
import io.skiffmq.server.authz.Access;
import io.skiffmq.server.authz.Permission;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * {@code /api/stream/super-streams/{vhost}/{name}}: {@code PUT} declares a super stream as RabbitMQ's stream
 * management plugin does ({@code rabbit_stream_super_stream_mgmt}): a body with {@code partitions} (a number, or a
 * string of one) or {@code binding-keys} (comma-separated), and {@code arguments} in the stream protocol's names
 * ({@code max-length-bytes}, {@code max-age}, …). {@code DELETE} deletes it (exchange and partitions), which
 * RabbitMQ offers through {@code rabbitmq-streams} only. Both need the permissions RabbitMQ asks for: configure on
 * the exchange and the streams, read on the exchange and write on the streams (the bindings). Stateless; runs on
 * the management threads.
 */
final class SuperStreamResources {
    private final Lookups lookups;
    private final tools.jackson.databind.ObjectMapper mapper;

    SuperStreamResources(Lookups lookups, tools.jackson.databind.ObjectMapper mapper) {
        this.lookups = lookups;
        this.mapper = mapper;
    }

    void register(Router router) {
        router.sync("PUT", "/api/stream/super-streams/{vhost}/{name}", this::declare)
            .sync("DELETE", "/api/stream/super-streams/{vhost}/{name}", this::delete);
    }

    private ApiResponse declare(ApiRequest request) {
        VirtualHost vhost = lookups.vhost(request.caller(), request.variable("vhost"));
        String name = request.variable("name");
        Map<String, Object> body = request.json(mapper);
        lookups.require(request.caller(), vhost.name(), Permission.CONFIGURE, Access.Resource.EXCHANGE, name);
        Object partitionCount = body.get("partitions");
        Object keysText = body.get("binding-keys");
        int max = lookups.broker().config().management().maxSuperStreamPartitions();
        List<String> partitions;
        List<String> keys;
        if (partitionCount == null && keysText == null) {
            throw ApiException.badRequest("Must specify partitions or binding keys");
        } else if (partitionCount != null && keysText != null) {
            throw ApiException.badRequest("Specify partitions or binding keys, not both");
        } else if (keysText != null) {
            keys = bindingKeys(keysText.toString());
            if (keys.isEmpty()) {
                throw ApiException.badRequest("The number of binding keys must be greater than 0");
            }
            if (keys.size() > max) {
                throw ApiException.badRequest("The number of binding keys must not exceed " + max);
            }
            partitions = SuperStreams.partitionNames(name, keys);
        } else {
            int count = partitions(partitionCount, max);
            partitions = SuperStreams.partitionNames(name, count);
            keys = SuperStreams.routingKeys(count);
        }
        requireManagement(request.caller(), vhost.name(), name, partitions);
        Map<String, Object> arguments = Bodies.arguments(body);
        try {
            SuperStreams.create(vhost, name, partitions, keys, SuperStreams.queueArguments(arguments), max);
        } catch (SuperStreamException e) {
            throw ApiException.badRequest(e.erlangTerm());
        }
        return ApiResponse.noContent();
    }

    private static int partitions(Object value, int max) {
        int count;
        try {
            count = value instanceof Number n ? Math.toIntExact(n.longValue()) : Integer.parseInt(value.toString());
        } catch (NumberFormatException | ArithmeticException e) {
            throw ApiException.badRequest("The partitions must be a number");
        }
        if (count < 1) {
            throw ApiException.badRequest("The partition number must be greater than 0");
        }
        if (count > max) {
            throw ApiException.badRequest("The partition number must not exceed " + max);
        }
        return count;
    }

    /** {@code rabbit_stream_utils:binding_keys/1}: split at commas, trimmed, empty ones dropped. */
    static List<String> bindingKeys(String text) {
        List<String> keys = new ArrayList<>();
        for (String key : text.split(",", -1)) {
            String trimmed = key.strip();
            if (!trimmed.isEmpty()) {
                keys.add(trimmed);
            }
        }
        return keys;
    }

    /** {@code rabbit_stream_utils:check_super_stream_management_permitted/4}. */
    private void requireManagement(Caller caller, String vhost, String name, List<String> partitions) {
        for (String partition : partitions) {
            lookups.require(caller, vhost, Permission.CONFIGURE, Access.Resource.QUEUE, partition);
        }
        lookups.require(caller, vhost, Permission.READ, Access.Resource.EXCHANGE, name);
        for (String partition : partitions) {
            lookups.require(caller, vhost, Permission.WRITE, Access.Resource.QUEUE, partition);
        }
    }

    private ApiResponse delete(ApiRequest request) {
        VirtualHost vhost = lookups.vhost(request.caller(), request.variable("vhost"));
        String name = request.variable("name");
        lookups.require(request.caller(), vhost.name(), Permission.CONFIGURE, Access.Resource.EXCHANGE, name);
        List<String> partitions;
        try {
            partitions = SuperStreams.partitions(vhost, name);
        } catch (SuperStreamException e) {
            throw ApiException.notFound();
        }
        requireManagement(request.caller(), vhost.name(), name, partitions);
        SuperStreams.delete(vhost, name, partitions);
        return ApiResponse.noContent();
    }
}
