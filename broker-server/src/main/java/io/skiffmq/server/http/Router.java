package io.skiffmq.server.http;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * The routing table: method and path pattern ({@code /api/queues/{vhost}/{name}}) to an endpoint. Patterns are
 * matched segment by segment on the raw path, and each variable is percent-decoded after the split, so a
 * virtual host {@code %2F} stays one segment. Filled once before the server starts, read-only afterwards.
 */
final class Router {
    /** Answers a request: at once, or later for work that waits on a queue's thread. */
    @FunctionalInterface
    interface Endpoint {
        CompletableFuture<ApiResponse> handle(ApiRequest request);
    }

    /** An endpoint that answers at once. */
    @FunctionalInterface
    interface SyncEndpoint {
        ApiResponse handle(ApiRequest request);
    }

    /** @param open answered without authentication (RabbitMQ's resources without {@code is_authorized}) */
    private record Route(String method, String[] pattern, Endpoint endpoint, boolean open) {
    }

    /** A route found for a path, with the path's variables. */
    record Match(Endpoint endpoint, Map<String, String> variables) {
    }

    private final List<Route> routes = new ArrayList<>();

    Router add(String method, String pattern, Endpoint endpoint) {
        routes.add(new Route(method, split(pattern), endpoint, false));
        return this;
    }

    Router sync(String method, String pattern, SyncEndpoint endpoint) {
        return add(method, pattern, request -> CompletableFuture.completedFuture(endpoint.handle(request)));
    }

    /** An endpoint that answers at once, to anyone: its request has no caller. */
    Router open(String method, String pattern, SyncEndpoint endpoint) {
        routes.add(new Route(method, split(pattern), request -> CompletableFuture.completedFuture(
            endpoint.handle(request)), true));
        return this;
    }

    /** True when {@code method} on {@code rawPath} is an {@link #open} route's: no authentication. */
    boolean isOpen(String method, String rawPath) {
        String[] segments = split(rawPath);
        return routes.stream().anyMatch(r -> r.open && r.method.equals(method) && variables(r.pattern, segments) != null);
    }

    /**
     * The endpoint for {@code method} on {@code rawPath}.
     *
     * @throws ApiException 404 when no pattern matches the path, 405 when one does for another method
     */
    Match match(String method, String rawPath) {
        String[] segments = split(rawPath);
        boolean pathMatched = false;
        for (Route route : routes) {
            Map<String, String> variables = variables(route.pattern, segments);
            if (variables != null) {
                if (route.method.equals(method)) {
                    return new Match(route.endpoint, variables);
                }
                pathMatched = true;
            }
        }
        if (pathMatched) {
            throw new ApiException(405, "method_not_allowed", "Method Not Allowed");
        }
        throw ApiException.notFound();
    }

    private static Map<String, String> variables(String[] pattern, String[] segments) {
        if (pattern.length != segments.length) {
            return null;
        }
        Map<String, String> variables = new LinkedHashMap<>();
        for (int i = 0; i < pattern.length; i++) {
            String p = pattern[i];
            if (p.startsWith("{") && p.endsWith("}")) {
                variables.put(p.substring(1, p.length() - 1), PathCodec.decode(segments[i]));
            } else if (!p.equals(segments[i])) {
                return null;
            }
        }
        return variables;
    }

    private static String[] split(String path) {
        String trimmed = path.startsWith("/") ? path.substring(1) : path;
        if (trimmed.endsWith("/")) {
            trimmed = trimmed.substring(0, trimmed.length() - 1);
        }
        return trimmed.split("/", -1);
    }
}
