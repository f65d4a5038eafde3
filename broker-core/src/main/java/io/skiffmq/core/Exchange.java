package io.skiffmq.core;

import io.skiffmq.core.message.HeaderValues;
import io.skiffmq.core.policy.EffectivePolicy;
import java.util.Map;

/**
 * An exchange. Two declarations are {@link #equivalent} when type, durability, auto-delete, internal and arguments
 * agree.
 *
 * @param autoDelete deleted when its last binding (as a source) is removed
 * @param internal clients cannot publish to it; only other exchanges route to it
 * @param arguments e.g. {@code alternate-exchange}: where messages that route nowhere go
 * @param policy the policy in force, which its virtual host sets ({@link #withPolicy}) when policies change: its
 *        {@code alternate-exchange} applies where the arguments name none
 */
public record Exchange(String name, Type type, boolean durable, boolean autoDelete, boolean internal,
        Map<String, Object> arguments, EffectivePolicy policy) {

    public enum Type {
        DIRECT("direct", "AMQP direct exchange, as per the AMQP specification"),
        FANOUT("fanout", "AMQP fanout exchange, as per the AMQP specification"),
        TOPIC("topic", "AMQP topic exchange, as per the AMQP specification"),
        HEADERS("headers", "AMQP headers exchange, as per the AMQP specification"),
        /**
         * RabbitMQ 4's {@code x-local-random}: each message goes to one of the queues bound to it, picked at random
         * among those on the publisher's node (on one node, all of them); bindings have the empty key and lead to
         * queues ({@code rabbit_exchange_type_local_random}).
         */
        LOCAL_RANDOM("x-local-random", "Picks one random local binding (queue) to route via (to).");

        private final String value;
        private final String description;

        Type(String value, String description) {
            this.value = value;
            this.description = description;
        }

        /** The type's name as RabbitMQ names it ("direct", …, "x-local-random"). */
        public String value() {
            return value;
        }

        /** RabbitMQ's description of the type, as its HTTP API lists it. */
        public String description() {
            return description;
        }

        /** The type named exactly as RabbitMQ names it: "DIRECT" is none, as in RabbitMQ. */
        public static Type of(String name) {
            for (Type type : values()) {
                if (type.value.equals(name)) {
                    return type;
                }
            }
            throw new IllegalArgumentException("unknown exchange type '" + name + "'");
        }
    }

    public Exchange {
        arguments = HeaderValues.copyOf(arguments); // keeps void (null) values
    }

    /** An exchange as declared, without a policy. */
    public Exchange(String name, Type type, boolean durable, boolean autoDelete, boolean internal,
            Map<String, Object> arguments) {
        this(name, type, durable, autoDelete, internal, arguments, EffectivePolicy.NONE);
    }

    public Exchange(String name, Type type) {
        this(name, type, true, false, false, Map.of());
    }

    /** This exchange under {@code inForce}. */
    public Exchange withPolicy(EffectivePolicy inForce) {
        return inForce.equals(policy) ? this
            : new Exchange(name, type, durable, autoDelete, internal, arguments, inForce);
    }

    /** Declared alike: everything but the policy agrees. */
    public boolean equivalent(Exchange other) {
        return withPolicy(EffectivePolicy.NONE).equals(other.withPolicy(EffectivePolicy.NONE));
    }

    /** The default exchange: routes a message to the queue named by its routing key. */
    public boolean isDefault() {
        return name.isEmpty();
    }

    /** The alternate exchange its arguments name, or null. */
    public String alternateExchange() {
        Object ae = arguments.get("alternate-exchange");
        return ae == null ? null : ae.toString();
    }

    /**
     * Where messages that route nowhere go: the argument's alternate exchange, else the policy's (the argument
     * wins, as in RabbitMQ's {@code rabbit_exchange:process_alternate/2}); null for nowhere.
     */
    public String alternateInForce() {
        String ae = alternateExchange();
        return ae != null ? ae : policy.string("alternate-exchange");
    }
}
