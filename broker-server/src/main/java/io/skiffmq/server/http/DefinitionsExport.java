package io.skiffmq.server.http;

import io.skiffmq.core.Exchange;
import io.skiffmq.core.VirtualHost;
import io.skiffmq.core.policy.Policy;
import io.skiffmq.core.queue.Queue;
import io.skiffmq.core.routing.Binding;
import io.skiffmq.server.Broker;
import io.skiffmq.server.config.BrokerConfig;
import io.skiffmq.core.definitions.BrokerDefinitions;
import io.skiffmq.core.definitions.BrokerDefinitions.PermissionDefinition;
import io.skiffmq.core.definitions.BrokerDefinitions.TopicPermissionDefinition;
import io.skiffmq.core.definitions.BrokerDefinitions.UserDefinition;
import io.skiffmq.core.definitions.BrokerDefinitions.VhostDefinition;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * RabbitMQ's definitions document from the broker's state: users (with {@code password_hash},
 * {@code hashing_algorithm}, {@code tags}, {@code limits}), virtual hosts, permissions, topic permissions,
 * virtual host limits as {@code vhost-limits} parameters, policies, operator policies as {@code operator_policy}
 * parameters, and the non-exclusive queues, the exchanges (not the
 * default and {@code amq.*} ones) and the explicit bindings. Stateless.
 */
final class DefinitionsExport {
    private DefinitionsExport() {
    }

    /** Everything the broker has. */
    static Map<String, Object> all(Broker broker) {
        BrokerDefinitions d = broker.admin().definitions();
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("rabbit_version", broker.config().rabbitmqVersion());
        out.put("rabbitmq_version", broker.config().rabbitmqVersion());
        out.put("product_name", "SkiffMQ");
        out.put("product_version", BrokerConfig.SKIFFMQ_VERSION);
        List<Map<String, Object>> users = new ArrayList<>();
        for (UserDefinition user : d.users()) {
            users.add(Shapes.user(user));
        }
        out.put("users", users);
        List<Map<String, Object>> vhosts = new ArrayList<>();
        List<Map<String, Object>> parameters = new ArrayList<>();
        for (VhostDefinition vhost : d.vhosts()) {
            Map<String, Object> v = new LinkedHashMap<>();
            v.put("name", vhost.name());
            v.put("description", vhost.description());
            v.put("tags", vhost.tags());
            v.put("default_queue_type", Shapes.defaultQueueType(vhost));
            v.put("protected_from_deletion", vhost.protectedFromDeletion());
            v.put("metadata", Shapes.vhostMetadata(vhost));
            vhosts.add(v);
            Map<String, Object> limits = vhostLimits(vhost);
            if (!limits.isEmpty()) {
                parameters.add(limitsParameter(vhost.name(), limits));
            }
        }
        out.put("vhosts", vhosts);
        List<Map<String, Object>> permissions = new ArrayList<>();
        for (PermissionDefinition p : d.permissions()) {
            permissions.add(Shapes.permission(p));
        }
        out.put("permissions", permissions);
        List<Map<String, Object>> topicPermissions = new ArrayList<>();
        for (TopicPermissionDefinition p : d.topicPermissions()) {
            topicPermissions.add(Shapes.topicPermission(p));
        }
        out.put("topic_permissions", topicPermissions);
        List<VirtualHost> all = new ArrayList<>();
        for (VhostDefinition vhost : d.vhosts()) {
            VirtualHost v = broker.vhost(vhost.name());
            if (v != null) {
                all.add(v);
            }
        }
        out.put("parameters", parameters);
        out.put("global_parameters", GlobalParameterResources.all(d.globalParameters()));
        putPolicies(out, all);
        putTopology(out, all);
        return out;
    }

