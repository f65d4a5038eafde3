package io.skiffmq.core.policy;

import java.util.Collections;
import java.util.Map;

/**
 * What applies to one queue or exchange: the name of the user policy and of the operator policy that match it
 * (null for none) and their definitions merged ({@code effective_policy_definition}). Computed when policies,
 * queues or exchanges change, never per message. Immutable.
 */
public record EffectivePolicy(String policy, String operatorPolicy, Map<String, Object> definition) {
    public static final EffectivePolicy NONE = new EffectivePolicy(null, null, Map.of());

    public EffectivePolicy {
        definition = Collections.unmodifiableMap(definition);
    }

    /** The merged definition's integer value for {@code key}, or -1 when it has none. */
    public long number(String key) {
        return definition.get(key) instanceof Number n ? n.longValue() : -1;
    }

    /** The merged definition's string value for {@code key}, or null. */
    public String string(String key) {
        return definition.get(key) instanceof String s ? s : null;
    }

    public boolean has(String key) {
        return definition.containsKey(key);
    }
}
