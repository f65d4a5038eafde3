package io.skiffmq.core.policy;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.regex.Pattern;
import java.util.regex.PatternSyntaxException;

/**
 * A policy or an operator policy of a virtual host, as RabbitMQ's runtime parameters of components {@code policy}
 * and {@code operator_policy} hold one: its name, a regular expression searched for (not anchored: {@code ^} and
 * {@code $} anchor) in queue and exchange names, what it applies to, its priority (the highest matching applies)
 * and its definition (keys as {@link PolicyKeys} checks them). Immutable; its definition keeps JSON's types, with
 * integers as longs.
 *
 * @param priority an integer or a decimal number, as RabbitMQ takes any number
 */
public record Policy(String name, String pattern, ApplyTo applyTo, Number priority, Map<String, Object> definition) {
    public Policy {
        definition = Collections.unmodifiableMap(longs(definition));
        priority = priority instanceof Integer || priority instanceof Short || priority instanceof Byte
            ? Long.valueOf(priority.longValue()) : priority;
    }

    /**
     * Checks a policy as {@code rabbit_policy:policy_validation/0} does (pattern, apply-to, definition), for a user
     * policy or an operator policy.
     *
     * @throws IllegalArgumentException in RabbitMQ's words, without its "Validation failed" heading
     */
    public static Policy checked(String name, String pattern, ApplyTo applyTo, Number priority,
            Map<String, Object> definition, boolean operator) {
        regex(pattern);
        Policy policy = new Policy(name, pattern, applyTo, priority, definition);
        PolicyKeys.check(policy.definition, operator); // its integers as longs
        return policy;
    }

    /** The pattern compiled; RabbitMQ's wording when it is none. */
    static Pattern regex(String pattern) {
        try {
            return Pattern.compile(pattern);
        } catch (PatternSyntaxException e) {
            throw new IllegalArgumentException("pattern should be regular expression but is invalid: "
                + e.getDescription());
        }
    }

    /** The priority as compared: RabbitMQ compares numbers by value whatever their type. */
    double rank() {
        return priority.doubleValue();
    }

    private static Map<String, Object> longs(Map<String, Object> definition) {
        Map<String, Object> copy = new LinkedHashMap<>();
        definition.forEach((k, v) -> copy.put(k, v instanceof Integer || v instanceof Short || v instanceof Byte
            ? Long.valueOf(((Number) v).longValue()) : v));
        return copy;
    }
}