    /** One virtual host's topology, as RabbitMQ exports {@code /api/definitions/{vhost}}. */
    static Map<String, Object> of(Broker broker, VirtualHost vhost) {
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("rabbit_version", broker.config().rabbitmqVersion());
        out.put("rabbitmq_version", broker.config().rabbitmqVersion());
        VhostDefinition definition = broker.accessControl().vhost(vhost.name());
        Map<String, Object> limits = definition == null ? Map.of() : vhostLimits(definition);
        List<Map<String, Object>> parameters = new ArrayList<>();
        if (!limits.isEmpty()) {
            parameters.add(limitsParameter(vhost.name(), limits));
        }
        out.put("parameters", parameters);
        putPolicies(out, List.of(vhost));
        putTopology(out, List.of(vhost));
        return out;
    }

    /**
     * The virtual hosts' policies under {@code policies}, and their operator policies added to {@code parameters},
     * of component {@code operator_policy}, as RabbitMQ exports them.
     */
    @SuppressWarnings("unchecked")
    private static void putPolicies(Map<String, Object> out, List<VirtualHost> vhosts) {
        List<Map<String, Object>> parameters = (List<Map<String, Object>>) out.get("parameters");
        List<Map<String, Object>> policies = new ArrayList<>();
        for (VirtualHost vhost : vhosts) {
            vhost.policies().list(false).forEach(p -> policies.add(PolicyResources.shape(vhost.name(), p)));
            for (Policy p : vhost.policies().list(true)) {
                parameters.add(ParameterResources.shape(vhost.name(), "operator_policy", p.name(),
                    ParameterResources.policyValue(p)));
            }
        }
        out.put("policies", policies);
    }

    private static void putTopology(Map<String, Object> out, List<VirtualHost> vhosts) {
        List<Map<String, Object>> queues = new ArrayList<>();
        List<Map<String, Object>> exchanges = new ArrayList<>();
        List<Map<String, Object>> bindings = new ArrayList<>();
        for (VirtualHost vhost : vhosts) {
            for (Queue queue : vhost.queues()) {
                if (!queue.declaration().exclusive()) {
                    Map<String, Object> q = new LinkedHashMap<>();
                    q.put("name", queue.name());
                    q.put("vhost", vhost.name());
                    q.put("durable", queue.durable());
                    q.put("auto_delete", queue.declaration().autoDelete());
                    q.put("arguments", JsonValues.of(queue.arguments()));
                    queues.add(q);
                }
            }
            for (io.skiffmq.core.definitions.DefinitionChange.QueueHomed remote : vhost.remoteQueues()) {
                Map<String, Object> q = Shapes.remoteQueue(vhost.name(), remote); // homed on another node
                q.remove("type");
                q.remove("exclusive");
                q.remove("node");
                queues.add(q);
            }
            for (Exchange exchange : vhost.exchanges()) {
                if (!exchange.isDefault() && !exchange.name().startsWith("amq.")) {
                    Map<String, Object> e = Shapes.exchange(vhost.name(), exchange);
                    e.remove("policy"); // state, not definition
                    exchanges.add(e);
                }
            }
            for (Binding binding : vhost.bindings().all()) {
                Map<String, Object> b = Shapes.binding(vhost.name(), binding);
                b.remove("properties_key");
                bindings.add(b);
            }
        }
        out.put("queues", queues);
        out.put("exchanges", exchanges);
        out.put("bindings", bindings);
    }

    /** A virtual host's limits as RabbitMQ's {@code vhost-limits} value: those set, none when there are none. */
    static Map<String, Object> vhostLimits(VhostDefinition vhost) {
        Map<String, Object> limits = new LinkedHashMap<>();
        if (vhost.maxConnections() >= 0) {
            limits.put("max-connections", vhost.maxConnections());
        }
        if (vhost.maxQueues() >= 0) {
            limits.put("max-queues", vhost.maxQueues());
        }
        return limits;
    }

    private static Map<String, Object> limitsParameter(String vhost, Map<String, Object> limits) {
        return ParameterResources.shape(vhost, "vhost-limits", "limits", limits);
    }
}
