package io.skiffmq.server.http;

import java.util.Map;

/**
 * An answer before it is JSON: the status, the body (maps, lists, strings, numbers, booleans; null for none) and
 * extra headers. Immutable.
 */
record ApiResponse(int status, Object body, Map<String, String> headers) {
    static ApiResponse ok(Object body) {
        return new ApiResponse(200, body, Map.of());
    }

    static ApiResponse noContent() {
        return new ApiResponse(204, null, Map.of());
    }

    /** 202: RabbitMQ's answer to a DELETE of an operation it calls asynchronous. */
    static ApiResponse accepted() {
        return new ApiResponse(202, null, Map.of());
    }

    static ApiResponse created() {
        return new ApiResponse(201, null, Map.of());
    }

    /** 201 for a resource that is new, 204 for one that was there (RabbitMQ's PUT answers). */
    static ApiResponse createdOr(boolean existed) {
        return existed ? noContent() : created();
    }

    /** This answer without its {@code WWW-Authenticate} challenge, if it has one. */
    ApiResponse withoutChallenge() {
        if (!headers.containsKey("WWW-Authenticate")) {
            return this;
        }
        Map<String, String> rest = new java.util.HashMap<>(headers);
        rest.remove("WWW-Authenticate");
        return new ApiResponse(status, body, Map.copyOf(rest));
    }
}
