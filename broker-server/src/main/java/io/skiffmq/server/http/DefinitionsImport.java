package io.skiffmq.server.http;

import io.skiffmq.core.BrokerException;
import io.skiffmq.core.Exchange;
import io.skiffmq.core.VirtualHost;
import io.skiffmq.core.policy.PolicyKeys;
import io.skiffmq.core.queue.QueueDeclaration;
import io.skiffmq.core.routing.Binding;
import io.skiffmq.core.routing.Destination;
import io.skiffmq.server.Admin;
import io.skiffmq.server.Broker;
import io.skiffmq.core.definitions.BrokerDefinitions.UserDefinition;
import io.skiffmq.core.definitions.BrokerDefinitions.VhostDefinition;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Applies a RabbitMQ definitions document, as the HTTP API exports it or as {@code rabbitmqctl export_definitions}
 * writes it, in RabbitMQ's order: virtual hosts (with their metadata), users, permissions, topic permissions,
 * global parameters (kept, used by nothing), {@code vhost-limits} and {@code operator_policy} parameters,
 * policies, exchanges, queues (the virtual host's default queue type applies), bindings. What exists is kept or
 * updated (an equivalent queue or exchange is left alone, a different one is refused; a policy of the same name is
 * replaced).
 *
 * <p>An item we cannot honour does not stop the others: a queue of a type SkiffMQ lacks, a policy key it does not
 * know (the policy is set without it), a parameter of a component it has none of, tracing. Each is named in
 * {@link #notHonoured}, which the request answers as a 400 once everything else is in. A binding to or
 * from an exchange that is neither there nor in the document is skipped, as RabbitMQ 3.x skips it: the exports of
 * {@code rabbitmqctl} leave internal exchanges out but keep their bindings. One per request, on the thread that
 * runs it.
 */
final class DefinitionsImport {
    private static final System.Logger LOG = System.getLogger(DefinitionsImport.class.getName());
    private static final Object OWNER = new Object();
    private final Broker broker;
    private final String vhost;
    /** What could not be honoured, one line each, in the document's order. */
    private final List<String> notHonoured = new ArrayList<>();

    /**
     * @param vhost the virtual host every queue, exchange, binding, policy and parameter goes to
     *        ({@code POST /api/definitions/{vhost}}), or null to take each item's {@code vhost}
     */
    DefinitionsImport(Broker broker, String vhost) {
        this.broker = broker;
        this.vhost = vhost;
    }

    /** Applies one item of a section. */
    private interface Step {
        void run(Map<String, Object> item);
    }

    /** Applies {@code document}, then answers with a 400 listing what could not be honoured, if anything. */
    void apply(Map<String, Object> document) {
        Admin admin = broker.admin();
        if (vhost == null) {
            each(document, "vhosts", v -> "virtual host '" + v.get("name") + "'", v -> importVhost(admin, v));
            each(document, "users", u -> "user '" + u.get("name") + "'", u -> importUser(admin, u));
            each(document, "permissions", p -> "permissions of user '" + p.get("user") + "' in vhost '"
                + p.get("vhost") + "'", p -> admin.setPermissions(Bodies.required(p, "user"),
                    Bodies.required(p, "vhost"), Bodies.required(p, "configure"), Bodies.required(p, "write"),
                    Bodies.required(p, "read")));
            each(document, "topic_permissions", p -> "topic permissions of user '" + p.get("user")
                + "' in vhost '" + p.get("vhost") + "'", p -> admin.setTopicPermissions(Bodies.required(p, "user"),
                    Bodies.required(p, "vhost"), Bodies.string(p, "exchange", ""), Bodies.required(p, "write"),
                    Bodies.required(p, "read")));
            each(document, "global_parameters", p -> "global parameter '" + p.get("name") + "'",
                p -> importGlobalParameter(admin, p));
        }
        each(document, "parameters", p -> "parameter '" + p.get("name") + "' of component '" + p.get("component")
            + "' in vhost '" + vhostOf(p) + "'", p -> importParameter(admin, p));
        each(document, "policies", p -> "policy '" + p.get("name") + "' in vhost '" + vhostOf(p) + "'",
            p -> importPolicy(target(p), Bodies.required(p, "name"), p, false));
        List<Map<String, Object>> exchanges = items(document, "exchanges");
        each(document, "exchanges", e -> "exchange '" + e.get("name") + "' in vhost '" + vhostOf(e) + "'",
            e -> target(e).declareExchange(new Exchange(Bodies.required(e, "name"), exchangeType(e),
                Bodies.flag(e, "durable", true), Bodies.flag(e, "auto_delete", false),
                Bodies.flag(e, "internal", false), Bodies.arguments(e))));
        each(document, "queues", q -> "queue '" + q.get("name") + "' in vhost '" + vhostOf(q) + "'",
            q -> {
                VirtualHost target = target(q);
                target.declareQueue(target.withDefaultType(new QueueDeclaration(Bodies.required(q, "name"),
                    Bodies.flag(q, "durable", true), false, Bodies.flag(q, "auto_delete", false),
                    Bodies.arguments(q))), OWNER);
            });
        Set<List<String>> named = new HashSet<>();
        for (Map<String, Object> e : exchanges) {
            named.add(List.of(vhostOf(e), String.valueOf(e.get("name"))));
        }
        each(document, "bindings", b -> "binding of '" + b.get("source") + "' to " + b.get("destination_type")
            + " '" + b.get("destination") + "' in vhost '" + vhostOf(b) + "'", b -> importBinding(b, named));
        if (!notHonoured.isEmpty()) {
            StringBuilder reason = new StringBuilder("Imported, except for ").append(notHonoured.size())
                .append(notHonoured.size() == 1 ? " item" : " items").append(" SkiffMQ could not honour:");
            notHonoured.forEach(item -> reason.append("\n- ").append(item));
            throw ApiException.badRequest(reason.toString());
        }
    }

    private void each(Map<String, Object> document, String section,
            java.util.function.Function<Map<String, Object>, String> what, Step step) {
        for (Map<String, Object> entry : items(document, section)) {
            try {
                step.run(entry);
            } catch (ApiException | BrokerException | IllegalArgumentException e) {
                String item = what.apply(entry);
                String why = String.valueOf(e.getMessage());
                // a refusal that names the object already ("queue 'q' in vhost '/': …") is kept as it is
                notHonoured.add(why.startsWith(item) ? why : item + ": " + why);
            }
        }
    }

    private void importVhost(Admin admin, Map<String, Object> v) {
        String name = Bodies.required(v, "name");
        VhostDefinition before = broker.accessControl().vhost(name);
        VhostMetadata metadata = VhostMetadata.of(v, v.get("metadata") instanceof Map<?, ?> m ? m : Map.of(),
            before);
        admin.createVhost(name);
        metadata.set(admin, name);
        if (Bodies.flag(v, "tracing", false)) {
            notHonoured.add("virtual host '" + name + "': tracing is not implemented by SkiffMQ");
        }
        // RabbitMQ 4.1's update_metadata: the key sets or lifts the protection, its absence leaves it as it is
        if (v.get("metadata") instanceof Map<?, ?> m && m.get("protected_from_deletion") instanceof Boolean p) {
            admin.setVhostProtection(name, p);
        }
    }

    private void importGlobalParameter(Admin admin, Map<String, Object> p) {
        String name = Bodies.required(p, "name");
        admin.setGlobalParameter(name, GlobalParameterResources.text(p.get("value")));
        if (name.equals("cluster_name")) {
            notHonoured.add("global parameter 'cluster_name': kept, but it does not rename this node or cluster "
                + "(see /api/cluster-name)");
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
            throw ApiException.badRequest("neither password_hash nor password");
        }
        Map<String, Object> limits = u.get("limits") == null ? Map.of() : PolicyBodies.definition(u.get("limits"));
        if (!limits.isEmpty()) {
            UserDefinition user = broker.accessControl().user(name);
            admin.setUserLimits(name, limit(limits, "max-connections", user.maxConnections()),
                limit(limits, "max-channels", user.maxChannels()));
        }
    }

    private void importParameter(Admin admin, Map<String, Object> p) {
        Object component = p.get("component");
        if ("operator_policy".equals(component)) {
            Map<String, Object> value = PolicyBodies.definition(p.get("value"));
            importPolicy(target(p), Bodies.required(p, "name"), value, true);
            return;
        }
        if (!"vhost-limits".equals(component)) {
            throw ApiException.badRequest("SkiffMQ has no '" + component + "' component");
        }
        String name = vhostOf(p);
        VhostDefinition definition = broker.accessControl().vhost(name);
        if (definition == null) {
            throw ApiException.badRequest("no virtual host '" + name + "'");
        }
        Map<String, Object> value = PolicyBodies.definition(p.get("value"));
        admin.setVhostLimits(name, limit(value, "max-connections", definition.maxConnections()),
            limit(value, "max-queues", definition.maxQueues()));
    }

    /**
     * Sets a policy without the keys SkiffMQ does not know (each named in {@link #notHonoured}), as long as any
     * key is left: a whole policy refused for one key would leave its queues without the others.
     */
    private void importPolicy(VirtualHost target, String name, Map<String, Object> body, boolean operator) {
        String what = (operator ? "operator policy '" : "policy '") + name + "' in vhost '" + target.name() + "'";
        Map<String, Object> definition = PolicyBodies.definition(body.get("definition"));
        Map<String, Object> known = new LinkedHashMap<>();
        Map<String, Object> unknown = new LinkedHashMap<>();
        definition.forEach((key, value) -> (PolicyKeys.known(key, operator) ? known : unknown).put(key, value));
        if (!unknown.isEmpty()) {
            String refusal = refusal(name, body, unknown, operator);
            if (known.isEmpty()) {
                notHonoured.add(what + ": " + refusal);
                return;
            }
            notHonoured.add(what + ": " + refusal + "; set without " + (unknown.size() == 1 ? "it" : "them"));
        }
        Map<String, Object> kept = new LinkedHashMap<>(body);
        kept.put("definition", known);
        try {
            target.setPolicy(PolicyBodies.policy(name, kept, operator), operator);
        } catch (IllegalArgumentException e) {
            notHonoured.add(what + ": " + e.getMessage());
        }
    }

    /** RabbitMQ's words for a policy of {@code unknown} keys alone. */
    private static String refusal(String name, Map<String, Object> body, Map<String, Object> unknown,
            boolean operator) {
        Map<String, Object> alone = new LinkedHashMap<>(body);
        alone.put("definition", unknown);
        try {
            PolicyBodies.policy(name, alone, operator);
            return unknown.keySet() + " are not recognised policy settings";
        } catch (IllegalArgumentException e) {
            return e.getMessage();
        }
    }

    /**
     * Binds, or skips (as RabbitMQ 3.x does, with a warning in our log) a binding whose source or destination
     * exchange is neither in the virtual host nor in the document: {@code rabbitmqctl export_definitions} leaves
     * internal exchanges out and keeps their bindings.
     */
    private void importBinding(Map<String, Object> b, Set<List<String>> named) {
        VirtualHost target = target(b);
        String source = Bodies.required(b, "source");
        String destination = Bodies.required(b, "destination");
        boolean toExchange = "exchange".equals(Bodies.string(b, "destination_type", "queue"));
        for (String exchange : toExchange ? List.of(source, destination) : List.of(source)) {
            if (!exchange.isEmpty() && target.exchange(exchange) == null
                    && !named.contains(List.of(target.name(), exchange))) {
                LOG.log(System.Logger.Level.WARNING, "definitions import: skipped the binding of ''{0}'' to ''{1}'' "
                    + "in vhost ''{2}'': exchange ''{3}'' is not in the document (an internal exchange left out by "
                    + "rabbitmqctl export_definitions?)", source, destination, target.name(), exchange);
                return;
            }
        }
        target.bind(new Binding(source, toExchange ? Destination.exchange(destination)
            : Destination.queue(destination), Bodies.string(b, "routing_key", ""), Bodies.arguments(b)));
    }

    private static long limit(Map<?, ?> limits, String name, long otherwise) {
        Object value = limits.get(name);
        return value instanceof Number n ? n.longValue() : otherwise;
    }

    private String vhostOf(Map<String, Object> item) {
        return vhost != null ? vhost : String.valueOf(item.get("vhost"));
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
