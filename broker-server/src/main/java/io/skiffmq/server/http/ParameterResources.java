package io.skiffmq.server.http;

import io.skiffmq.core.VirtualHost;
import io.skiffmq.core.definitions.BrokerDefinitions.VhostDefinition;
import io.skiffmq.core.policy.ErlangFormat;
import io.skiffmq.core.policy.Policy;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import tools.jackson.databind.ObjectMapper;

/**
 * {@code /api/parameters[/{component}[/{vhost}[/{name}]]]}: RabbitMQ's runtime parameters
 * ({@code rabbit_mgmt_wm_parameters}, {@code rabbit_mgmt_wm_parameter}) over what SkiffMQ keeps as them: a virtual
 * host's limits (component {@code vhost-limits}, name {@code limits}) and its operator policies (component
 * {@code operator_policy}). Policies show as component {@code policy} when asked for by name, as RabbitMQ's
 * lookups show them, and are left out of the lists without a component. Administrators, and policymakers in
 * the virtual hosts they have permissions in ({@code is_authorized_policies}). A component SkiffMQ has none of
 * lists as empty, is a 404 by name, and a PUT of it is RabbitMQ's 400 {@code component shovel not found}.
 * Stateless; safe from any thread (the admin and the virtual host serialise changes).
 */
final class ParameterResources {
    private static final String LIMITS = "vhost-limits";
    private static final String OPERATOR_POLICY = "operator_policy";
    private static final String POLICY = "policy";
    private static final List<String> LIMIT_KEYS = List.of("max-connections", "max-queues");
    private static final List<String> POLICY_KEYS = List.of("priority", "pattern", "apply-to", "definition");
    private final Lookups lookups;
    private final ObjectMapper mapper;

    ParameterResources(Lookups lookups, ObjectMapper mapper) {
        this.lookups = lookups;
        this.mapper = mapper;
    }

    void register(Router router) {
        router.sync("GET", "/api/parameters", r -> list(r, null))
            .sync("GET", "/api/parameters/{component}", r -> list(r, r.variable("component")))
            .sync("GET", "/api/parameters/{component}/{vhost}", r -> list(r, r.variable("component")))
            .sync("GET", "/api/parameters/{component}/{vhost}/{name}", this::one)
            .sync("PUT", "/api/parameters/{component}/{vhost}/{name}", this::put)
            .sync("DELETE", "/api/parameters/{component}/{vhost}/{name}", this::delete);
    }

    /** A value of an operator policy or policy parameter, as RabbitMQ stores and exports it. */
    static Map<String, Object> policyValue(Policy p) {
        Map<String, Object> value = new LinkedHashMap<>();
        value.put("pattern", p.pattern());
        value.put("apply-to", p.applyTo().value());
        value.put("definition", p.definition());
        value.put("priority", p.priority());
        return value;
    }

    /** RabbitMQ's {@code {vhost, component, name, value}}. */
    static Map<String, Object> shape(String vhost, String component, String name, Object value) {
        Map<String, Object> p = new LinkedHashMap<>();
        p.put("vhost", vhost);
        p.put("component", component);
        p.put("name", name);
        p.put("value", value);
        return p;
    }

    /** A virtual host's parameters of {@code component}, or of every component but {@code policy} when null. */
    private List<Map<String, Object>> parameters(VirtualHost vhost, String component) {
        List<Map<String, Object>> out = new ArrayList<>();
        VhostDefinition definition = lookups.broker().accessControl().vhost(vhost.name());
        if (definition == null) {
            return out;
        }
        if (component == null || component.equals(LIMITS)) {
            Map<String, Object> limits = DefinitionsExport.vhostLimits(definition);
            if (!limits.isEmpty()) {
                out.add(shape(vhost.name(), LIMITS, "limits", limits));
            }
        }
        for (boolean operator : new boolean[] {true, false}) {
            String kind = operator ? OPERATOR_POLICY : POLICY;
            if (kind.equals(component) || component == null && operator) {
                vhost.policies().list(operator).forEach(p -> out.add(shape(vhost.name(), kind, p.name(),
                    policyValue(p))));
            }
        }
        return out;
    }

    private void authorise(ApiRequest request) {
        request.caller().requirePolicymaker(lookups.broker().accessControl(), request.variable("vhost"));
    }

    /** The path's virtual host, or null when there is none of that name. */
    private VirtualHost vhost(ApiRequest request) {
        String name = request.variable("vhost");
        VirtualHost vhost = lookups.broker().vhost(name);
        return vhost == null || lookups.broker().accessControl().vhost(name) == null ? null : vhost;
    }

    private ApiResponse list(ApiRequest request, String component) {
        authorise(request);
        List<VirtualHost> vhosts;
        if (request.variable("vhost") != null) {
            VirtualHost vhost = vhost(request);
            if (vhost == null) {
                throw ApiException.notFound();
            }
            vhosts = List.of(vhost);
        } else {
            vhosts = new ArrayList<>();
            Caller caller = request.caller();
            for (String name : lookups.broker().admin().vhosts()) {
                VirtualHost vhost = lookups.broker().vhost(name);
                // filter_vhost: administrators see every virtual host, others those they may log in to
                if (vhost != null && (caller.administrator()
                        || lookups.broker().accessControl().mayAccess(caller.user(), name))) {
                    vhosts.add(vhost);
                }
            }
        }
        List<Map<String, Object>> items = new ArrayList<>();
        for (VirtualHost vhost : vhosts) {
            items.addAll(parameters(vhost, component));
        }
        return ApiResponse.ok(items);
    }

