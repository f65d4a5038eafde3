package io.skiffmq.server.amqp10;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;

/**
 * A link address or a message's {@code to}, parsed: RabbitMQ 4 "v2" addresses ({@code /queues/q},
 * {@code /exchanges/e}, {@code /exchanges/e/key}, percent-encoded), the older "v1" forms ({@code /amq/queue/q},
 * {@code /queue/q}, {@code /exchange/e/key}, {@code /topic/key}), and bare names, which mean a queue.
 *
 * @param queue the queue, for queue addresses (else null)
 * @param exchange the exchange, for exchange addresses (else null)
 * @param routingKey the routing key: empty for {@code /exchanges/e} (RabbitMQ 4's v2 addresses route with the key
 *        they name, none meaning ""); null for the v1 {@code /exchange/e}, where the message's subject is the key
 * @param mayCreate true for the forms that declare the queue when missing (bare names, {@code /queue/q})
 * @param topic a JMS topic: {@code amq.topic} with the name as key, where a message nobody subscribed to is
 *        accepted and dropped (JMS semantics) rather than released
 */
record Address(String queue, String exchange, String routingKey, boolean mayCreate, boolean topic) {

    Address(String queue, String exchange, String routingKey, boolean mayCreate) {
        this(queue, exchange, routingKey, mayCreate, false);
    }

    /** A JMS topic by name (a bare address with the {@code topic} capability, or {@code x-opt-jms-dest} 1). */
    static Address topic(String name) {
        return new Address(null, "amq.topic", name, false, true);
    }

    boolean isQueue() {
        return queue != null;
    }

    /** @throws IllegalArgumentException for an address of no form above, or a bad percent-escape */
    static Address parse(String address) {
        if (!address.startsWith("/")) {
            return new Address(address, null, null, true);
        }
        String[] parts = address.substring(1).split("/", -1);
        String head = parts[0];
        switch (head) {
            case "queues":
                if (parts.length == 2 && !parts[1].isEmpty()) {
                    return new Address(decode(parts[1]), null, null, false);
                }
                break;
            case "exchanges":
                if (parts.length == 2) {
                    return new Address(null, decode(parts[1]), "", false);
                }
                if (parts.length == 3) {
                    return new Address(null, decode(parts[1]), decode(parts[2]), false);
                }
                break;
            case "amq":
                if (parts.length == 3 && parts[1].equals("queue") && !parts[2].isEmpty()) {
                    return new Address(parts[2], null, null, false);
                }
                break;
            case "queue":
                if (parts.length == 2 && !parts[1].isEmpty()) {
                    return new Address(parts[1], null, null, true);
                }
                break;
            case "exchange":
                if (parts.length == 2 || parts.length == 3) {
                    return new Address(null, parts[1], parts.length == 3 ? parts[2] : null, false);
                }
                break;
            case "topic":
                if (parts.length == 2) {
                    return new Address(null, "amq.topic", parts[1], false);
                }
                break;
            default:
                break;
        }
        throw new IllegalArgumentException("unsupported address '" + address + "'");
    }

    /** RFC 3986 percent-decoding (unlike URLDecoder, '+' stays '+'). */
    static String decode(String segment) {
        if (segment.indexOf('%') < 0) {
            return segment;
        }
        ByteArrayOutputStream out = new ByteArrayOutputStream(segment.length());
        for (int i = 0; i < segment.length(); i++) {
            char c = segment.charAt(i);
            if (c == '%') {
                int value = i + 2 < segment.length() ? Character.digit(segment.charAt(i + 1), 16) << 4
                    | Character.digit(segment.charAt(i + 2), 16) : -1;
                if (value < 0) {
                    throw new IllegalArgumentException("bad percent-encoding in '" + segment + "'");
                }
                out.write(value);
                i += 2;
            } else {
                out.writeBytes(String.valueOf(c).getBytes(StandardCharsets.UTF_8));
            }
        }
        return out.toString(StandardCharsets.UTF_8);
    }
}
