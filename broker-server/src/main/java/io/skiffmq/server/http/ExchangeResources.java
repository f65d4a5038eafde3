package io.skiffmq.server.http;

import io.skiffmq.core.Exchange;
import io.skiffmq.core.VirtualHost;
import io.skiffmq.core.routing.Binding;
import io.skiffmq.core.routing.Destination;
import io.skiffmq.server.authz.Access;
import io.skiffmq.server.authz.Permission;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * {@code /api/exchanges}: list (all, per virtual host, paged), one, declare ({@code PUT}), delete, publish
 * ({@link ExchangePublish}), and an exchange's bindings as source or destination. The default exchange is {@code amq.default} in paths and
 * {@code ""} in bodies, as in RabbitMQ. Declaring and deleting need the caller's configure permission. Stateless;
 * safe from any thread.
 */
final class ExchangeResources {
    private final Lookups lookups;
    private final tools.jackson.databind.ObjectMapper mapper;

    ExchangeResources(Lookups lookups, tools.jackson.databind.ObjectMapper mapper) {
        this.lookups = lookups;
        this.mapper = mapper;
    }

    void register(Router router) {
        router.sync("GET", "/api/exchanges", this::list)
            .sync("GET", "/api/exchanges/{vhost}", this::list)
            .sync("GET", "/api/exchanges/{vhost}/{name}", this::one)
            .sync("PUT", "/api/exchanges/{vhost}/{name}", this::declare)
            .sync("DELETE", "/api/exchanges/{vhost}/{name}", this::delete)
            .add("POST", "/api/exchanges/{vhost}/{name}/publish", new ExchangePublish(lookups, mapper)::publish)
            .sync("GET", "/api/exchanges/{vhost}/{name}/bindings/source", r -> bindings(r, true))
            .sync("GET", "/api/exchanges/{vhost}/{name}/bindings/destination", r -> bindings(r, false));
    }

    /** {@code amq.default} in a path is the default exchange, {@code ""}. */
    static String name(String inPath) {
        return inPath.equals(Access.DEFAULT_EXCHANGE) ? "" : inPath;
    }

    private ApiResponse list(ApiRequest request) {
        List<Map<String, Object>> items = new ArrayList<>();
        for (VirtualHost vhost : lookups.vhosts(request)) {
            for (Exchange exchange : vhost.exchanges()) {
                items.add(Shapes.exchange(vhost.name(), exchange));
            }
        }
        return Paging.list(items, request.query());
    }

    private Exchange existing(VirtualHost vhost, String name) {
        Exchange exchange = vhost.exchange(name(name));
        if (exchange == null) {
            throw ApiException.notFound();
        }
        return exchange;
    }

    private ApiResponse one(ApiRequest request) {
        VirtualHost vhost = lookups.vhost(request.caller(), request.variable("vhost"));
        return ApiResponse.ok(Shapes.exchange(vhost.name(), existing(vhost, request.variable("name"))));
    }

    private ApiResponse declare(ApiRequest request) {
        VirtualHost vhost = lookups.vhost(request.caller(), request.variable("vhost"));
        String name = name(request.variable("name"));
        Map<String, Object> body = request.json(mapper);
        lookups.require(request.caller(), vhost.name(), Permission.CONFIGURE, Access.Resource.EXCHANGE,
            name.isEmpty() ? Access.DEFAULT_EXCHANGE : name);
        Exchange.Type type;
        try {
            type = Exchange.Type.of(Bodies.required(body, "type"));
        } catch (IllegalArgumentException e) {
            throw ApiException.badRequest("invalid exchange type: " + body.get("type"));
        }
        boolean existed = vhost.exchange(name) != null;
        vhost.declareExchange(new Exchange(name, type, Bodies.flag(body, "durable", true),
            Bodies.flag(body, "auto_delete", false), Bodies.flag(body, "internal", false), Bodies.arguments(body)));
        return ApiResponse.createdOr(existed);
    }

    private ApiResponse delete(ApiRequest request) {
        VirtualHost vhost = lookups.vhost(request.caller(), request.variable("vhost"));
        if (vhost.exchange(name(request.variable("name"))) == null) {
            lookups.caughtUp(vhost); // declared on another node and not applied here yet?
        }
        Exchange exchange = existing(vhost, request.variable("name"));
        lookups.require(request.caller(), vhost.name(), Permission.CONFIGURE, Access.Resource.EXCHANGE,
            exchange.isDefault() ? Access.DEFAULT_EXCHANGE : exchange.name());
        if (Boolean.parseBoolean(request.query().get("if-unused"))
            && vhost.bindings().hasBindingsFrom(exchange.name())) {
            throw ApiException.badRequest("exchange '" + exchange.name() + "' in vhost '" + vhost.name()
                + "' is in use");
        }
        vhost.deleteExchange(exchange.name());
        return ApiResponse.noContent();
    }

    private ApiResponse bindings(ApiRequest request, boolean asSource) {
        VirtualHost vhost = lookups.vhost(request.caller(), request.variable("vhost"));
        Exchange exchange = existing(vhost, request.variable("name"));
        List<Map<String, Object>> items = new ArrayList<>();
        List<Binding> bindings;
        if (!asSource) {
            bindings = vhost.bindings().bindingsTo(Destination.exchange(exchange.name()));
        } else if (exchange.isDefault()) {
            bindings = BindingResources.implicit(vhost);
        } else {
            bindings = vhost.bindings().bindingsFrom(exchange.name());
        }
        for (Binding b : bindings) {
            items.add(Shapes.binding(vhost.name(), b));
        }
        return ApiResponse.ok(items);
    }
}
