package io.skiffmq.store;

import io.skiffmq.core.Exchange;
import io.skiffmq.core.routing.Binding;
import io.skiffmq.core.routing.Destination;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A virtual host's durable definitions: exchanges, queues (with the id their journal records carry) and bindings,
 * each with its arguments. Stored as one AMQP 1.0 encoded map, so arguments keep their exact AMQP types, and
 * replaced whole on every change: written to a temporary file, synced, renamed over the old one and the directory
 * synced, so a crash leaves either the old definitions or the new ones.
 *
 * @param nextQueueId the id the next durable queue gets; ids are never reused, so records of a deleted queue
 *        cannot attach to a new one of the same name
 */
public record Definitions(long nextQueueId, List<QueueDefinition> queues, List<Exchange> exchanges,
        List<Binding> bindings) {
    /** Bumped when the map's layout changes. */
    static final long FORMAT = 1;
    static final Definitions EMPTY = new Definitions(1, List.of(), List.of(), List.of());

    /** A durable queue; {@code autoDelete} is absent from files written before it existed, and false there. */
    public record QueueDefinition(String name, long id, boolean autoDelete, Map<String, Object> arguments) {
    }

    /** Reads the file, or {@link #EMPTY} when there is none. */
    static Definitions read(Path file) {
        Map<?, ?> map = EncodedMapFile.read(file);
        try {
            return map == null ? EMPTY : fromMap(map);
        } catch (RuntimeException e) {
            throw new IllegalStateException("definitions file " + file + " is damaged: " + e, e);
        }
    }

    /** Replaces the file with these definitions, durably (see the class comment). */
    void write(Path file) {
        EncodedMapFile.write(file, toMap());
    }

    private Map<String, Object> toMap() {
        List<Object> queueList = new ArrayList<>();
        for (QueueDefinition q : queues) {
            queueList.add(map("name", q.name(), "id", q.id(), "auto-delete", q.autoDelete(), "arguments", q.arguments()));
        }
        List<Object> exchangeList = new ArrayList<>();
        for (Exchange e : exchanges) {
            exchangeList.add(map("name", e.name(), "type", e.type().value(),
                "auto-delete", e.autoDelete(), "internal", e.internal(), "arguments", e.arguments()));
        }
        List<Object> bindingList = new ArrayList<>();
        for (Binding b : bindings) {
            bindingList.add(map("source", b.source(), "destination", b.destination().name(), "destination-type",
                b.destination().isExchange() ? "exchange" : "queue", "key", b.key(), "arguments", b.arguments()));
        }
        return map("format", FORMAT, "next-queue-id", nextQueueId, "queues", queueList, "exchanges", exchangeList,
            "bindings", bindingList);
    }

    @SuppressWarnings("unchecked")
    private static Definitions fromMap(Map<?, ?> map) {
        Object format = map.get("format");
        if (!Long.valueOf(FORMAT).equals(format)) {
            throw new IllegalStateException("definitions format " + format + ", this broker reads " + FORMAT);
        }
        List<QueueDefinition> queues = new ArrayList<>();
        for (Object o : (List<Object>) map.get("queues")) {
            Map<String, Object> q = (Map<String, Object>) o;
            queues.add(new QueueDefinition((String) q.get("name"), (Long) q.get("id"),
                Boolean.TRUE.equals(q.get("auto-delete")), arguments(q)));
        }
        List<Exchange> exchanges = new ArrayList<>();
        for (Object o : (List<Object>) map.get("exchanges")) {
            Map<String, Object> e = (Map<String, Object>) o;
            exchanges.add(new Exchange((String) e.get("name"), Exchange.Type.of((String) e.get("type")), true,
                (Boolean) e.get("auto-delete"), (Boolean) e.get("internal"), arguments(e)));
        }
        List<Binding> bindings = new ArrayList<>();
        for (Object o : (List<Object>) map.get("bindings")) {
            Map<String, Object> b = (Map<String, Object>) o;
            String destination = (String) b.get("destination");
            bindings.add(new Binding((String) b.get("source"), "exchange".equals(b.get("destination-type"))
                ? Destination.exchange(destination) : Destination.queue(destination), (String) b.get("key"),
                arguments(b)));
        }
        return new Definitions((Long) map.get("next-queue-id"), queues, exchanges, bindings);
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> arguments(Map<String, Object> definition) {
        Object arguments = definition.get("arguments");
        return arguments == null ? Map.of() : (Map<String, Object>) arguments;
    }

    static Map<String, Object> map(Object... keysAndValues) {
        Map<String, Object> map = new LinkedHashMap<>();
        for (int i = 0; i < keysAndValues.length; i += 2) {
            map.put((String) keysAndValues[i], keysAndValues[i + 1]);
        }
        return map;
    }
}
