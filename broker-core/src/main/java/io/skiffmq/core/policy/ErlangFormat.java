package io.skiffmq.core.policy;

import java.util.List;
import java.util.Map;

/**
 * A JSON value as Erlang's {@code ~tp} prints the term RabbitMQ decodes it to ({@code <<"x">>} for a string), for
 * refusals worded as RabbitMQ's. Stateless.
 */
public final class ErlangFormat {
    private ErlangFormat() {
    }

    public static String of(Object value) {
        if (value == null) {
            return "null";
        }
        if (value instanceof String s) {
            return "<<\"" + s.replace("\\", "\\\\").replace("\"", "\\\"") + "\">>";
        }
        if (value instanceof List<?> list) {
            StringBuilder out = new StringBuilder("[");
            for (Object item : list) {
                out.append(out.length() > 1 ? "," : "").append(of(item));
            }
            return out.append("]").toString();
        }
        if (value instanceof Map<?, ?> map) {
            StringBuilder out = new StringBuilder("#{");
            for (Map.Entry<?, ?> e : map.entrySet()) {
                out.append(out.length() > 2 ? "," : "").append(of(e.getKey())).append(" => ").append(of(e.getValue()));
            }
            return out.append("}").toString();
        }
        return value.toString(); // numbers and booleans print alike
    }
}
