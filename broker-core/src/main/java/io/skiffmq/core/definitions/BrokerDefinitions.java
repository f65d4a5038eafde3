package io.skiffmq.core.definitions;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Predicate;

/**
 * What the broker as a whole keeps across restarts, apart from each virtual host's own exchanges, queues and
 * bindings: the virtual hosts with their limits, the users (password hash and hashing algorithm as opaque strings,
 * tags, limits), and each user's permissions and topic permissions per virtual host. Changed by
 * {@link DefinitionChange.BrokerChange}s ({@link #apply}); the store keeps those in a log (broker-store's
 * {@code BrokerDefinitionsStore}). Immutable.
 *
 * <p>A limit of -1 means none, as in RabbitMQ.
 */
public record BrokerDefinitions(List<VhostDefinition> vhosts, List<UserDefinition> users,
        List<PermissionDefinition> permissions, List<TopicPermissionDefinition> topicPermissions,
        List<GlobalParameterDefinition> globalParameters) {
    public static final BrokerDefinitions EMPTY = new BrokerDefinitions(List.of(), List.of(), List.of(), List.of());

    public BrokerDefinitions {
        vhosts = List.copyOf(vhosts);
        users = List.copyOf(users);
        permissions = List.copyOf(permissions);
        topicPermissions = List.copyOf(topicPermissions);
        globalParameters = List.copyOf(globalParameters);
    }

    /** Without global parameters. */
    public BrokerDefinitions(List<VhostDefinition> vhosts, List<UserDefinition> users,
            List<PermissionDefinition> permissions, List<TopicPermissionDefinition> topicPermissions) {
        this(vhosts, users, permissions, topicPermissions, List.of());
    }

    /**
     * One of RabbitMQ's global runtime parameters ({@code rabbitmqctl set_global_parameter}), kept and exported as
     * RabbitMQ keeps one it has no use for: {@code value} is its JSON text.
     */
    public record GlobalParameterDefinition(String name, String value) {
    }

    /**
     * A virtual host: its {@code max-connections} and {@code max-queues} limits and RabbitMQ's metadata: a
     * description, tags, the default queue type ({@code classic}, {@code quorum}, {@code stream}; null for
     * none), the type of a queue declared without {@code x-queue-type} there, and RabbitMQ 4.1's
     * {@code protected_from_deletion}.
     */
    public record VhostDefinition(String name, long maxConnections, long maxQueues, String description,
            List<String> tags, String defaultQueueType, boolean protectedFromDeletion) {
        public VhostDefinition {
            description = description == null ? "" : description;
            tags = List.copyOf(tags);
        }

        /** Not protected from deletion. */
        public VhostDefinition(String name, long maxConnections, long maxQueues, String description,
                List<String> tags, String defaultQueueType) {
            this(name, maxConnections, maxQueues, description, tags, defaultQueueType, false);
        }

        /** Without metadata. */
        public VhostDefinition(String name, long maxConnections, long maxQueues) {
            this(name, maxConnections, maxQueues, "", List.of(), null);
        }

        /** This one with other limits. */
        public VhostDefinition withLimits(long maxConnections, long maxQueues) {
            return new VhostDefinition(name, maxConnections, maxQueues, description, tags, defaultQueueType,
                protectedFromDeletion);
        }

        /** This one with other metadata. */
        public VhostDefinition withMetadata(DefinitionChange.VhostMetadataSet m) {
            return new VhostDefinition(name, maxConnections, maxQueues, m.description(), m.tags(),
                m.defaultQueueType(), m.protectedFromDeletion());
        }
    }

    /**
     * A user. {@code passwordHash} and {@code hashingAlgorithm} are RabbitMQ's {@code password_hash} and
     * {@code hashing_algorithm}, kept as given; {@code maxChannels} limits the user's channels (0-9-1) or sessions
     * (AMQP 1.0) across its connections.
     */
    public record UserDefinition(String name, String passwordHash, String hashingAlgorithm, List<String> tags,
            long maxConnections, long maxChannels) {
        public UserDefinition {
            tags = List.copyOf(tags);
        }
    }

    /** A user's configure, write and read regular expressions in a virtual host. */
    public record PermissionDefinition(String user, String vhost, String configure, String write, String read) {
    }

    /** A user's write and read regular expressions over routing keys, for one topic exchange of a virtual host. */
    public record TopicPermissionDefinition(String user, String vhost, String exchange, String write, String read) {
    }

    /**
     * These definitions with {@code change} applied (a new value; this one is unchanged). Copies the lists: for the
     * definitions in force, changed on an administration thread, never per message.
     */
    public BrokerDefinitions apply(DefinitionChange.BrokerChange change) {
        List<VhostDefinition> v = vhosts;
        List<UserDefinition> u = users;
        List<PermissionDefinition> p = permissions;
        List<TopicPermissionDefinition> t = topicPermissions;
        List<GlobalParameterDefinition> g = globalParameters;
        if (change instanceof DefinitionChange.VhostAdded a) {
            v = put(v, a.vhost(), x -> x.name().equals(a.vhost().name()));
        } else if (change instanceof DefinitionChange.VhostDeleted d) {
            v = without(v, x -> x.name().equals(d.name()));
            p = without(p, x -> x.vhost().equals(d.name()));
            t = without(t, x -> x.vhost().equals(d.name()));
        } else if (change instanceof DefinitionChange.VhostLimitsSet l) {
            v = v.stream().map(x -> x.name().equals(l.name())
                ? x.withLimits(l.maxConnections(), l.maxQueues()) : x).toList();
        } else if (change instanceof DefinitionChange.VhostMetadataSet m) {
            v = v.stream().map(x -> x.name().equals(m.name())
                ? x.withMetadata(m) : x).toList();
        } else if (change instanceof DefinitionChange.UserPut put) {
            u = put(u, put.user(), x -> x.name().equals(put.user().name()));
        } else if (change instanceof DefinitionChange.UserDeleted d) {
            u = without(u, x -> x.name().equals(d.name()));
            p = without(p, x -> x.user().equals(d.name()));
            t = without(t, x -> x.user().equals(d.name()));
        } else if (change instanceof DefinitionChange.PermissionSet s) {
            p = put(p, s.permission(), x -> x.user().equals(s.permission().user())
                && x.vhost().equals(s.permission().vhost()));
        } else if (change instanceof DefinitionChange.PermissionCleared c) {
            p = without(p, x -> x.user().equals(c.user()) && x.vhost().equals(c.vhost()));
        } else if (change instanceof DefinitionChange.TopicPermissionSet s) {
            t = put(t, s.permission(), x -> x.user().equals(s.permission().user())
                && x.vhost().equals(s.permission().vhost()) && x.exchange().equals(s.permission().exchange()));
        } else if (change instanceof DefinitionChange.TopicPermissionCleared c) {
            t = without(t, x -> x.user().equals(c.user()) && x.vhost().equals(c.vhost())
                && (c.exchange() == null || x.exchange().equals(c.exchange())));
        } else if (change instanceof DefinitionChange.GlobalParameterSet s) {
            g = put(g, s.parameter(), x -> x.name().equals(s.parameter().name()));
        } else if (change instanceof DefinitionChange.GlobalParameterCleared c) {
            g = without(g, x -> x.name().equals(c.name()));
        } else {
            return this; // InVhost: a virtual host's own definitions are not part of these
        }
        return new BrokerDefinitions(v, u, p, t, g);
    }

    /** These definitions as the changes that build them from nothing: what a snapshot holds. */
    public List<DefinitionChange.BrokerChange> changes() {
        List<DefinitionChange.BrokerChange> changes = new ArrayList<>();
        vhosts.forEach(v -> changes.add(new DefinitionChange.VhostAdded(v)));
        users.forEach(u -> changes.add(new DefinitionChange.UserPut(u)));
        permissions.forEach(p -> changes.add(new DefinitionChange.PermissionSet(p)));
        topicPermissions.forEach(t -> changes.add(new DefinitionChange.TopicPermissionSet(t)));
        globalParameters.forEach(g -> changes.add(new DefinitionChange.GlobalParameterSet(g)));
        return changes;
    }

    /** {@code list} with {@code item} in place of the one {@code same} finds (at its place), or appended. */
    private static <T> List<T> put(List<T> list, T item, Predicate<T> same) {
        List<T> copy = new ArrayList<>(list);
        for (int i = 0; i < copy.size(); i++) {
            if (same.test(copy.get(i))) {
                copy.set(i, item);
                return copy;
            }
        }
        copy.add(item);
        return copy;
    }

    private static <T> List<T> without(List<T> list, Predicate<T> which) {
        List<T> copy = new ArrayList<>(list);
        copy.removeIf(which);
        return copy;
    }
}
