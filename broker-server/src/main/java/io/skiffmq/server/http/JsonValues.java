package io.skiffmq.server.http;

import io.skiffmq.codec.Bytes;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * AMQP table values (headers, arguments, client properties) as JSON values: strings, numbers, booleans, lists and
 * objects stay; timestamps become seconds; byte arrays become text (those that are not UTF-8 base64, as RabbitMQ
 * shows them); anything else its text. Stateless.
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
        if (value instanceof Bytes bytes) {
            return utf8Safe(bytes.array());
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

    /** RabbitMQ's {@code rabbit_misc:utf8_safe}: UTF-8 text as it is, other bytes in base64, 76 to a line. */
    private static String utf8Safe(byte[] bytes) {
        try {
            return StandardCharsets.UTF_8.newDecoder().decode(java.nio.ByteBuffer.wrap(bytes)).toString();
        } catch (java.nio.charset.CharacterCodingException e) {
            String base64 = java.util.Base64.getEncoder().encodeToString(bytes);
            StringBuilder lines = new StringBuilder("Not UTF-8, base64 is: ");
            for (int i = 0; i < base64.length(); i += 76) {
                lines.append(i == 0 ? "" : "\n").append(base64, i, Math.min(base64.length(), i + 76));
            }
            return lines.toString();
        }
    }
}
