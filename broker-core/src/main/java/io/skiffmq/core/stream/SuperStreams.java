package io.skiffmq.core.stream;

import io.skiffmq.core.BrokerException;
import io.skiffmq.core.Exchange;
import io.skiffmq.core.VirtualHost;
import io.skiffmq.core.definitions.DefinitionChange.QueueHomed;
import io.skiffmq.core.queue.Queue;
import io.skiffmq.core.queue.QueueType;
import io.skiffmq.core.routing.Binding;
import io.skiffmq.core.routing.Destination;
import io.skiffmq.core.routing.Router;
import io.skiffmq.core.stream.SuperStreamException.Reason;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Super streams as RabbitMQ models them ({@code rabbit_stream_manager}): a durable direct exchange with the argument
 * {@code x-super-stream = true}, bound to each of its partition streams with a binding key and the binding argument
 * {@code x-stream-partition-order} (0, 1, …). Nothing else is kept: the partitions and routes are read from the
 * exchange's bindings, so a super stream declared by hand over 0-9-1 or the HTTP API is one too. In a cluster all
 * three are shared definitions (a durable exchange, durable streams homed on the declaring node, the bindings between
 * them): a partition homed on another node counts by its record here.
 *
 * <p>{@link #create} and {@link #delete} wait for the store (declaring streams opens their logs): call them off the
 * event loops (a management thread). {@link #partitions} and {@link #route} read the current bindings from any
 * thread. Stateless.
 */
public final class SuperStreams {
    /** The exchange argument that marks a super stream. */
    public static final String SUPER_STREAM_ARGUMENT = "x-super-stream";
    /** The binding argument that orders the partitions. */
    public static final String PARTITION_ORDER = "x-stream-partition-order";
    /** RabbitMQ's default {@code max_super_stream_partitions}. */
    public static final int DEFAULT_MAX_PARTITIONS = 1000;

    private SuperStreams() {
    }

    /**
     * The partition streams of a super stream: the streams its exchange is bound to, ordered by the bindings'
     * {@value #PARTITION_ORDER} (an integer, or a string of one; bindings without it last, in binding order), as
     * {@code rabbit_stream_utils:sort_partitions/1} orders them. A stream bound twice is listed twice.
     *
     * @throws SuperStreamException STREAM_NOT_FOUND when there is no such exchange
     */
    public static List<String> partitions(VirtualHost vhost, String superStream) {
        if (vhost.exchange(superStream) == null) {
            throw notFound(superStream);
        }
        List<Binding> bindings = new ArrayList<>();
        for (Binding binding : vhost.bindings().bindingsFrom(superStream)) {
            if (isStream(vhost, binding.destination())) {
                bindings.add(binding);
            }
        }
        bindings.sort(Comparator.comparingLong(SuperStreams::order)); // stable: equal orders keep binding order
        List<String> partitions = new ArrayList<>(bindings.size());
        for (Binding binding : bindings) {
            partitions.add(binding.destination().name());
        }
        return partitions;
    }

    /**
     * The streams a message with {@code routingKey} goes to through the super stream's exchange (its routing, so
     * exchange-to-exchange bindings too), as {@code rabbit_stream_manager:route/3} answers: empty for no route.
     *
     * @throws SuperStreamException STREAM_NOT_FOUND when there is no such exchange
     */
    public static List<String> route(VirtualHost vhost, String superStream, String routingKey) {
        Exchange exchange = vhost.exchange(superStream);
        if (exchange == null) {
            throw notFound(superStream);
        }
        List<String> streams = new ArrayList<>();
        for (Queue queue : vhost.route(exchange, routingKey, Map::of, new Router(), new ArrayList<>())) {
            if (queue.type() == QueueType.STREAM) {
                streams.add(queue.name());
            }
        }
        if (exchange.type() == Exchange.Type.DIRECT) {
            // a partition homed on another node is not routed to from here (streams are read on their own node):
            // its direct binding names it
            for (Binding binding : vhost.bindings().bindingsFrom(superStream)) {
                String name = binding.destination().name();
                if (binding.key().equals(routingKey) && vhost.queue(name) == null
                        && isStream(vhost, binding.destination()) && !streams.contains(name)) {
                    streams.add(name);
                }
            }
        }
        return streams;
    }

    /**
     * Declares a super stream as {@code rabbit_stream_manager:create_super_stream/6} does: checks, then the exchange,
     * the partition streams (durable, with {@code queueArguments} and {@code x-queue-leader-locator} balanced unless
     * given) and the bindings, {@code partitions.get(i)} with {@code bindingKeys.get(i)} and order {@code i}. On a
     * failure what was made is deleted again.
     *
     * @param queueArguments the streams' {@code x-} arguments (see {@link #queueArguments})
     * @param maxPartitions the most partitions a super stream may have
     * @throws SuperStreamException VALIDATION_FAILED for names, counts or arguments RabbitMQ refuses,
     *         REFERENCE_ALREADY_EXISTS when the exchange or one of the streams exists
     */
    public static void create(VirtualHost vhost, String name, List<String> partitions, List<String> bindingKeys,
            Map<String, Object> queueArguments, int maxPartitions) {
        check(vhost, name, partitions, bindingKeys, maxPartitions);
        Map<String, Object> arguments = new LinkedHashMap<>();
        arguments.put("x-queue-type", "stream");
        arguments.putAll(queueArguments);
        arguments.putIfAbsent("x-queue-leader-locator", "balanced");
        List<String> made = new ArrayList<>();
        boolean exchangeMade = false;
        try {
            vhost.declareExchange(new Exchange(name, Exchange.Type.DIRECT, true, false, false,
                Map.of(SUPER_STREAM_ARGUMENT, true)));
            exchangeMade = true;
            for (String partition : partitions) {
                vhost.declareQueue(partition, true, arguments);
                made.add(partition);
            }
            for (int i = 0; i < partitions.size(); i++) {
                vhost.bind(new Binding(name, Destination.queue(partitions.get(i)), bindingKeys.get(i),
                    Map.of(PARTITION_ORDER, (long) i)));
            }
        } catch (BrokerException e) {
            for (String partition : made) {
                vhost.deleteQueue(partition);
            }
            if (exchangeMade) {
                vhost.deleteExchange(name);
            }
            throw new SuperStreamException(Reason.VALIDATION_FAILED, e.getMessage());
        }
    }

    private static void check(VirtualHost vhost, String name, List<String> partitions, List<String> bindingKeys,
            int maxPartitions) {
        if (partitions.size() != bindingKeys.size()) {
            throw invalid("There must be the same number of partitions and binding keys");
        }
        if (partitions.isEmpty()) {
            throw invalid("The partition number must be greater than 0");
        }
        if (new HashSet<>(partitions).size() != partitions.size()) {
            throw invalid("Duplicate partition names found " + String.join(",", partitions));
        }
        for (String partition : partitions) {
            if (correctName(partition) == null) {
                throw invalid(partition + " is not a correct partition names");
            }
        }
        if (partitions.size() > maxPartitions) {
            throw invalid("The partition number must not exceed " + maxPartitions);
        }
        long queueLimit = vhost.queueLimitPassedBy(partitions.size());
        if (queueLimit >= 0) {
            // RabbitMQ formats the names with ~tp: Erlang binaries
            throw invalid("Cannot declare super stream <<\"" + name + "\">> with " + partitions.size()
                + " partition(s) because queue limit " + queueLimit + " in vhost '<<\"" + vhost.name()
                + "\">>' is reached");
        }
        if (correctName(name) == null) {
            throw invalid(name + " is not a correct name for a super stream");
        }
        if (vhost.exchange(name) != null) {
            throw new SuperStreamException(Reason.REFERENCE_ALREADY_EXISTS, "there is already an exchange named "
                + name);
        }
        for (String partition : partitions) {
            if (vhost.queue(partition) != null || vhost.remoteQueue(partition) != null) {
                throw new SuperStreamException(Reason.REFERENCE_ALREADY_EXISTS, "there is already a queue named "
                    + partition);
            }
        }
    }

    /**
     * A stream or super stream name as RabbitMQ takes it ({@code rabbit_stream_utils:enforce_correct_name/1}): line
     * breaks dropped; null when what is left is empty or starts with {@code amq.}.
     */
    public static String correctName(String name) {
        String stripped = name.replace("\n", "").replace("\r", "");
        return stripped.isEmpty() || stripped.startsWith("amq.") ? null : stripped;
    }

    /**
     * Deletes a super stream as {@code rabbit_stream_manager:delete_super_stream/3} does: its exchange, then each
     * partition stream (one already gone is passed over).
     *
     * @throws SuperStreamException STREAM_NOT_FOUND when there is no such exchange
     */
    public static void delete(VirtualHost vhost, String name) {
        delete(vhost, name, partitions(vhost, name));
    }

    /**
     * As {@link #delete(VirtualHost, String)}, with the partitions the caller read (and checked permissions on):
     * a binding added since is not followed ({@code rabbit_stream_manager:delete_super_stream/4}).
     */
    public static void delete(VirtualHost vhost, String name, List<String> partitions) {
        if (vhost.exchange(name) != null) {
            vhost.deleteExchange(name);
        }
        for (String partition : partitions) {
            if (isStream(vhost, Destination.queue(partition))) {
                vhost.deleteQueue(partition); // one homed on another node goes there, once committed
            }
        }
    }

    /**
     * The index of {@code stream} among the partitions of {@code superStream}, as
     * {@code rabbit_stream_manager:partition_index/3} answers it: its binding's {@value #PARTITION_ORDER}, else the
     * number after its name's last {@code -}, else -1; -1 too when it is no partition of it.
     */
    public static int partitionIndex(VirtualHost vhost, String superStream, String stream) {
        if (vhost.exchange(superStream) == null) {
            return -1;
        }
        Binding first = null;
        for (Binding binding : vhost.bindings().bindingsFrom(superStream)) {
            if (binding.destination().name().equals(stream) && isStream(vhost, binding.destination())
                    && (first == null || order(binding) < order(first))) {
                first = binding;
            }
        }
        if (first == null) {
            return -1;
        }
        long order = order(first);
        if (order != Long.MAX_VALUE) {
            return (int) order;
        }
        int dash = stream.lastIndexOf('-');
        try {
            return dash < 0 ? -1 : Integer.parseInt(stream.substring(dash + 1));
        } catch (NumberFormatException e) {
            return -1;
        }
    }

    /** {@code name-0} … {@code name-(n-1)}: the partitions {@code --partitions n} makes. */
    public static List<String> partitionNames(String name, int partitions) {
        List<String> names = new ArrayList<>(partitions);
        for (int i = 0; i < partitions; i++) {
            names.add(name + "-" + i);
        }
        return names;
    }

    /** {@code 0} … {@code n-1}: their binding keys. */
    public static List<String> routingKeys(int partitions) {
        List<String> keys = new ArrayList<>(partitions);
        for (int i = 0; i < partitions; i++) {
            keys.add(Integer.toString(i));
        }
        return keys;
    }

    /** {@code name-key} for each binding key: the partitions {@code --binding-keys} makes. */
    public static List<String> partitionNames(String name, List<String> bindingKeys) {
        List<String> names = new ArrayList<>(bindingKeys.size());
        for (String key : bindingKeys) {
            names.add(name + "-" + key);
        }
        return names;
    }

    /**
     * The stream protocol's (and the HTTP API's super stream) arguments as a stream's {@code x-} arguments, as
     * {@code rabbit_stream_manager:stream_queue_arguments/2} maps them: {@code max-length-bytes},
     * {@code stream-max-segment-size-bytes}, {@code initial-cluster-size} and {@code stream-filter-size-bytes} as
     * integers, {@code max-age} and {@code queue-leader-locator} as strings; others are ignored.
     *
     * @throws SuperStreamException VALIDATION_FAILED for an integer that is none
     */
    public static Map<String, Object> queueArguments(Map<String, ?> arguments) {
        Map<String, Object> converted = new LinkedHashMap<>();
        for (Map.Entry<String, ?> e : arguments.entrySet()) {
            String key = e.getKey();
            switch (key) {
                case "max-length-bytes", "stream-max-segment-size-bytes", "initial-cluster-size",
                        "stream-filter-size-bytes" -> converted.put("x-" + key, integer(key, e.getValue()));
                case "max-age", "queue-leader-locator" -> converted.put("x-" + key, String.valueOf(e.getValue()));
                default -> {
                    // not a stream argument: ignored, as RabbitMQ ignores it
                }
            }
        }
        return converted;
    }

    private static long integer(String key, Object value) {
        if (value instanceof Number n && !(value instanceof Double || value instanceof Float)) {
            return n.longValue();
        }
        try {
            return Long.parseLong(String.valueOf(value).strip());
        } catch (NumberFormatException e) {
            throw invalid("Invalid value for " + key + ": " + value);
        }
    }

    private static boolean isStream(VirtualHost vhost, Destination destination) {
        if (destination.isExchange()) {
            return false;
        }
        Queue queue = vhost.queue(destination.name());
        if (queue != null) {
            return queue.type() == QueueType.STREAM;
        }
        // in a cluster, a partition homed on another node is known here by its record
        QueueHomed remote = vhost.remoteQueue(destination.name());
        return remote != null && QueueType.of(remote.arguments()) == QueueType.STREAM;
    }

    /** The binding's partition order; without one (or one that is no integer), after every other. */
    private static long order(Binding binding) {
        Object order = binding.arguments().get(PARTITION_ORDER);
        if (order instanceof Number n) {
            return n.longValue();
        }
        if (order != null) {
            try {
                return Long.parseLong(order.toString().strip());
            } catch (NumberFormatException e) {
                return Long.MAX_VALUE;
            }
        }
        return Long.MAX_VALUE;
    }

    private static SuperStreamException notFound(String superStream) {
        return new SuperStreamException(Reason.STREAM_NOT_FOUND, "super stream " + superStream + " does not exist");
    }

    private static SuperStreamException invalid(String message) {
        return new SuperStreamException(Reason.VALIDATION_FAILED, message);
    }
}
