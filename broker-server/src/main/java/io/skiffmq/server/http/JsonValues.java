package io.skiffmq.server.http;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * AMQP table values (headers, arguments) as JSON values: strings, numbers, booleans, lists and objects stay;
 * byte arrays become text; anything else its text. Stateless.
 */
final class JsonValues {
    private JsonValues() {
    }

    static Object of(Object value) {
        if (value == null || value instanceof String || value instanceof Number || value instanceof Boolean) {
            return value;
        }
        if (value instanceof byte[] bytes) {
            return new String(bytes, StandardCharsets.UTF_8);
        }
        if (value instanceof Map<?, ?> map) {
            Map<String, Object> out = new LinkedHashMap<>();
            map.forEach((k, v) -> out.put(String.valueOf(k), of(v)));
            return out;
        }
        if (value instanceof List<?> list) {
            List<Object> out = new ArrayList<>();
            list.forEach(v -> out.add(of(v)));
            return out;
        }
        if (value instanceof java.time.Instant instant) {
            return instant.getEpochSecond();
        }
        return value.toString();
    }
}
