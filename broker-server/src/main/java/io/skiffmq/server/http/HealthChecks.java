package io.skiffmq.server.http;

import io.skiffmq.core.alarm.ResourceAlarms;
import io.skiffmq.server.Broker;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

/**
 * RabbitMQ's health checks: {@code {"status":"ok"}} with 200, or {@code {"status":"failed","reason":...}} with
 * 503. One node, so {@code alarms} (cluster-wide) and {@code local-alarms} look at the same alarms;
 * {@code is-in-service}, open to anyone as in RabbitMQ, is ok while the node runs. A stopping node fails them all
 * with "node is stopping". Stateless; safe from any thread.
 */
final class HealthChecks {
    private static final int FAILED = 503;
    /** The reason a stopping node gives. */
    static final String STOPPING = "node is stopping";

    private final Broker broker;
    private final Supplier<List<Listener>> listeners;

    HealthChecks(Broker broker, Supplier<List<Listener>> listeners) {
        this.broker = broker;
        this.listeners = listeners;
    }

    void register(Router router) {
        router.sync("GET", "/api/health/checks/alarms",
                r -> unlessStopping(() -> alarms("There are alarms in effect in the cluster")))
            .sync("GET", "/api/health/checks/local-alarms",
                r -> unlessStopping(() -> alarms("There are alarms in effect on the node")))
            .sync("GET", "/api/health/checks/port-listener/{port}", r -> unlessStopping(() -> portListener(r)))
            .sync("GET", "/api/health/checks/virtual-hosts", r -> unlessStopping(this::virtualHosts))
            // RabbitMQ 4.1's, answered without authentication: a probe needs no user (docker/Dockerfile's)
            .open("GET", "/api/health/checks/is-in-service", r -> unlessStopping(() -> ok(new LinkedHashMap<>())));
    }

    /**
     * A stopping node ({@link Broker#isStopping}) fails every check, whatever it would say otherwise: its listeners
     * are closing and its connections are being closed, so nothing should be sent its way.
     */
    private ApiResponse unlessStopping(Supplier<ApiResponse> check) {
        if (broker.isStopping()) {
            return new ApiResponse(FAILED, failed(STOPPING), Map.of());
        }
        return check.get();
    }

    private ApiResponse alarms(String reason) {
        var active = broker.alarms().active();
        if (active.isEmpty()) {
            return ok(new LinkedHashMap<>());
        }
        List<Map<String, Object>> alarms = new ArrayList<>();
        for (ResourceAlarms.Resource resource : active) {
            alarms.add(Map.of("node", broker.config().node(), "resource", resource.text()));
        }
        Map<String, Object> failed = failed(reason);
        failed.put("alarms", alarms);
        return new ApiResponse(FAILED, failed, Map.of());
    }

    private ApiResponse portListener(ApiRequest request) {
        int port;
        try {
            port = Integer.parseInt(request.variable("port"));
        } catch (NumberFormatException e) {
            throw ApiException.badRequest("invalid port: " + request.variable("port"));
        }
        List<Integer> ports = new ArrayList<>();
        for (Listener listener : listeners.get()) {
            ports.add(listener.address().getPort());
        }
        if (ports.contains(port)) {
            Map<String, Object> ok = new LinkedHashMap<>();
            ok.put("port", port);
            return ok(ok);
        }
        Map<String, Object> failed = failed("No active listener");
        failed.put("missing", port);
        failed.put("ports", ports);
        return new ApiResponse(FAILED, failed, Map.of());
    }

    private ApiResponse virtualHosts() {
        List<String> down = new ArrayList<>();
        for (String name : broker.admin().vhosts()) {
            if (broker.vhost(name) == null) {
                down.add(name);
            }
        }
        if (down.isEmpty()) {
            return ok(new LinkedHashMap<>());
        }
        Map<String, Object> failed = failed("Some virtual hosts are down");
        failed.put("virtual-hosts", down);
        return new ApiResponse(FAILED, failed, Map.of());
    }

    private static ApiResponse ok(Map<String, Object> fields) {
        Map<String, Object> ok = new LinkedHashMap<>();
        ok.put("status", "ok");
        ok.putAll(fields);
        return ApiResponse.ok(ok);
    }

    private static Map<String, Object> failed(String reason) {
        Map<String, Object> failed = new LinkedHashMap<>();
        failed.put("status", "failed");
        failed.put("reason", reason);
        return failed;
    }
}
