package io.skiffmq.server.ctl;

import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * A field table as rabbitmqctl's table formatter prints one ({@code FormatterHelpers.format_info_item}: the table
 * as a list of {@code {Key,Value}} tuples, through Erlang's {@code ~tp} on one line): {@code
 * [{"product","RabbitMQ"},{"capabilities",[{"publisher_confirms",true}]}]}. Strings are Erlang strings (the empty
 * string is {@code []}, one with a character Erlang does not print is a list of code points), booleans
 * {@code true}/{@code false}, a void value {@code undefined}. Input: the HTTP API's JSON rendering of the table.
 * Stateless.
 */
final class ErlangTerms {
    private ErlangTerms() {
    }

    /** The term's text: objects are tables, arrays lists. */
    static String of(Object value) {
        StringBuilder out = new StringBuilder();
        append(out, value);
        return out.toString();
    }

    private static void append(StringBuilder out, Object value) {
        if (value == null) {
            out.append("undefined");
        } else if (value instanceof String s) {
            string(out, s);
        } else if (value instanceof Map<?, ?> table) {
            out.append('[');
            boolean first = true;
            for (Map.Entry<?, ?> e : table.entrySet()) {
                out.append(first ? "{" : ",{");
                string(out, String.valueOf(e.getKey()));
                out.append(',');
                append(out, e.getValue());
                out.append('}');
                first = false;
            }
            out.append(']');
        } else if (value instanceof List<?> list) {
            out.append('[');
            for (int i = 0; i < list.size(); i++) {
                out.append(i == 0 ? "" : ",");
                append(out, list.get(i));
            }
            out.append(']');
        } else if (value instanceof Double || value instanceof Float) {
            out.append(value.toString().replace('E', 'e'));
        } else {
            out.append(value); // integers, booleans
        }
    }

    /** An Erlang string as {@code ~tp} prints it. */
    private static void string(StringBuilder out, String s) {
        if (s.isEmpty()) {
            out.append("[]");
            return;
        }
        if (!s.codePoints().allMatch(ErlangTerms::printable)) {
            out.append(s.codePoints().mapToObj(Integer::toString).collect(Collectors.joining(",", "[", "]")));
            return;
        }
        out.append('"');
        s.codePoints().forEach(c -> {
            switch (c) {
                case '"' -> out.append("\\\"");
                case '\\' -> out.append("\\\\");
                case '\n' -> out.append("\\n");
                case '\r' -> out.append("\\r");
                case '\t' -> out.append("\\t");
                case 0x0b -> out.append("\\v");
                case '\b' -> out.append("\\b");
                case '\f' -> out.append("\\f");
                case 0x1b -> out.append("\\e");
                default -> out.appendCodePoint(c);
            }
        });
        out.append('"');
    }

    /** Erlang's {@code io_lib:printable_unicode_list} for one character. */
    private static boolean printable(int c) {
        return c >= 0x20 && c <= 0x7e || c >= 0xa0 && c < 0xd800 || c > 0xdfff && c < 0xfffe
            || c > 0xffff && c <= 0x10ffff || c == '\n' || c == '\r' || c == '\t' || c == 0x0b || c == '\b'
            || c == '\f' || c == 0x1b;
    }
}
