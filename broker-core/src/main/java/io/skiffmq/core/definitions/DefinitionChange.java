package io.skiffmq.core.definitions;

import io.skiffmq.core.Exchange;
import io.skiffmq.core.definitions.BrokerDefinitions.PermissionDefinition;
import io.skiffmq.core.definitions.BrokerDefinitions.TopicPermissionDefinition;
import io.skiffmq.core.definitions.BrokerDefinitions.UserDefinition;
import io.skiffmq.core.definitions.BrokerDefinitions.VhostDefinition;
import io.skiffmq.core.message.HeaderValues;
import io.skiffmq.core.policy.Policy;
import io.skiffmq.core.routing.Binding;
import java.util.List;
import java.util.Map;

/**
 * One change to the durable definitions, protocol-neutral and small: what a store appends to its log (and, in a
 * cluster, what one Raft log entry carries), never a snapshot of everything. {@link DefinitionCodec} encodes it.
 *
 * <p>Here in broker-core, beside the {@link Exchange}, {@link Binding} and {@link BrokerDefinitions} values they
 * carry, so that the single-node store (broker-store) and a replicated one (a cluster module) both reach them
 * without either knowing the other. Every record is immutable.
 *
 * <p>Two scopes: a {@link VhostChange} is applied to one virtual host (its exchanges, queues, bindings) and says
 * nothing of which one (the single-node store keeps a log per virtual host; a shared log wraps it in
 * {@link InVhost}); a {@link BrokerChange} to the broker's own definitions. Deletions cascade as the broker
 * cascades them, so a log never lists the bindings that go with a queue or exchange: {@link QueueDeleted} takes the
 * bindings to the queue, {@link ExchangeDeleted} those from and to the exchange, {@link VhostDeleted} and
 * {@link UserDeleted} the permissions and topic permissions of the virtual host or user. An auto-delete exchange
 * that goes with its last binding is an {@link ExchangeDeleted} of its own.
 */
public sealed interface DefinitionChange {

    /** A change inside one virtual host. */
    sealed interface VhostChange extends DefinitionChange {
    }

    /** A change to the broker's virtual hosts, users and permissions. */
    sealed interface BrokerChange extends DefinitionChange {
    }

    /**
     * A durable queue (durable and not exclusive), with the id its journal records and stream directory carry.
     * Ids are never reused.
     */
    record QueueDeclared(String name, long id, boolean autoDelete, Map<String, Object> arguments, long incarnation)
            implements VhostChange {
        public QueueDeclared {
            arguments = HeaderValues.copyOf(arguments);
        }

        /** A queue of this node alone (no {@link QueueHomed#incarnation}). */
        public QueueDeclared(String name, long id, boolean autoDelete, Map<String, Object> arguments) {
            this(name, id, autoDelete, arguments, 0);
        }
    }

    /**
     * In a cluster, a durable queue (durable and not exclusive) and its home node, the one node that holds it and its
     * messages: the record every node shares. The home node's own store gives it its id there
     * ({@link QueueDeclared}, with the record's {@code incarnation}, a random non-zero number that tells a queue
     * from an earlier one of its name when the log is replayed over what that store recovered).
     */
    record QueueHomed(String name, boolean autoDelete, Map<String, Object> arguments, String node, long incarnation)
            implements VhostChange {
        public QueueHomed {
            arguments = HeaderValues.copyOf(arguments);
        }

        /** The queue it declares. */
        public io.skiffmq.core.queue.QueueDeclaration declaration() {
            return new io.skiffmq.core.queue.QueueDeclaration(name, true, false, autoDelete, arguments);
        }
    }

    /** A durable queue deleted, and every binding to it. */
    record QueueDeleted(String name) implements VhostChange {
    }

    /** A durable exchange. */
    record ExchangeDeclared(Exchange exchange) implements VhostChange {
    }

    /** A durable exchange deleted, and every binding from or to it. */
    record ExchangeDeleted(String name) implements VhostChange {
    }

    /** A binding between two durable ends. */
    record BindingAdded(Binding binding) implements VhostChange {
    }

    /** A binding between two durable ends removed (arguments included in its identity). */
    record BindingRemoved(Binding binding) implements VhostChange {
    }

    /**
     * The id the next durable queue gets, at least: in a snapshot, where the queues that took the ids below it may
     * be gone.
     */
    record NextQueueId(long next) implements VhostChange {
    }

    /**
     * A policy of the virtual host set, replacing the one of its name: a user policy, or an operator policy when
     * {@code operator}.
     */
    record PolicySet(Policy policy, boolean operator) implements VhostChange {
    }

    /** A policy (an operator policy when {@code operator}) of the virtual host cleared. */
    record PolicyCleared(String name, boolean operator) implements VhostChange {
    }

    /** A change of virtual host {@code vhost}, for a log that carries every virtual host's changes. */
    record InVhost(String vhost, VhostChange change) implements BrokerChange {
    }

    /** A virtual host created, with its limits. */
    record VhostAdded(VhostDefinition vhost) implements BrokerChange {
    }

    /** A virtual host deleted, with its permissions and topic permissions. */
    record VhostDeleted(String name) implements BrokerChange {
    }

    /** A virtual host's {@code max-connections} and {@code max-queues} (-1: none). */
    record VhostLimitsSet(String name, long maxConnections, long maxQueues) implements BrokerChange {
    }

    /**
     * A virtual host's description, tags, default queue type (null: none) and protection from deletion, as
     * RabbitMQ's metadata.
     */
    record VhostMetadataSet(String name, String description, List<String> tags, String defaultQueueType,
            boolean protectedFromDeletion) implements BrokerChange {
        public VhostMetadataSet {
            tags = List.copyOf(tags);
        }

        /** Not protected from deletion. */
        public VhostMetadataSet(String name, String description, List<String> tags, String defaultQueueType) {
            this(name, description, tags, defaultQueueType, false);
        }
    }

    /** A global parameter set (created or replaced). */
    record GlobalParameterSet(BrokerDefinitions.GlobalParameterDefinition parameter) implements BrokerChange {
    }

    /** A global parameter cleared. */
    record GlobalParameterCleared(String name) implements BrokerChange {
    }

    /** A user created or replaced (password, tags, limits). */
    record UserPut(UserDefinition user) implements BrokerChange {
    }

    /** A user deleted, with its permissions and topic permissions. */
    record UserDeleted(String name) implements BrokerChange {
    }

    /** A user's permissions in a virtual host, set (replacing any). */
    record PermissionSet(PermissionDefinition permission) implements BrokerChange {
    }

    /** A user's permissions in a virtual host taken away. */
    record PermissionCleared(String user, String vhost) implements BrokerChange {
    }

    /** A user's topic permissions for one exchange of a virtual host, set (replacing any). */
    record TopicPermissionSet(TopicPermissionDefinition permission) implements BrokerChange {
    }

    /** A user's topic permissions in a virtual host taken away: for one exchange, or all when {@code exchange} is null. */
    record TopicPermissionCleared(String user, String vhost, String exchange) implements BrokerChange {
    }
}
