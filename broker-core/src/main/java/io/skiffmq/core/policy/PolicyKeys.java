package io.skiffmq.core.policy;

import io.skiffmq.core.queue.QueueType;
import io.skiffmq.core.queue.StreamArguments;
import java.math.BigInteger;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.Predicate;

/**
 * The keys a policy's definition may hold, each value checked as RabbitMQ 4's {@code rabbit_policies} checks it
 * (its refusals word for word, values printed as Erlang prints them), which keys an operator policy may hold, and
 * which keys each queue type cannot take ({@code unsupported_policies} of RabbitMQ's queue types' capabilities): a
 * policy that holds one does not apply to a queue of that type at all ({@code rabbit_queue_type:is_policy_applicable}).
 * Stateless.
 *
 * <p>Where we differ: {@code delivery-limit} applies to our classic queues, which have a delivery limit
 * ({@code x-delivery-limit}), where RabbitMQ's classic queues skip any policy that holds it (docs/policies.md).
 */
public final class PolicyKeys {
    private PolicyKeys() {
    }

    /** The keys an operator policy may hold (RabbitMQ 3.10's {@code operator_policy_validator}s). */
    public static final Set<String> OPERATOR_KEYS = Set.of("expires", "message-ttl", "max-length",
        "max-length-bytes", "max-in-memory-length", "max-in-memory-bytes", "delivery-limit");

    /** RabbitMQ 4.0's classic queue capabilities, but for {@code delivery-limit}, which ours have. */
    private static final Set<String> CLASSIC_UNSUPPORTED = Set.of("max-age", "stream-max-segment-size-bytes",
        "initial-cluster-size", "dead-letter-strategy", "max-in-memory-length", "max-in-memory-bytes",
        "target-group-size");
    /** RabbitMQ 4.0's stream capabilities. */
    private static final Set<String> STREAM_UNSUPPORTED = Set.of("expires", "message-ttl", "dead-letter-exchange",
        "dead-letter-routing-key", "max-length", "max-in-memory-length", "max-in-memory-bytes", "max-priority",
        "overflow", "queue-mode", "single-active-consumer", "delivery-limit", "ha-mode", "ha-params",
        "ha-sync-mode", "ha-promote-on-shutdown", "ha-promote-on-failure", "queue-master-locator",
        "dead-letter-strategy", "target-group-size");
    /** RabbitMQ 4.0's quorum queue capabilities: the policy keys its quorum queues skip. */
    private static final Set<String> QUORUM_UNSUPPORTED = Set.of("max-priority", "queue-mode", "ha-mode",
        "ha-params", "ha-sync-mode", "ha-promote-on-shutdown", "ha-promote-on-failure", "queue-master-locator",
        "max-age", "stream-max-segment-size-bytes");

    /** A value check and what RabbitMQ says of a value that fails it ("~tp is not …"). */
    private record Rule(Predicate<Object> valid, String refusal) {
    }

