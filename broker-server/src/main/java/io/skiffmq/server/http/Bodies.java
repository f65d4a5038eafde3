package io.skiffmq.server.http;

import java.util.Map;

/** Reading fields of a JSON body with RabbitMQ's leniency (booleans as JSON or as strings). Stateless. */
final class Bodies {
    private Bodies() {
    }

    static boolean flag(Map<String, Object> body, String name, boolean otherwise) {
        Object value = body.get(name);
        if (value == null) {
            return otherwise;
        }
        if (value instanceof Boolean b) {
            return b;
        }
        if (value.equals("true") || value.equals("false")) {
            return Boolean.parseBoolean((String) value);
        }
        throw ApiException.badRequest(name + " must be true or false");
    }

    @SuppressWarnings("unchecked")
    static Map<String, Object> arguments(Map<String, Object> body) {
        Object arguments = body.get("arguments");
        if (arguments == null || arguments instanceof String s && s.isEmpty()) {
            return Map.of();
        }
        if (!(arguments instanceof Map<?, ?>)) {
            throw ApiException.badRequest("arguments must be an object");
        }
        return (Map<String, Object>) arguments;
    }

    static String string(Map<String, Object> body, String name, String otherwise) {
        Object value = body.get(name);
        return value == null ? otherwise : value.toString();
    }

    static int integer(Map<String, Object> body, String name, int otherwise) {
        Object value = body.get(name);
        if (value == null) {
            return otherwise;
        }
        try {
            return value instanceof Number n ? n.intValue() : Integer.parseInt(value.toString());
        } catch (NumberFormatException e) {
            throw ApiException.badRequest(name + " must be an integer");
        }
    }

    /** Required: a 400 naming the field when it is missing. */
    static String required(Map<String, Object> body, String name) {
        Object value = body.get(name);
        if (value == null) {
            throw ApiException.badRequest("missing field: " + name);
        }
        return value.toString();
    }
}
