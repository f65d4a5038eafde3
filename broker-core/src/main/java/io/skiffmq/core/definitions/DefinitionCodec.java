package io.skiffmq.core.definitions;

import io.skiffmq.core.Exchange;
import io.skiffmq.core.definitions.BrokerDefinitions.PermissionDefinition;
import io.skiffmq.core.definitions.BrokerDefinitions.TopicPermissionDefinition;
import io.skiffmq.core.definitions.BrokerDefinitions.UserDefinition;
import io.skiffmq.core.definitions.BrokerDefinitions.VhostDefinition;
import io.skiffmq.core.definitions.DefinitionChange.BindingAdded;
import io.skiffmq.core.definitions.DefinitionChange.BindingRemoved;
import io.skiffmq.core.definitions.DefinitionChange.ExchangeDeclared;
import io.skiffmq.core.definitions.DefinitionChange.ExchangeDeleted;
import io.skiffmq.core.definitions.DefinitionChange.InVhost;
import io.skiffmq.core.definitions.DefinitionChange.NextQueueId;
import io.skiffmq.core.definitions.DefinitionChange.PermissionCleared;
import io.skiffmq.core.definitions.DefinitionChange.PermissionSet;
import io.skiffmq.core.definitions.DefinitionChange.QueueDeclared;
import io.skiffmq.core.definitions.DefinitionChange.QueueDeleted;
import io.skiffmq.core.definitions.DefinitionChange.QueueHomed;
import io.skiffmq.core.definitions.DefinitionChange.TopicPermissionCleared;
import io.skiffmq.core.definitions.DefinitionChange.TopicPermissionSet;
import io.skiffmq.core.definitions.DefinitionChange.UserDeleted;
import io.skiffmq.core.definitions.DefinitionChange.UserPut;
import io.skiffmq.core.definitions.DefinitionChange.VhostChange;
import io.skiffmq.core.definitions.DefinitionChange.VhostAdded;
import io.skiffmq.core.definitions.DefinitionChange.VhostDeleted;
import io.skiffmq.core.definitions.DefinitionChange.VhostLimitsSet;
import io.skiffmq.core.definitions.DefinitionChange.VhostMetadataSet;
import io.skiffmq.core.definitions.DefinitionChange.GlobalParameterCleared;
import io.skiffmq.core.definitions.DefinitionChange.GlobalParameterSet;
import io.skiffmq.core.definitions.BrokerDefinitions.GlobalParameterDefinition;
import io.skiffmq.core.definitions.DefinitionChange.PolicyCleared;
import io.skiffmq.core.definitions.DefinitionChange.PolicySet;
import io.skiffmq.core.message.HeaderValues;
import io.skiffmq.core.policy.ApplyTo;
import io.skiffmq.core.policy.Policy;
import io.skiffmq.core.routing.Binding;
import io.skiffmq.core.routing.Destination;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.qpid.proton.codec.Data;

/**
 * A {@link DefinitionChange} as bytes: one AMQP 1.0 list whose first element is the change's kind (an int, below)
 * and the rest its fields in declaration order, so arguments keep their exact AMQP types, as the definitions files
 * always kept them (neutral values without an AMQP 1.0 type of their own go as {@link HeaderValues#toAmqp10} has
 * them: bytes as binary, instants as timestamps). A queue declared with two arguments is about 60 bytes. The kinds are part of the format on disk
 * and in a replicated log: never renumber one.
 *
 * <pre>
 *  1 queue declared     [name, id, auto-delete, arguments, (in a cluster) incarnation]
 *  2 queue deleted      [name]
 *  3 exchange declared  [name, type, auto-delete, internal, arguments]
 *  4 exchange deleted   [name]
 *  5 binding added      [source, destination is an exchange, destination, key, arguments]
 *  6 binding removed    [source, destination is an exchange, destination, key, arguments]
 *  7 next queue id      [next]
 *  8 queue homed        [name, auto-delete, arguments, home node, incarnation]
 * 16 in vhost           [vhost, the change's own list]
 * 17 vhost added        [name, max-connections, max-queues, description, tags, default queue type or null]
 *                      (the last three since metadata was kept; a record without them has none)
 * 18 vhost deleted      [name]
 * 19 vhost limits set   [name, max-connections, max-queues]
 * 20 user put           [name, password hash, hashing algorithm, tags, max-connections, max-channels]
 * 21 user deleted       [name]
 * 22 permission set     [user, vhost, configure, write, read]
 * 23 permission cleared [user, vhost]
 * 24 topic permission set     [user, vhost, exchange, write, read]
 * 25 topic permission cleared [user, vhost, exchange or null for all]
 * 26 policy set               [name, pattern, apply-to, priority, definition]
 * 27 policy cleared           [name]
 * 28 operator policy set      [name, pattern, apply-to, priority, definition]
 * 29 operator policy cleared  [name]
 * 30 vhost metadata set       [name, description, tags, default queue type or null]
 * 31 global parameter set     [name, value as JSON text]
 * 32 global parameter cleared [name]
 * </pre>
 *
 * Stateless; safe from any thread.
 */
