package io.skiffmq.core.policy;

import io.skiffmq.core.queue.QueueType;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Pattern;

/**
 * A virtual host's policies and operator policies, and which apply to a queue or exchange, as
 * {@code rabbit_policy:match/2} picks them: of the policies whose {@code apply-to} takes the object, whose pattern
 * is found in its name and (for a queue) whose keys its type supports ({@link PolicyKeys#applicable}), the one of
 * highest priority applies, whole; likewise one operator policy; the two definitions are merged key by key
 * ({@code rabbit_policy:merge_operator_definitions/2}: where both set a key the stricter value wins). Equal
 * priorities are left in RabbitMQ to its table's order, which is no order; here the smaller name wins, so the
 * choice is the same on every node and after every restart.
 *
 * <p>Immutable: a change makes a new one. Evaluated when policies, queues or exchanges change, never per message.
 */
public final class Policies {
    public static final Policies NONE = new Policies(List.of(), List.of());
    /** Highest priority first; equal ones by name. */
    private static final Comparator<Policy> MATCH_ORDER = Comparator.comparingDouble(Policy::rank).reversed()
        .thenComparing(Policy::name);

    private final List<Compiled> user;
    private final List<Compiled> operator;

    /** A policy with its pattern compiled once. */
    private record Compiled(Policy policy, Pattern regex) {
        Compiled(Policy policy) {
            this(policy, Policy.regex(policy.pattern()));
        }
    }

    private Policies(List<Compiled> user, List<Compiled> operator) {
        this.user = user;
        this.operator = operator;
    }

    /** These with {@code policy} added or replacing the one of its name. */
    public Policies with(Policy policy, boolean isOperator) {
        List<Compiled> list = new ArrayList<>(isOperator ? operator : user);
        list.removeIf(c -> c.policy.name().equals(policy.name()));
        list.add(new Compiled(policy));
        list.sort(Comparator.comparing(Compiled::policy, MATCH_ORDER));
        return isOperator ? new Policies(user, List.copyOf(list)) : new Policies(List.copyOf(list), operator);
    }

    /** These without the policy named so (the same when there is none). */
    public Policies without(String name, boolean isOperator) {
        List<Compiled> list = new ArrayList<>(isOperator ? operator : user);
        if (!list.removeIf(c -> c.policy.name().equals(name))) {
            return this;
        }
        return isOperator ? new Policies(user, List.copyOf(list)) : new Policies(List.copyOf(list), operator);
    }

    /** The policy (or operator policy) named so, or null. */
    public Policy get(String name, boolean isOperator) {
        for (Compiled c : isOperator ? operator : user) {
            if (c.policy.name().equals(name)) {
                return c.policy;
            }
        }
        return null;
    }

    /** The policies (or operator policies) by priority, the lowest first, as RabbitMQ lists them. */
    public List<Policy> list(boolean isOperator) {
        List<Policy> all = new ArrayList<>();
        (isOperator ? operator : user).forEach(c -> all.add(c.policy));
        all.sort(Comparator.comparingDouble(Policy::rank).thenComparing(Policy::name));
        return all;
    }

    public boolean isEmpty() {
        return user.isEmpty() && operator.isEmpty();
    }

    /** What applies to the queue {@code name} of {@code type}. */
    public EffectivePolicy forQueue(String name, QueueType type) {
        if (isEmpty()) {
            return EffectivePolicy.NONE;
        }
        return effective(match(user, name, type), match(operator, name, type));
    }

    /** What applies to the exchange {@code name}. */
    public EffectivePolicy forExchange(String name) {
        if (isEmpty()) {
            return EffectivePolicy.NONE;
        }
        return effective(match(user, name, null), match(operator, name, null));
    }

    /** The first (highest) policy that takes the object: a queue of {@code type}, or an exchange when null. */
    private static Policy match(List<Compiled> policies, String name, QueueType type) {
        for (Compiled c : policies) {
            Policy p = c.policy;
            boolean inScope = type == null ? p.applyTo().exchanges()
                : p.applyTo().queues(type) && PolicyKeys.applicable(type, p.definition().keySet());
            if (inScope && c.regex.matcher(name).find()) {
                return p;
            }
        }
        return null;
    }

    private static EffectivePolicy effective(Policy policy, Policy op) {
        if (policy == null && op == null) {
            return EffectivePolicy.NONE;
        }
        return new EffectivePolicy(policy == null ? null : policy.name(), op == null ? null : op.name(),
            merge(policy == null ? Map.of() : policy.definition(), op == null ? Map.of() : op.definition()));
    }

    /** Both definitions, keys in order; where both set one, {@link #mergeValue}. */
    static Map<String, Object> merge(Map<String, Object> definition, Map<String, Object> op) {
        TreeMap<String, Object> merged = new TreeMap<>();
        TreeSet<String> keys = new TreeSet<>(definition.keySet());
        keys.addAll(op.keySet());
        for (String key : keys) {
            Object value = definition.get(key);
            Object opValue = op.get(key);
            merged.put(key, value == null ? opValue : opValue == null ? value : mergeValue(key, value, opValue));
        }
        return merged;
    }

    /**
     * {@code rabbit_policies:merge_policy_value/3}: the smaller number; for {@code delivery-limit}, a negative
     * (unlimited) one on either side makes it the larger; otherwise the operator's value.
     */
    static Object mergeValue(String key, Object value, Object opValue) {
        if (value instanceof Number a && opValue instanceof Number b) {
            boolean larger = key.equals("delivery-limit") && (a.longValue() < 0 || b.longValue() < 0);
            return (a.doubleValue() <= b.doubleValue()) != larger ? value : opValue;
        }
        return opValue;
    }
}
