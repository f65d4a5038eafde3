package io.skiffmq.server.http;

import io.skiffmq.core.policy.ApplyTo;
import io.skiffmq.core.policy.ErlangFormat;
import io.skiffmq.core.policy.Policy;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A policy from a JSON body (the HTTP API's {@code PUT}, a definitions document's {@code policies} and
 * {@code operator_policy} parameters): {@code pattern} and {@code definition} required, {@code apply-to}
 * {@code all} and {@code priority} 0 when absent, checked as RabbitMQ checks them. A definition may come as a list
 * of pairs, as {@code rabbitmqctl export_definitions} writes operator policies'. Stateless.
 */
final class PolicyBodies {
    private PolicyBodies() {
    }

    /**
     * @throws ApiException 400 for a missing field, as RabbitMQ's {@code with_decode} words it
     * @throws IllegalArgumentException for a value RabbitMQ's validation refuses, in its words
     */
    static Policy policy(String name, Map<String, Object> body, boolean operator) {
        for (String field : List.of("pattern", "definition")) {
            if (!body.containsKey(field)) {
                throw ApiException.badRequest("[{key_missing," + field + "}]");
            }
        }
        Object priority = body.getOrDefault("priority", 0L);
        if (!(priority instanceof Number n)) {
            throw new IllegalArgumentException("priority should be a number, actually was "
                + ErlangFormat.of(priority));
        }
        Object pattern = body.get("pattern");
        if (!(pattern instanceof String p)) {
            throw new IllegalArgumentException("pattern should be a binary but was " + ErlangFormat.of(pattern));
        }
        Object applyTo = body.getOrDefault("apply-to", "all");
        return Policy.checked(name, p, ApplyTo.of(String.valueOf(applyTo)), n, definition(body.get("definition")),
            operator);
    }

    /** A definition object, or a list of [key, value] pairs. */
    @SuppressWarnings("unchecked")
    static Map<String, Object> definition(Object value) {
        if (value instanceof Map<?, ?> map) {
            return (Map<String, Object>) map;
        }
        if (value instanceof List<?> list) {
            Map<String, Object> pairs = new LinkedHashMap<>();
            for (Object item : list) {
                if (item instanceof List<?> pair && pair.size() == 2 && pair.get(0) instanceof String key) {
                    pairs.put(key, pair.get(1));
                } else {
                    throw new IllegalArgumentException("definition must be a dictionary: " + ErlangFormat.of(value));
                }
            }
            return pairs;
        }
        throw new IllegalArgumentException("definition must be a dictionary: " + ErlangFormat.of(value));
    }
}
