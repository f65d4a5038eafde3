package io.skiffmq.core.routing;

import io.skiffmq.core.BrokerException;
import io.skiffmq.core.message.HeaderValues;
import java.util.Map;

/**
 * The check a binding from a headers exchange passes, as RabbitMQ's
 * {@code rabbit_exchange_type_headers:validate_binding/2}: {@code x-match}, when present, is the string {@code all},
 * {@code any}, {@code all-with-x} or {@code any-with-x}. A refusal is PRECONDITION_FAILED with RabbitMQ's text, in
 * which its {@code ~tp} shows the value as Erlang prints it ({@code <<"some">>}, {@code 5}, {@code undefined} for
 * void). Stateless.
 */
public final class HeadersBindingCheck {
    private HeadersBindingCheck() {
    }

    /** @throws BrokerException PRECONDITION_FAILED for an {@code x-match} RabbitMQ refuses */
    public static void check(Map<String, Object> arguments) {
        if (!arguments.containsKey("x-match")) {
            return;
        }
        Object mode = HeaderValues.normalise(arguments.get("x-match"));
        if (mode instanceof String s) {
            if (!s.equals("all") && !s.equals("any") && !s.equals("all-with-x") && !s.equals("any-with-x")) {
                throw new BrokerException(BrokerException.Kind.PRECONDITION_FAILED, "Invalid x-match field value "
                    + binary(s) + "; expected all, any, all-with-x, or any-with-x");
            }
            return;
        }
        throw new BrokerException(BrokerException.Kind.PRECONDITION_FAILED, "Invalid x-match field type "
            + HeaderValues.fieldType(mode) + " (value " + (mode == null ? "undefined" : mode) + "); expected longstr");
    }

    /** A binary as Erlang's {@code ~tp} prints it: {@code <<"text">>}, {@code /utf8} after non-ASCII text. */
    private static String binary(String s) {
        StringBuilder out = new StringBuilder(s.length() + 8).append("<<\"");
        boolean ascii = true;
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '"' || c == '\\') {
                out.append('\\');
            }
            ascii &= c < 0x80;
            out.append(c);
        }
        return out.append(ascii ? "\">>" : "\"/utf8>>").toString();
    }
}
