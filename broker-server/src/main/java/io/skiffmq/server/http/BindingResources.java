package io.skiffmq.server.http;

import io.skiffmq.core.VirtualHost;
import io.skiffmq.core.queue.Queue;
import io.skiffmq.core.routing.Binding;
import io.skiffmq.core.routing.Destination;
import io.skiffmq.server.authz.Access;
import io.skiffmq.server.authz.Permission;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * {@code /api/bindings}: list (all, per virtual host), the bindings between an exchange and a queue
 * ({@code /e/{source}/q/{queue}}) or two exchanges ({@code /e/{source}/e/{destination}}), create one there
 * ({@code POST}: 201 with its {@code Location}), and one by its {@code properties_key} (GET, DELETE). Lists
 * include the implicit binding of the default exchange to each queue, as RabbitMQ's do. Binding needs write on
 * the destination and read on the source, as in RabbitMQ. Stateless; safe from any thread.
 */
final class BindingResources {
    private final Lookups lookups;
    private final tools.jackson.databind.ObjectMapper mapper;

    BindingResources(Lookups lookups, tools.jackson.databind.ObjectMapper mapper) {
        this.lookups = lookups;
        this.mapper = mapper;
    }

    void register(Router router) {
        router.sync("GET", "/api/bindings", this::list)
            .sync("GET", "/api/bindings/{vhost}", this::list);
        for (String kind : List.of("q", "e")) {
            String between = "/api/bindings/{vhost}/e/{source}/" + kind + "/{destination}";
            boolean toExchange = kind.equals("e");
            router.sync("GET", between, r -> between(r, toExchange))
                .sync("POST", between, r -> create(r, toExchange))
                .sync("GET", between + "/{props}", r -> ApiResponse.ok(Shapes.binding(r.variable("vhost"),
                    find(r, toExchange))))
                .sync("DELETE", between + "/{props}", r -> delete(r, toExchange));
        }
    }

    /** The virtual host's bindings, with the default exchange's implicit one to each queue first. */
    static List<Binding> all(VirtualHost vhost) {
        List<Binding> all = implicit(vhost);
        all.addAll(vhost.bindings().all());
        return all;
    }

    /** The default exchange's implicit binding to each queue. */
    static List<Binding> implicit(VirtualHost vhost) {
        List<Binding> implicit = new ArrayList<>();
        for (Queue queue : vhost.queues()) {
            implicit.add(new Binding("", Destination.queue(queue.name()), queue.name(), Map.of()));
        }
        for (io.skiffmq.core.definitions.DefinitionChange.QueueHomed queue : vhost.remoteQueues()) {
            implicit.add(new Binding("", Destination.queue(queue.name()), queue.name(), Map.of()));
        }
        return implicit;
    }

    /**
     * The bindings to {@code destination}, the default exchange's implicit one to a queue first: O(its bindings),
     * whatever the virtual host holds.
     */
    static List<Binding> to(VirtualHost vhost, Destination destination) {
        List<Binding> to = new ArrayList<>();
        if (!destination.isExchange()) {
            to.add(new Binding("", destination, destination.name(), Map.of()));
        }
        to.addAll(vhost.bindings().bindingsTo(destination));
        return to;
    }

    private static List<Binding> between(VirtualHost vhost, String source, Destination destination) {
        List<Binding> between = new ArrayList<>();
        for (Binding b : to(vhost, destination)) {
            if (b.source().equals(source)) {
                between.add(b);
            }
        }
        return between;
    }

    private ApiResponse list(ApiRequest request) {
        List<Map<String, Object>> items = new ArrayList<>();
        for (VirtualHost vhost : lookups.vhosts(request)) {
            for (Binding binding : all(vhost)) {
                items.add(Shapes.binding(vhost.name(), binding));
            }
        }
        return ApiResponse.ok(items);
    }

    private Destination destination(VirtualHost vhost, ApiRequest request, boolean toExchange) {
        String name = request.variable("destination");
        if (toExchange) {
            name = ExchangeResources.name(name);
            if (vhost.exchange(name) == null) {
                throw ApiException.notFound();
            }
            return Destination.exchange(name);
        }
        if (vhost.remoteQueue(name) == null) {
            lookups.queue(vhost, name); // or 404
        }
        return Destination.queue(name);
    }

    private String source(VirtualHost vhost, ApiRequest request) {
        String source = ExchangeResources.name(request.variable("source"));
        if (vhost.exchange(source) == null) {
            throw ApiException.notFound();
        }
        return source;
    }

    private ApiResponse between(ApiRequest request, boolean toExchange) {
        VirtualHost vhost = lookups.vhost(request.caller(), request.variable("vhost"));
        String source = source(vhost, request);
        Destination destination = destination(vhost, request, toExchange);
        List<Map<String, Object>> items = new ArrayList<>();
        for (Binding b : between(vhost, source, destination)) {
            items.add(Shapes.binding(vhost.name(), b));
        }
        return ApiResponse.ok(items);
    }

    private ApiResponse create(ApiRequest request, boolean toExchange) {
        VirtualHost vhost = lookups.vhost(request.caller(), request.variable("vhost"));
        String source = source(vhost, request);
        Destination destination = destination(vhost, request, toExchange);
        Map<String, Object> body = request.json(mapper);
        Binding binding = new Binding(source, destination, Bodies.string(body, "routing_key", ""),
            Bodies.arguments(body));
        if (source.isEmpty()) {
            throw new ApiException(403, "access_refused", "operation not permitted on the default exchange");
        }
        requireBinding(request.caller(), vhost, binding);
        vhost.bind(binding);
        return new ApiResponse(201, null, Map.of("Location", BindingKeys.propertiesKey(binding)));
    }

    private Binding find(ApiRequest request, boolean toExchange) {
        VirtualHost vhost = lookups.vhost(request.caller(), request.variable("vhost"));
        String source = source(vhost, request);
        Destination destination = destination(vhost, request, toExchange);
        for (Binding b : between(vhost, source, destination)) {
            if (BindingKeys.propertiesKey(b).equals(request.variable("props"))) {
                return b;
            }
        }
        throw ApiException.notFound();
    }

    private ApiResponse delete(ApiRequest request, boolean toExchange) {
        VirtualHost vhost = lookups.vhost(request.caller(), request.variable("vhost"));
        Binding binding;
        try {
            binding = find(request, toExchange);
        } catch (ApiException e) {
            if (e.status() != 404 || !vhost.clustered()) {
                throw e;
            }
            lookups.caughtUp(vhost); // bound on another node and not applied here yet?
            binding = find(request, toExchange);
        }
        if (binding.source().isEmpty()) {
            throw new ApiException(403, "access_refused", "operation not permitted on the default exchange");
        }
        requireBinding(request.caller(), vhost, binding);
        vhost.unbind(binding);
        return ApiResponse.noContent();
    }

    private void requireBinding(Caller caller, VirtualHost vhost, Binding binding) {
        Destination d = binding.destination();
        lookups.require(caller, vhost.name(), Permission.WRITE,
            d.isExchange() ? Access.Resource.EXCHANGE : Access.Resource.QUEUE, d.name());
        lookups.require(caller, vhost.name(), Permission.READ, Access.Resource.EXCHANGE, binding.source());
    }
}
