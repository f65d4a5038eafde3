package io.skiffmq.core.queue;

import io.skiffmq.core.BrokerException;
import io.skiffmq.core.BrokerException.Kind;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * The queue types, as RabbitMQ names them ({@code x-queue-type}) and what each accepts: the registry a declaration
 * is checked against ({@link #check}) and the store makes queues by ({@code VirtualHostStore.createQueue}). The
 * argument lists are RabbitMQ's {@code capabilities()} of {@code rabbit_classic_queue}, {@code rabbit_quorum_queue}
 * and {@code rabbit_stream_queue}: an argument one type lists and another does not is refused for the other, in
 * RabbitMQ's words ({@code … of queue type rabbit_stream_queue}). Immutable.
 */
public enum QueueType {
    CLASSIC("classic", "rabbit_classic_queue", true,
        List.of("x-expires", "x-message-ttl", "x-dead-letter-exchange", "x-dead-letter-routing-key", "x-max-length",
            "x-max-length-bytes", "x-max-priority", "x-overflow", "x-queue-mode", "x-queue-version",
            "x-single-active-consumer", "x-queue-type", "x-queue-master-locator", "x-queue-leader-locator"),
        List.of("x-priority")),
    QUORUM("quorum", "rabbit_quorum_queue", false,
        List.of("x-dead-letter-exchange", "x-dead-letter-routing-key", "x-dead-letter-strategy", "x-expires",
            "x-max-length", "x-max-length-bytes", "x-max-in-memory-length", "x-max-in-memory-bytes", "x-overflow",
            "x-single-active-consumer", "x-queue-type", "x-quorum-initial-group-size", "x-member-placement-tag",
            "x-delivery-limit", "x-message-ttl", "x-queue-leader-locator", "x-consumer-disconnected-timeout",
            "x-consumer-timeout", "x-delayed-retry-type", "x-delayed-retry-min", "x-delayed-retry-max"),
        List.of("x-priority", "x-consumer-timeout")),
    STREAM("stream", "rabbit_stream_queue", false,
        List.of("x-max-length-bytes", "x-queue-type", "x-max-age", "x-stream-max-segment-size-bytes",
            "x-stream-filter-size-bytes", "x-initial-cluster-size", "x-queue-leader-locator"),
        List.of("x-stream-offset", "x-stream-filter", "x-stream-match-unfiltered"));

    private final String alias;
    private final String module;
    private final boolean serverNamed;
    private final List<String> queueArguments;
    private final List<String> consumerArguments;

    QueueType(String alias, String module, boolean serverNamed, List<String> queueArguments,
            List<String> consumerArguments) {
        this.alias = alias;
        this.module = module;
        this.serverNamed = serverNamed;
        this.queueArguments = queueArguments;
        this.consumerArguments = consumerArguments;
    }

    /** The name {@code x-queue-type} gives and the HTTP API shows: {@code classic}, {@code stream}. */
    public String alias() {
        return alias;
    }

    /** RabbitMQ's module name, which its refusals print. */
    public String module() {
        return module;
    }

    /** Whether the server may name a queue of this type (0-9-1 declare with an empty name). */
    public boolean serverNamed() {
        return serverNamed;
    }

    /** The type of this alias ({@code classic}, {@code quorum}, {@code stream}), or null for none of them. */
    public static QueueType ofAlias(String alias) {
        for (QueueType t : values()) {
            if (t.alias.equals(alias)) {
                return t;
            }
        }
        return null;
    }

    /** The type {@code x-queue-type} names; classic without one. Does not check the value: {@link #check} does. */
    public static QueueType of(Map<String, Object> arguments) {
        Object type = arguments.get("x-queue-type");
        if (type != null) {
            String name = type.toString();
            for (QueueType t : values()) {
                if (t.alias.equals(name)) {
                    return t;
                }
            }
        }
        return CLASSIC;
    }

    /**
     * Checks a declaration as a new queue of this type, as RabbitMQ checks one ({@code rabbit_amqqueue:declare}):
     * the arguments' values, the arguments only other types take, then what the type itself refuses.
     *
     * @throws BrokerException PRECONDITION_FAILED for an argument refused, INVALID for a property the type refuses
     *         (RabbitMQ's {@code protocol_error}s of the type's declare: 406 over 0-9-1, 400 from
     *         {@code /management})
     */
    public void check(String vhost, QueueDeclaration declaration) {
        switch (this) {
            case CLASSIC -> QueueArguments.of(vhost, declaration.name(), declaration.arguments());
            case STREAM -> StreamArguments.check(vhost, declaration);
            case QUORUM -> QuorumArguments.check(vhost, declaration);
        }
    }

    /**
     * Refuses an auto-delete, exclusive or non-durable queue, in that order and in RabbitMQ's words
     * ({@code rabbit_queue_type_util}'s checks, which its quorum and stream queues run at declare).
     *
     * @throws BrokerException INVALID
     */
    static void refuseAllButDurable(String vhost, QueueDeclaration declaration) {
        String queue = "queue '" + declaration.name() + "' in vhost '" + vhost + "'";
        if (declaration.autoDelete()) {
            throw new BrokerException(Kind.INVALID, "invalid property 'auto-delete' for " + queue);
        }
        if (declaration.exclusive()) {
            throw new BrokerException(Kind.INVALID, "invalid property 'exclusive-owner' for " + queue);
        }
        if (!declaration.durable()) {
            throw new BrokerException(Kind.INVALID, "invalid property 'non-durable' for " + queue);
        }
    }

    /**
     * The first of {@code arguments} (in their order) that another type takes and this one does not, or null
     * ({@code rabbit_amqqueue:check_arguments_key/4}).
     */
    String otherTypesArgument(Map<String, Object> arguments, boolean consumer) {
        for (String key : arguments.keySet()) {
            if (OTHERS.get(this, consumer).contains(key)) {
                return key;
            }
        }
        return null;
    }

    /**
     * Refuses a consumer argument that another queue type takes and this one does not, as RabbitMQ does
     * ({@code rabbit_amqqueue:check_consume_arguments/3}).
     *
     * @throws BrokerException PRECONDITION_FAILED
     */
    public void checkConsumerArguments(String vhost, String queue, Map<String, Object> arguments) {
        String key = otherTypesArgument(arguments, true);
        if (key != null) {
            throw new BrokerException(Kind.PRECONDITION_FAILED, "invalid arg '" + key + "' for queue '" + queue
                + "' in vhost '" + vhost + "' of queue type " + module);
        }
    }

    /** For each type, the arguments of the others it does not take. */
    private static final class OTHERS {
        private static final Map<QueueType, Set<String>> QUEUE = others(false);
        private static final Map<QueueType, Set<String>> CONSUMER = others(true);

        static Set<String> get(QueueType type, boolean consumer) {
            return (consumer ? CONSUMER : QUEUE).get(type);
        }

        private static Map<QueueType, Set<String>> others(boolean consumer) {
            Map<QueueType, Set<String>> others = new java.util.EnumMap<>(QueueType.class);
            for (QueueType type : values()) {
                Set<String> all = new TreeSet<>();
                for (QueueType other : values()) {
                    all.addAll(consumer ? other.consumerArguments : other.queueArguments);
                }
                all.removeAll(consumer ? type.consumerArguments : type.queueArguments);
                others.put(type, Set.copyOf(all));
            }
            return others;
        }
    }
}