public final class DefinitionCodec {
    private DefinitionCodec() {
    }

    /** The change's bytes. */
    public static byte[] encode(DefinitionChange change) {
        Data data = Data.Factory.create();
        data.putObject(toList(change));
        org.apache.qpid.proton.amqp.Binary bytes = data.encode();
        return bytes.getArray().length == bytes.getLength() && bytes.getArrayOffset() == 0 ? bytes.getArray()
            : Arrays.copyOfRange(bytes.getArray(), bytes.getArrayOffset(), bytes.getArrayOffset() + bytes.getLength());
    }

    /**
     * The change {@code bytes} hold.
     *
     * @throws IllegalArgumentException when they are no change this codec wrote
     */
    public static DefinitionChange decode(ByteBuffer bytes) {
        try {
            Data data = Data.Factory.create();
            data.decode(bytes);
            return fromList((List<?>) data.getObject());
        } catch (RuntimeException e) {
            throw new IllegalArgumentException("not a definition change: " + e, e);
        }
    }

    private static List<Object> toList(DefinitionChange change) {
        if (change instanceof QueueDeclared q) {
            return q.incarnation() == 0 ? List.of(1, q.name(), q.id(), q.autoDelete(), arguments(q.arguments()))
                : List.of(1, q.name(), q.id(), q.autoDelete(), arguments(q.arguments()), q.incarnation());
        } else if (change instanceof QueueDeleted q) {
            return List.of(2, q.name());
        } else if (change instanceof ExchangeDeclared d) {
            Exchange e = d.exchange();
            return List.of(3, e.name(), e.type().value(), e.autoDelete(), e.internal(), arguments(e.arguments()));
        } else if (change instanceof ExchangeDeleted e) {
            return List.of(4, e.name());
        } else if (change instanceof BindingAdded b) {
            return binding(5, b.binding());
        } else if (change instanceof BindingRemoved b) {
            return binding(6, b.binding());
        } else if (change instanceof NextQueueId n) {
            return List.of(7, n.next());
        } else if (change instanceof QueueHomed q) {
            return List.of(8, q.name(), q.autoDelete(), arguments(q.arguments()), q.node(), q.incarnation());
        } else if (change instanceof InVhost v) {
            return List.of(16, v.vhost(), toList(v.change()));
        } else if (change instanceof VhostAdded v) {
            VhostDefinition d = v.vhost();
            return Arrays.asList(17, d.name(), d.maxConnections(), d.maxQueues(), d.description(),
                new ArrayList<Object>(d.tags()), d.defaultQueueType(), d.protectedFromDeletion());
        } else if (change instanceof VhostDeleted v) {
            return List.of(18, v.name());
        } else if (change instanceof VhostLimitsSet v) {
            return List.of(19, v.name(), v.maxConnections(), v.maxQueues());
        } else if (change instanceof UserPut p) {
            UserDefinition u = p.user();
            return List.of(20, u.name(), u.passwordHash(), u.hashingAlgorithm(), new ArrayList<Object>(u.tags()),
                u.maxConnections(), u.maxChannels());
        } else if (change instanceof UserDeleted u) {
            return List.of(21, u.name());
        } else if (change instanceof PermissionSet s) {
            PermissionDefinition p = s.permission();
            return List.of(22, p.user(), p.vhost(), p.configure(), p.write(), p.read());
        } else if (change instanceof PermissionCleared p) {
            return List.of(23, p.user(), p.vhost());
        } else if (change instanceof TopicPermissionSet s) {
            TopicPermissionDefinition p = s.permission();
            return List.of(24, p.user(), p.vhost(), p.exchange(), p.write(), p.read());
        } else if (change instanceof TopicPermissionCleared p) {
            return Arrays.asList(25, p.user(), p.vhost(), p.exchange()); // exchange may be null
        } else if (change instanceof PolicySet s) {
            Policy p = s.policy();
            return List.of(s.operator() ? 28 : 26, p.name(), p.pattern(), p.applyTo().value(), p.priority(),
                new LinkedHashMap<>(p.definition()));
        } else if (change instanceof PolicyCleared c) {
            return List.of(c.operator() ? 29 : 27, c.name());
        } else if (change instanceof GlobalParameterSet g) {
            return List.of(31, g.parameter().name(), g.parameter().value());
        } else if (change instanceof GlobalParameterCleared g) {
            return List.of(32, g.name());
        } else if (change instanceof VhostMetadataSet m) {
            return Arrays.asList(30, m.name(), m.description(), new ArrayList<Object>(m.tags()), m.defaultQueueType(),
                m.protectedFromDeletion());
        }
        throw new IllegalArgumentException("unknown change " + change);
    }

