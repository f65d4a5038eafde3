package io.skiffmq.server.http;

import java.util.Map;
import tools.jackson.databind.ObjectMapper;

/**
 * One request as the resources see it: the method, the path's variables (percent-decoded: {@code %2F} is
 * {@code /}), the query parameters, the body, some headers, and who asks (null for an open route,
 * {@link Router#open}). Immutable.
 */
record ApiRequest(String method, Map<String, String> variables, Map<String, String> query, byte[] body,
        Map<String, String> headers, Caller caller) {

    /** A path variable ({@code {vhost}}, {@code {name}}, …). */
    String variable(String name) {
        return variables.get(name);
    }

    /** A header by its lower-case name, or null. */
    String header(String lowerCaseName) {
        return headers.get(lowerCaseName);
    }

    /** The body as a JSON object; an empty body is an empty object; anything else is a 400. */
    @SuppressWarnings("unchecked")
    Map<String, Object> json(ObjectMapper mapper) {
        if (body.length == 0) {
            return Map.of();
        }
        Object value;
        try {
            value = mapper.readValue(body, Object.class);
        } catch (tools.jackson.core.JacksonException e) {
            throw ApiException.badRequest("body is not JSON: " + e.getOriginalMessage());
        }
        if (!(value instanceof Map<?, ?>)) {
            throw ApiException.badRequest("body must be a JSON object");
        }
        return (Map<String, Object>) value;
    }
}
