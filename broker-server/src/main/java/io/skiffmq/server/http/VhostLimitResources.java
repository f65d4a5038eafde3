package io.skiffmq.server.http;

import io.skiffmq.core.definitions.BrokerDefinitions.VhostDefinition;
import io.skiffmq.core.policy.ErlangFormat;
import io.skiffmq.server.Admin;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import tools.jackson.databind.ObjectMapper;

/**
 * {@code /api/vhost-limits}: RabbitMQ's virtual host limits ({@code max-connections}, {@code max-queues}) one at a
 * time, as {@code rabbitmqadmin} lists, declares and deletes them ({@code rabbit_mgmt_wm_limits},
 * {@code rabbit_mgmt_wm_limit}): GET for those who see the virtual host, PUT and DELETE for administrators.
 * Stateless; safe from any thread.
 */
final class VhostLimitResources {
    private static final List<String> NAMES = List.of("max-connections", "max-queues");
    private final Lookups lookups;
    private final ObjectMapper mapper;

    VhostLimitResources(Lookups lookups, ObjectMapper mapper) {
        this.lookups = lookups;
        this.mapper = mapper;
    }

    void register(Router router) {
        router.sync("GET", "/api/vhost-limits", r -> {
            List<Map<String, Object>> all = new ArrayList<>();
            for (VhostDefinition vhost : admin().definitions().vhosts()) {
                if (r.caller().sees(lookups.broker().accessControl(), vhost.name())) {
                    all.addAll(shape(vhost));
                }
            }
            return ApiResponse.ok(all);
        }).sync("GET", "/api/vhost-limits/{vhost}", r -> ApiResponse.ok(shape(definition(r))))
            .sync("PUT", "/api/vhost-limits/{vhost}/{name}", r -> {
                r.caller().requireAdministrator();
                VhostDefinition vhost = definition(r);
                Map<String, Object> body = r.json(mapper);
                if (!body.containsKey("value")) {
                    throw ApiException.badRequest("[{key_missing,value}]");
                }
                String name = r.variable("name");
                Object value = body.get("value");
                if (!NAMES.contains(name)) {
                    throw invalid("Unrecognised terms [{" + ErlangFormat.of(name) + "," + ErlangFormat.of(value)
                        + "}] in limits");
                }
                if (!(value instanceof Integer || value instanceof Long)) {
                    throw invalid(name + " should be a number, actually was " + ErlangFormat.of(value));
                }
                set(vhost, name, ((Number) value).longValue());
                return ApiResponse.noContent();
            }).sync("DELETE", "/api/vhost-limits/{vhost}/{name}", r -> {
                r.caller().requireAdministrator();
                VhostDefinition vhost = definition(r);
                if (NAMES.contains(r.variable("name"))) {
                    set(vhost, r.variable("name"), -1);
                }
                return ApiResponse.noContent();
            });
    }

    private Admin admin() {
        return lookups.broker().admin();
    }

    private VhostDefinition definition(ApiRequest r) {
        lookups.vhost(r.caller(), r.variable("vhost")); // 404, or 401 for a virtual host the caller may not see
        return lookups.broker().accessControl().vhost(r.variable("vhost"));
    }

    private void set(VhostDefinition vhost, String name, long value) {
        boolean connections = name.equals("max-connections");
        admin().setVhostLimits(vhost.name(), connections ? value : vhost.maxConnections(),
            connections ? vhost.maxQueues() : value);
    }

    private static ApiException invalid(String why) {
        return ApiException.badRequest("Validation failed\n\n" + why + "\n");
    }

    /** RabbitMQ's {@code {vhost, value}}, none when the virtual host has no limit. */
    private static List<Map<String, Object>> shape(VhostDefinition vhost) {
        Map<String, Object> value = DefinitionsExport.vhostLimits(vhost);
        if (value.isEmpty()) {
            return List.of();
        }
        Map<String, Object> shape = new LinkedHashMap<>();
        shape.put("vhost", vhost.name());
        shape.put("value", value);
        return List.of(shape);
    }
}