    private static List<Object> binding(int kind, Binding b) {
        return List.of(kind, b.source(), b.destination().isExchange(), b.destination().name(), b.key(),
            arguments(b.arguments()));
    }

    /** Neutral values in their AMQP 1.0 form (bytes to binary, instants to timestamps). */
    @SuppressWarnings("unchecked")
    private static Map<String, Object> arguments(Map<String, Object> arguments) {
        return (Map<String, Object>) HeaderValues.toAmqp10(arguments);
    }

    private static DefinitionChange fromList(List<?> f) {
        int kind = ((Number) f.get(0)).intValue();
        return switch (kind) {
            case 1 -> new QueueDeclared(string(f, 1), number(f, 2), bool(f, 3), map(f, 4),
                f.size() > 5 ? number(f, 5) : 0);
            case 2 -> new QueueDeleted(string(f, 1));
            case 3 -> new ExchangeDeclared(new Exchange(string(f, 1), Exchange.Type.of(string(f, 2)), true,
                bool(f, 3), bool(f, 4), map(f, 5)));
            case 4 -> new ExchangeDeleted(string(f, 1));
            case 5 -> new BindingAdded(binding(f));
            case 6 -> new BindingRemoved(binding(f));
            case 7 -> new NextQueueId(number(f, 1));
            case 8 -> new QueueHomed(string(f, 1), bool(f, 2), map(f, 3), string(f, 4), number(f, 5));
            case 16 -> new InVhost(string(f, 1), (VhostChange) fromList((List<?>) f.get(2)));
            case 17 -> new VhostAdded(f.size() > 4
                ? new VhostDefinition(string(f, 1), number(f, 2), number(f, 3), string(f, 4), strings(f, 5),
                    (String) f.get(6), f.size() > 7 && bool(f, 7)) // protection came in later: absent before
                : new VhostDefinition(string(f, 1), number(f, 2), number(f, 3)));
            case 18 -> new VhostDeleted(string(f, 1));
            case 19 -> new VhostLimitsSet(string(f, 1), number(f, 2), number(f, 3));
            case 20 -> new UserPut(new UserDefinition(string(f, 1), string(f, 2), string(f, 3), strings(f, 4),
                number(f, 5), number(f, 6)));
            case 21 -> new UserDeleted(string(f, 1));
            case 22 -> new PermissionSet(new PermissionDefinition(string(f, 1), string(f, 2), string(f, 3),
                string(f, 4), string(f, 5)));
            case 23 -> new PermissionCleared(string(f, 1), string(f, 2));
            case 24 -> new TopicPermissionSet(new TopicPermissionDefinition(string(f, 1), string(f, 2), string(f, 3),
                string(f, 4), string(f, 5)));
            case 25 -> new TopicPermissionCleared(string(f, 1), string(f, 2), string(f, 3));
            case 26, 28 -> new PolicySet(new Policy(string(f, 1), string(f, 2), ApplyTo.of(string(f, 3)),
                (Number) f.get(4), map(f, 5)), kind == 28);
            case 27, 29 -> new PolicyCleared(string(f, 1), kind == 29);
            case 30 -> new VhostMetadataSet(string(f, 1), string(f, 2), strings(f, 3), (String) f.get(4),
                f.size() > 5 && bool(f, 5));
            case 31 -> new GlobalParameterSet(new GlobalParameterDefinition(string(f, 1), string(f, 2)));
            case 32 -> new GlobalParameterCleared(string(f, 1));
            default -> throw new IllegalArgumentException("unknown definition change kind " + kind);
        };
    }

    private static Binding binding(List<?> f) {
        String destination = string(f, 3);
        return new Binding(string(f, 1), bool(f, 2) ? Destination.exchange(destination)
            : Destination.queue(destination), string(f, 4), map(f, 5));
    }

    private static String string(List<?> fields, int index) {
        return (String) fields.get(index);
    }

    private static List<String> strings(List<?> fields, int index) {
        List<String> strings = new ArrayList<>();
        for (Object s : (List<?>) fields.get(index)) {
            strings.add((String) s);
        }
        return strings;
    }

    private static long number(List<?> fields, int index) {
        return ((Number) fields.get(index)).longValue();
    }

    private static boolean bool(List<?> fields, int index) {
        return (Boolean) fields.get(index);
    }

    /** As stored: AMQP 1.0 values keep their exact types (a symbol stays a symbol), as arguments compare by them. */
    @SuppressWarnings("unchecked")
    private static Map<String, Object> map(List<?> fields, int index) {
        return HeaderValues.copyOf((Map<String, Object>) fields.get(index));
    }
}
