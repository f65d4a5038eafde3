package io.skiffmq.server.http;

import io.skiffmq.core.Exchange;
import io.skiffmq.core.VirtualHost;
import io.skiffmq.core.queue.QueueDeclaration;
import io.skiffmq.core.routing.Binding;
import io.skiffmq.core.routing.Destination;
import io.skiffmq.server.Admin;
import io.skiffmq.server.Broker;
import io.skiffmq.core.definitions.BrokerDefinitions.UserDefinition;
import io.skiffmq.core.definitions.BrokerDefinitions.VhostDefinition;
import java.util.List;
import java.util.Map;

/**
 * Applies a RabbitMQ definitions document, in RabbitMQ's order: virtual hosts, users, permissions, topic
 * permissions, {@code vhost-limits} and {@code operator_policy} parameters, policies, exchanges, queues, bindings.
 * What exists is kept or updated (an equivalent queue or exchange is left alone, a different one is a 400; a
 * policy of the same name is replaced). Sections we have no counterpart for (other parameters, global parameters)
 * must be empty or absent: a 400 names them; so does a policy RabbitMQ would refuse. One per request.
 *
 * @param vhost the virtual host every queue, exchange and binding goes to ({@code POST /api/definitions/{vhost}}),
 *        or null to take each item's {@code vhost}
 */
record DefinitionsImport(Broker broker, String vhost) {
    private static final Object OWNER = new Object();

    void apply(Map<String, Object> document) {
        refuseUnsupported(document, "global_parameters");
        Admin admin = broker.admin();
        if (vhost == null) {
            for (Map<String, Object> v : items(document, "vhosts")) {
                admin.createVhost(Bodies.required(v, "name"));
            }
            for (Map<String, Object> u : items(document, "users")) {
                importUser(admin, u);
            }
            for (Map<String, Object> p : items(document, "permissions")) {
                admin.setPermissions(Bodies.required(p, "user"), Bodies.required(p, "vhost"),
                    Bodies.required(p, "configure"), Bodies.required(p, "write"), Bodies.required(p, "read"));
            }
            for (Map<String, Object> p : items(document, "topic_permissions")) {
                admin.setTopicPermissions(Bodies.required(p, "user"), Bodies.required(p, "vhost"),
                    Bodies.string(p, "exchange", ""), Bodies.required(p, "write"), Bodies.required(p, "read"));
            }
        }
        for (Map<String, Object> p : items(document, "parameters")) {
            importParameter(admin, p);
        }
        for (Map<String, Object> p : items(document, "policies")) {
            importPolicy(target(p), Bodies.required(p, "name"), p, false);
        }
        for (Map<String, Object> e : items(document, "exchanges")) {
            target(e).declareExchange(new Exchange(Bodies.required(e, "name"), exchangeType(e),
                Bodies.flag(e, "durable", true), Bodies.flag(e, "auto_delete", false),
                Bodies.flag(e, "internal", false), Bodies.arguments(e)));
        }
        for (Map<String, Object> q : items(document, "queues")) {
            target(q).declareQueue(new QueueDeclaration(Bodies.required(q, "name"), Bodies.flag(q, "durable", true),
                false, Bodies.flag(q, "auto_delete", false), Bodies.arguments(q)), OWNER);
        }
        for (Map<String, Object> b : items(document, "bindings")) {
            String destination = Bodies.required(b, "destination");
            boolean toExchange = "exchange".equals(Bodies.string(b, "destination_type", "queue"));
            target(b).bind(new Binding(Bodies.required(b, "source"),
                toExchange ? Destination.exchange(destination) : Destination.queue(destination),
                Bodies.string(b, "routing_key", ""), Bodies.arguments(b)));
        }
    }

    private void importUser(Admin admin, Map<String, Object> u) {
        String name = Bodies.required(u, "name");
        List<String> tags = AccessResources.tags(u.get("tags"));
        if (u.get("password_hash") != null) {
            admin.putUser(name, u.get("password_hash").toString(),
                Bodies.string(u, "hashing_algorithm", "rabbit_password_hashing_sha256"), tags);
        } else if (u.get("password") != null) {
            admin.putUser(name, u.get("password").toString(), tags);
        } else {
            throw ApiException.badRequest("user '" + name + "' has neither password_hash nor password");
        }
        Object limits = u.get("limits");
        if (limits instanceof Map<?, ?> map && !map.isEmpty()) {
            UserDefinition user = broker.accessControl().user(name);
            admin.setUserLimits(name, limit(map, "max-connections", user.maxConnections()),
                limit(map, "max-channels", user.maxChannels()));
        }
    }

    private void importParameter(Admin admin, Map<String, Object> p) {
        if ("operator_policy".equals(p.get("component"))) {
            importPolicy(target(p), Bodies.required(p, "name"), p.get("value") instanceof Map<?, ?> m
                ? castMap(m) : Map.of(), true);
            return;
        }
        if (!"vhost-limits".equals(p.get("component"))) {
            throw ApiException.badRequest("parameters of component '" + p.get("component") + "' are not supported");
        }
        String name = vhost != null ? vhost : Bodies.required(p, "vhost");
        VhostDefinition definition = broker.accessControl().vhost(name);
        if (definition == null) {
            throw ApiException.badRequest("no virtual host '" + name + "'");
        }
        Map<?, ?> value = p.get("value") instanceof Map<?, ?> m ? m : Map.of();
        admin.setVhostLimits(name, limit(value, "max-connections", definition.maxConnections()),
            limit(value, "max-queues", definition.maxQueues()));
    }

    private static void importPolicy(VirtualHost target, String name, Map<String, Object> body, boolean operator) {
        try {
            target.setPolicy(PolicyBodies.policy(name, body, operator), operator);
        } catch (IllegalArgumentException e) {
            throw ApiException.badRequest((operator ? "operator policy '" : "policy '") + name + "' in vhost '"
                + target.name() + "': " + e.getMessage());
        }
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> castMap(Map<?, ?> map) {
        return (Map<String, Object>) map;
    }

    private static long limit(Map<?, ?> limits, String name, long otherwise) {
        Object value = limits.get(name);
        return value instanceof Number n ? n.longValue() : otherwise;
    }

    private VirtualHost target(Map<String, Object> item) {
        String name = vhost != null ? vhost : Bodies.required(item, "vhost");
        VirtualHost target = broker.vhost(name);
        if (target == null) {
            throw ApiException.badRequest("no virtual host '" + name + "'");
        }
        return target;
    }

    private static Exchange.Type exchangeType(Map<String, Object> e) {
        try {
            return Exchange.Type.of(Bodies.required(e, "type"));
        } catch (IllegalArgumentException x) {
            throw ApiException.badRequest("invalid exchange type: " + e.get("type"));
        }
    }

    private static void refuseUnsupported(Map<String, Object> document, String section) {
        Object items = document.get(section);
        if (items instanceof List<?> list && !list.isEmpty()) {
            throw ApiException.badRequest(section + " are not supported");
        }
    }

    @SuppressWarnings("unchecked")
    private static List<Map<String, Object>> items(Map<String, Object> document, String section) {
        Object items = document.get(section);
        if (items == null) {
            return List.of();
        }
        if (!(items instanceof List<?> list) || list.stream().anyMatch(i -> !(i instanceof Map<?, ?>))) {
            throw ApiException.badRequest(section + " must be a list of objects");
        }
        return (List<Map<String, Object>>) items;
    }
}