    private Map<String, Object> find(ApiRequest request) {
        VirtualHost vhost = vhost(request);
        if (vhost != null) {
            for (Map<String, Object> p : parameters(vhost, request.variable("component"))) {
                if (p.get("name").equals(request.variable("name"))) {
                    return p;
                }
            }
        }
        return null;
    }

    private ApiResponse one(ApiRequest request) {
        authorise(request);
        Map<String, Object> parameter = find(request);
        if (parameter == null) {
            throw ApiException.notFound();
        }
        return ApiResponse.ok(parameter);
    }

    private ApiResponse put(ApiRequest request) {
        authorise(request);
        VirtualHost vhost = vhost(request);
        if (vhost == null) {
            throw new ApiException(404, "not_found", "vhost_not_found");
        }
        Map<String, Object> body = request.json(mapper);
        if (!body.containsKey("value")) {
            throw ApiException.badRequest("[{key_missing,value}]");
        }
        String component = request.variable("component");
        String name = request.variable("name");
        boolean existed = find(request) != null;
        Object value = body.get("value");
        switch (component) {
            case POLICY -> throw ApiException.badRequest("policies may not be set using this method");
            case LIMITS -> setLimits(vhost.name(), name, value);
            case OPERATOR_POLICY -> {
                Map<String, Object> fields = proplist(name, value, POLICY_KEYS, POLICY_KEYS.stream()
                    .filter(k -> !k.equals("apply-to")).toList());
                try {
                    vhost.setPolicy(PolicyBodies.policy(name, fields, true), true);
                } catch (IllegalArgumentException e) {
                    throw invalid(e.getMessage());
                }
            }
            default -> throw invalid("component " + component + " not found"); // rabbit_runtime_parameters
        }
        return ApiResponse.createdOr(existed);
    }

    /** RabbitMQ's {@code rabbit_vhost_limit}: the value replaces every limit, those it leaves out are none. */
    private void setLimits(String vhost, String name, Object value) {
        Map<String, Object> limits = proplist(name, value, LIMIT_KEYS, List.of());
        for (Map.Entry<String, Object> limit : limits.entrySet()) {
            if (!(limit.getValue() instanceof Integer || limit.getValue() instanceof Long)) {
                throw invalid(limit.getKey() + " should be a number, actually was "
                    + ErlangFormat.of(limit.getValue()));
            }
        }
        if (!name.equals("limits")) {
            // RabbitMQ stores it, then fails to apply it (rabbit_vhost_limit:notify/5 knows only "limits")
            throw invalid("vhost-limits parameters are named limits, not " + name);
        }
        lookups.broker().admin().setVhostLimits(vhost, number(limits.get("max-connections")),
            number(limits.get("max-queues")));
    }

    private static long number(Object value) {
        return value == null ? -1 : ((Number) value).longValue();
    }

    /**
     * A value checked as {@code rabbit_parameter_validation:proplist/3} checks one: an object (or a list of pairs)
     * with only {@code known} keys and every {@code mandatory} one, its errors in RabbitMQ's order.
     */
    private static Map<String, Object> proplist(String name, Object value, List<String> known,
            List<String> mandatory) {
        Map<String, Object> fields;
        try {
            fields = PolicyBodies.definition(value);
        } catch (IllegalArgumentException e) {
            throw invalid(name + " not a list " + ErlangFormat.of(value));
        }
        List<String> errors = new ArrayList<>();
        for (String key : mandatory) {
            if (!fields.containsKey(key)) {
                errors.add(0, "Key \"" + key + "\" not found in " + name);
            }
        }
        List<String> unrecognised = new ArrayList<>();
        fields.forEach((k, v) -> {
            if (!known.contains(k)) {
                unrecognised.add("{" + ErlangFormat.of(k) + "," + ErlangFormat.of(v) + "}");
            }
        });
        if (!unrecognised.isEmpty()) {
            errors.add(0, "Unrecognised terms [" + String.join(",", unrecognised) + "] in " + name);
        }
        if (!errors.isEmpty()) {
            throw invalid(String.join("\n", errors));
        }
        return fields;
    }

    private ApiResponse delete(ApiRequest request) {
        authorise(request);
        if (find(request) == null) {
            throw ApiException.notFound();
        }
        VirtualHost vhost = vhost(request);
        switch (request.variable("component")) {
            case LIMITS -> lookups.broker().admin().setVhostLimits(vhost.name(), -1, -1);
            case OPERATOR_POLICY -> vhost.clearPolicy(request.variable("name"), true);
            // RabbitMQ's delete_resource crashes on this refusal (a 500); we answer it as a 400
            default -> throw ApiException.badRequest("policies may not be cleared using this method");
        }
        return ApiResponse.noContent();
    }

    /** {@code rabbit_runtime_parameters:format_error/1}. */
    private static ApiException invalid(String why) {
        return ApiException.badRequest("Validation failed\n\n" + why + "\n");
    }
}