    private static final Map<String, Rule> RULES = Map.ofEntries(
        Map.entry("alternate-exchange", new Rule(PolicyKeys::string, "is not a valid alternate exchange name")),
        Map.entry("consumer-disconnected-timeout", new Rule(atLeast(0),
            "is not a valid consumer disconnected timeout")),
        Map.entry("consumer-timeout", new Rule(atLeast(0), "is not a valid consumer timeout")),
        Map.entry("dead-letter-exchange", new Rule(PolicyKeys::string, "is not a valid dead letter exchange name")),
        Map.entry("dead-letter-routing-key", new Rule(PolicyKeys::string,
            "is not a valid dead letter routing key")),
        Map.entry("dead-letter-strategy", new Rule(oneOf("at-most-once", "at-least-once"),
            "is not a valid dead letter strategy")),
        Map.entry("message-ttl", new Rule(atLeast(0), "is not a valid message TTL")),
        Map.entry("expires", new Rule(atLeast(1), "is not a valid queue expiry")),
        Map.entry("max-length", new Rule(atLeast(0), "is not a valid maximum length")),
        Map.entry("max-length-bytes", new Rule(atLeast(0), "is not a valid maximum length in bytes")),
        Map.entry("max-in-memory-length", new Rule(atLeast(0), "is not a valid maximum memory in bytes")),
        Map.entry("max-in-memory-bytes", new Rule(atLeast(0), "is not a valid maximum memory in bytes")),
        Map.entry("queue-mode", new Rule(oneOf("default", "lazy"), "is not a valid queue-mode value")),
        Map.entry("queue-version", new Rule(v -> v instanceof Long l && (l == 1 || l == 2),
            "is not a valid queue-version value")),
        Map.entry("overflow", new Rule(oneOf("drop-head", "reject-publish", "reject-publish-dlx"),
            "is not a valid overflow value")),
        Map.entry("delivery-limit", new Rule(v -> v instanceof Long, "is not a valid delivery limit")),
        Map.entry("max-age", new Rule(v -> v instanceof String s && StreamArguments.maxAge(s) > 0,
            "is not a valid max age")),
        Map.entry("queue-leader-locator", new Rule(oneOf("client-local", "balanced", "random", "least-leaders"),
            "is not a valid queue leader locator value")),
        Map.entry("initial-cluster-size", new Rule(atLeast(0), "is not a valid cluster size")),
        Map.entry("stream-max-segment-size-bytes", new Rule(v -> v instanceof Long l && l >= 0
            && l <= StreamArguments.MAX_SEGMENT_SIZE_BYTES, "is not a valid segment size")),
        Map.entry("stream-filter-size-bytes", new Rule(v -> v instanceof Long l
            && l >= StreamArguments.MIN_FILTER_SIZE_BYTES && l <= StreamArguments.MAX_FILTER_SIZE_BYTES,
            "is not a valid filter size. Valid range is 16-255")));

    /** Whether a policy (an operator policy) may hold {@code key}. */
    public static boolean known(String key, boolean operator) {
        return RULES.containsKey(key) && (!operator || OPERATOR_KEYS.contains(key));
    }

    /**
     * Checks a definition (its integers as longs): every key it holds is known (to an operator policy, one of
     * {@link #OPERATOR_KEYS}) with a valid value, and it is not empty.
     *
     * @throws IllegalArgumentException in RabbitMQ's words: the first bad value by key, else the keys not known
     */
    static void check(Map<String, Object> definition, boolean operator) {
        if (definition.isEmpty()) {
            throw new IllegalArgumentException("no policy provided");
        }
        // an Erlang map of a few keys lists them in order: RabbitMQ checks and names them so
        StringBuilder unknown = new StringBuilder();
        for (Map.Entry<String, Object> e : new TreeMap<>(definition).entrySet()) {
            Rule rule = operator && !OPERATOR_KEYS.contains(e.getKey()) ? null : RULES.get(e.getKey());
            if (rule == null) {
                unknown.append(unknown.length() == 0 ? "" : ",").append("{").append(ErlangFormat.of(e.getKey()))
                    .append(",").append(ErlangFormat.of(e.getValue())).append("}");
            } else if (!rule.valid.test(e.getValue())) {
                throw new IllegalArgumentException(ErlangFormat.of(e.getValue()) + " " + rule.refusal);
            }
        }
        if (unknown.length() > 0) {
            throw new IllegalArgumentException("[" + unknown + "] are not recognised policy settings");
        }
    }

    /** A queue of {@code type} takes a policy holding these keys (else the policy does not apply to it). */
    static boolean applicable(QueueType type, Set<String> keys) {
        Set<String> unsupported = switch (type) {
            case CLASSIC -> CLASSIC_UNSUPPORTED;
            case STREAM -> STREAM_UNSUPPORTED;
            case QUORUM -> QUORUM_UNSUPPORTED;
        };
        for (String key : keys) {
            if (unsupported.contains(key)) {
                return false;
            }
        }
        return true;
    }

    private static boolean string(Object value) {
        return value instanceof String;
    }

    private static Predicate<Object> atLeast(long min) {
        return v -> v instanceof Long l && l >= min || v instanceof BigInteger b && b.signum() > 0;
    }

    private static Predicate<Object> oneOf(String... values) {
        List<String> allowed = List.of(values);
        return v -> v instanceof String s && allowed.contains(s);
    }
}
