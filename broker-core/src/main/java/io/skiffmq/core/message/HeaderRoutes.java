package io.skiffmq.core.message;

import io.skiffmq.core.BrokerException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The routing keys a message names beside its routing key, as RabbitMQ reads them: the AMQP 0-9-1 {@code CC} and
 * {@code BCC} headers ({@code rabbit_basic:header_routes/1}), the AMQP 1.0 {@code x-cc} message annotation
 * ({@code rabbit_amqp_session:lookup_routing_key/5}). The message goes through its exchange with all of them, to
 * each queue once. Stateless.
 */
final class HeaderRoutes {
    static final String CC = "CC";
    static final String BCC = "BCC";
    static final String X_CC = "x-cc";

    private HeaderRoutes() {
    }

    /**
     * The CC then the BCC keys in a 0-9-1 {@code headers} table, null when it has neither. An array's entries that
     * are not strings are left out, as RabbitMQ leaves them out.
     *
     * @throws BrokerException PRECONDITION_FAILED, with RabbitMQ's text, when either is there and is no array
     */
    static List<String> ofAmqp091(Map<String, Object> headers) {
        if (headers == null || !headers.containsKey(CC) && !headers.containsKey(BCC)) {
            return null;
        }
        List<String> keys = new ArrayList<>();
        add091(keys, CC, headers);
        add091(keys, BCC, headers);
        return keys;
    }

    private static void add091(List<String> keys, String header, Map<String, Object> headers) {
        if (!headers.containsKey(header)) {
            return;
        }
        if (!(headers.get(header) instanceof List<?> routes)) {
            throw new BrokerException(BrokerException.Kind.PRECONDITION_FAILED, "invalid message: "
                + "{unacceptable_type_in_header,\"" + header + "\","
                + HeaderValues.fieldType(headers.get(header)) + "}");
        }
        for (Object route : routes) {
            if (route instanceof String key) {
                keys.add(key);
            }
        }
    }

    /**
     * The CC keys alone, null when there are none or the header is no array: what a message dead-lettered without a
     * dead-letter routing key is routed with beside its key, and what its death records beside it (RabbitMQ leaves
     * the BCC keys out of the record, {@code mc:record_death/3}).
     */
    static List<String> ccOfAmqp091(Map<String, Object> headers) {
        if (headers == null || !(headers.get(CC) instanceof List<?>)) {
            return null;
        }
        List<String> keys = new ArrayList<>();
        add091(keys, CC, headers);
        return keys;
    }

    /**
     * The keys of an {@code x-cc} annotation's value (as proton-j decodes it), null for none.
     *
     * @throws BrokerException INVALID when it is not a list of strings, as RabbitMQ refuses it
     */
    static List<String> ofAmqp10(Object xcc) {
        if (xcc == null) {
            return null;
        }
        if (xcc instanceof List<?> list) {
            List<String> keys = new ArrayList<>(list.size());
            for (Object item : list) {
                if (!(item instanceof String key)) {
                    keys = null;
                    break;
                }
                keys.add(key);
            }
            if (keys != null) {
                return keys;
            }
        }
        throw new BrokerException(BrokerException.Kind.INVALID, "bad value for 'x-cc' message-annotation: "
            + (xcc instanceof Object[] array ? java.util.Arrays.toString(array) : xcc));
    }
}
