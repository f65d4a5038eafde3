package io.skiffmq.store.definitions;

import io.skiffmq.core.definitions.BrokerDefinitions;
import io.skiffmq.core.definitions.BrokerDefinitions.PermissionDefinition;
import io.skiffmq.core.definitions.BrokerDefinitions.TopicPermissionDefinition;
import io.skiffmq.core.definitions.BrokerDefinitions.UserDefinition;
import io.skiffmq.core.definitions.BrokerDefinitions.VhostDefinition;
import io.skiffmq.core.definitions.DefinitionChange;
import io.skiffmq.core.definitions.DefinitionChange.PermissionCleared;
import io.skiffmq.core.definitions.DefinitionChange.PermissionSet;
import io.skiffmq.core.definitions.DefinitionChange.TopicPermissionCleared;
import io.skiffmq.core.definitions.DefinitionChange.TopicPermissionSet;
import io.skiffmq.core.definitions.DefinitionChange.UserDeleted;
import io.skiffmq.core.definitions.DefinitionChange.UserPut;
import io.skiffmq.core.definitions.DefinitionChange.VhostAdded;
import io.skiffmq.core.definitions.DefinitionChange.VhostDeleted;
import io.skiffmq.core.definitions.DefinitionChange.VhostLimitsSet;
import io.skiffmq.core.definitions.DefinitionChange.VhostMetadataSet;
import io.skiffmq.core.definitions.DefinitionChange.GlobalParameterCleared;
import io.skiffmq.core.definitions.DefinitionChange.GlobalParameterSet;
import io.skiffmq.core.definitions.BrokerDefinitions.GlobalParameterDefinition;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

/**
 * The broker's definitions as {@link DefinitionChange.BrokerChange}s build them, in maps keyed as the changes
 * address them, so a change costs O(1); deleting a virtual host or user scans the permissions for theirs. Owned by
 * one thread at a time (see {@link ChangeLog}).
 */
public final class BrokerReplica implements ChangeLog.Replica {
    private final Map<String, VhostDefinition> vhosts = new LinkedHashMap<>();
    private final Map<String, UserDefinition> users = new LinkedHashMap<>();
    private final Map<List<String>, PermissionDefinition> permissions = new LinkedHashMap<>();
    private final Map<List<String>, TopicPermissionDefinition> topicPermissions = new LinkedHashMap<>();
    private final Map<String, GlobalParameterDefinition> globalParameters = new LinkedHashMap<>();

    @Override
    public void apply(DefinitionChange change) {
        if (change instanceof VhostAdded a) {
            vhosts.put(a.vhost().name(), a.vhost());
        } else if (change instanceof VhostDeleted d) {
            vhosts.remove(d.name());
            permissions.values().removeIf(p -> p.vhost().equals(d.name()));
            topicPermissions.values().removeIf(p -> p.vhost().equals(d.name()));
        } else if (change instanceof VhostLimitsSet l) {
            vhosts.computeIfPresent(l.name(), (n, v) -> v.withLimits(l.maxConnections(), l.maxQueues()));
        } else if (change instanceof VhostMetadataSet m) {
            vhosts.computeIfPresent(m.name(), (n, v) -> v.withMetadata(m));
        } else if (change instanceof UserPut u) {
            users.put(u.user().name(), u.user());
        } else if (change instanceof UserDeleted d) {
            users.remove(d.name());
            permissions.values().removeIf(p -> p.user().equals(d.name()));
            topicPermissions.values().removeIf(p -> p.user().equals(d.name()));
        } else if (change instanceof PermissionSet s) {
            PermissionDefinition p = s.permission();
            permissions.put(List.of(p.user(), p.vhost()), p);
        } else if (change instanceof PermissionCleared c) {
            permissions.remove(List.of(c.user(), c.vhost()));
        } else if (change instanceof TopicPermissionSet s) {
            TopicPermissionDefinition p = s.permission();
            topicPermissions.put(List.of(p.user(), p.vhost(), p.exchange()), p);
        } else if (change instanceof TopicPermissionCleared c) {
            if (c.exchange() == null) {
                topicPermissions.values().removeIf(p -> p.user().equals(c.user()) && p.vhost().equals(c.vhost()));
            } else {
                topicPermissions.remove(List.of(c.user(), c.vhost(), c.exchange()));
            }
        } else if (change instanceof GlobalParameterSet g) {
            globalParameters.put(g.parameter().name(), g.parameter());
        } else if (change instanceof GlobalParameterCleared g) {
            globalParameters.remove(g.name());
        } else {
            throw new IllegalArgumentException("not a broker change: " + change);
        }
    }

    @Override
    public void snapshot(Consumer<DefinitionChange> out) {
        definitions().changes().forEach(out);
    }

    /** The definitions as they stand. */
    public BrokerDefinitions definitions() {
        return new BrokerDefinitions(new ArrayList<>(vhosts.values()), new ArrayList<>(users.values()),
            new ArrayList<>(permissions.values()), new ArrayList<>(topicPermissions.values()),
            new ArrayList<>(globalParameters.values()));
    }
}
