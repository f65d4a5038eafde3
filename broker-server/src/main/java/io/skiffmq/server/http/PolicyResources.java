package io.skiffmq.server.http;

import io.skiffmq.core.VirtualHost;
import io.skiffmq.core.policy.Policy;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * {@code /api/policies} and {@code /api/operator-policies}: list (all, per virtual host), one, set ({@code PUT}:
 * 201 when new, 204 when it replaced one) and clear ({@code DELETE}: 204, 404 when there is none), as RabbitMQ's
 * {@code rabbit_mgmt_wm_policy} and {@code rabbit_mgmt_wm_operator_policy}. Lists are for every management user
 * (the virtual hosts it sees); one policy is for administrators and for policymakers with permissions in its
 * virtual host; operator policies are for administrators. A refused policy is a 400 with RabbitMQ's
 * "Validation failed" text (HTML-escaped for policies, as RabbitMQ escapes it). Stateless; safe from any thread
 * (the virtual host serialises changes).
 */
final class PolicyResources {
    private final Lookups lookups;
    private final tools.jackson.databind.ObjectMapper mapper;

    PolicyResources(Lookups lookups, tools.jackson.databind.ObjectMapper mapper) {
        this.lookups = lookups;
        this.mapper = mapper;
    }

    void register(Router router) {
        for (boolean operator : new boolean[] {false, true}) {
            String base = operator ? "/api/operator-policies" : "/api/policies";
            router.sync("GET", base, r -> list(r, operator))
                .sync("GET", base + "/{vhost}", r -> list(r, operator))
                .sync("GET", base + "/{vhost}/{name}", r -> one(r, operator))
                .sync("PUT", base + "/{vhost}/{name}", r -> put(r, operator))
                .sync("DELETE", base + "/{vhost}/{name}", r -> delete(r, operator));
        }
    }

    /** A policy as RabbitMQ's HTTP API shows it. */
    static Map<String, Object> shape(String vhost, Policy p) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("vhost", vhost);
        m.put("name", p.name());
        m.put("pattern", p.pattern());
        m.put("apply-to", p.applyTo().value());
        m.put("definition", p.definition());
        m.put("priority", p.priority());
        return m;
    }

    private ApiResponse list(ApiRequest request, boolean operator) {
        List<Map<String, Object>> items = new ArrayList<>();
        for (VirtualHost vhost : lookups.vhosts(request)) {
            vhost.policies().list(operator).forEach(p -> items.add(shape(vhost.name(), p)));
        }
        return ApiResponse.ok(items);
    }

    /** RabbitMQ's {@code is_authorized_policies} (or {@code is_authorized_admin} for operator policies). */
    private VirtualHost authorised(ApiRequest request, boolean operator, boolean mustExist) {
        String name = request.variable("vhost");
        if (operator) {
            request.caller().requireAdministrator();
        } else {
            request.caller().requirePolicymaker(lookups.broker().accessControl(), name);
        }
        VirtualHost vhost = lookups.broker().vhost(name);
        if (vhost == null || lookups.broker().accessControl().vhost(name) == null) {
            throw mustExist ? ApiException.notFound() : new ApiException(404, "not_found", "vhost_not_found");
        }
        return vhost;
    }

    private ApiResponse one(ApiRequest request, boolean operator) {
        VirtualHost vhost = authorised(request, operator, true);
        Policy policy = vhost.policies().get(request.variable("name"), operator);
        if (policy == null) {
            throw ApiException.notFound();
        }
        return ApiResponse.ok(shape(vhost.name(), policy));
    }

    private ApiResponse put(ApiRequest request, boolean operator) {
        VirtualHost vhost = authorised(request, operator, false);
        Map<String, Object> body = request.json(mapper);
        Policy policy;
        try {
            policy = PolicyBodies.policy(request.variable("name"), body, operator);
        } catch (IllegalArgumentException e) {
            // rabbit_runtime_parameters:format_error/1
            String reason = "Validation failed\n\n" + e.getMessage() + "\n";
            throw ApiException.badRequest(operator ? reason : escapeHtmlTags(reason));
        }
        return ApiResponse.createdOr(vhost.setPolicy(policy, operator));
    }

    private ApiResponse delete(ApiRequest request, boolean operator) {
        VirtualHost vhost = authorised(request, operator, true);
        if (!vhost.clearPolicy(request.variable("name"), operator)) {
            throw ApiException.notFound();
        }
        return ApiResponse.noContent();
    }

    /** {@code rabbit_mgmt_format:escape_html_tags/1}. */
    private static String escapeHtmlTags(String s) {
        return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;");
    }
}
