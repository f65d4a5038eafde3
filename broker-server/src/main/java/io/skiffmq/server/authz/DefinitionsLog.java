package io.skiffmq.server.authz;

import io.skiffmq.core.definitions.DefinitionChange.BrokerChange;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * Where {@link AccessControl}'s changes are made durable before they take effect: the single node's
 * {@code BrokerDefinitionsStore}, or the cluster's metadata log. Thread-safe.
 */
public interface DefinitionsLog {
    /** Appends changes, in order; completes once they are durable (in a cluster: committed and applied here). */
    CompletableFuture<Void> append(List<? extends BrokerChange> changes);

    /**
     * True when the log puts changes in force itself, on every node, through {@link AccessControl#applied} (the
     * cluster's); false when {@link AccessControl#update} does once the append completes (a single node's).
     */
    default boolean appliesChanges() {
        return false;
    }
}
