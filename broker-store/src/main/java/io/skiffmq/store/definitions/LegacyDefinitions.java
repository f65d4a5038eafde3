package io.skiffmq.store.definitions;

import io.skiffmq.core.Exchange;
import io.skiffmq.core.definitions.BrokerDefinitions;
import io.skiffmq.core.definitions.BrokerDefinitions.PermissionDefinition;
import io.skiffmq.core.definitions.BrokerDefinitions.TopicPermissionDefinition;
import io.skiffmq.core.definitions.BrokerDefinitions.UserDefinition;
import io.skiffmq.core.definitions.BrokerDefinitions.VhostDefinition;
import io.skiffmq.core.definitions.DefinitionChange;
import io.skiffmq.core.definitions.DefinitionChange.BindingAdded;
import io.skiffmq.core.definitions.DefinitionChange.ExchangeDeclared;
import io.skiffmq.core.definitions.DefinitionChange.NextQueueId;
import io.skiffmq.core.definitions.DefinitionChange.QueueDeclared;
import io.skiffmq.core.routing.Binding;
import io.skiffmq.core.routing.Destination;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.qpid.proton.codec.Data;

/**
 * Reads the definitions files of brokers before the change log: {@code definitions.amqp}, one AMQP 1.0 encoded map
 * (format 1) rewritten whole on every change, in the data directory (the broker's) and in each virtual host's
 * directory (its exchanges, queues and bindings). Read once, on the first start of this version, as the changes
 * that build the same state; the change log's first snapshot is made of them and the old file is then deleted.
 * Stateless.
 */
public final class LegacyDefinitions {
    /** The old files' name, in the data directory and in each virtual host's. */
    public static final String FILE = "definitions.amqp";
    private static final long FORMAT = 1;

    private LegacyDefinitions() {
    }

    /** A virtual host's old file as changes; null when there is none. */
    @SuppressWarnings("unchecked")
    public static List<DefinitionChange> vhost(Path file) {
        Map<?, ?> map = read(file);
        if (map == null) {
            return null;
        }
        try {
            List<DefinitionChange> changes = new ArrayList<>();
            changes.add(new NextQueueId((Long) map.get("next-queue-id")));
            for (Object o : (List<Object>) map.get("exchanges")) {
                Map<String, Object> e = (Map<String, Object>) o;
                changes.add(new ExchangeDeclared(new Exchange((String) e.get("name"),
                    Exchange.Type.of((String) e.get("type")), true, (Boolean) e.get("auto-delete"),
                    (Boolean) e.get("internal"), arguments(e))));
            }
            for (Object o : (List<Object>) map.get("queues")) {
                Map<String, Object> q = (Map<String, Object>) o;
                // auto-delete is absent from files written before it existed, and false there
                changes.add(new QueueDeclared((String) q.get("name"), (Long) q.get("id"),
                    Boolean.TRUE.equals(q.get("auto-delete")), arguments(q)));
            }
            for (Object o : (List<Object>) map.get("bindings")) {
                Map<String, Object> b = (Map<String, Object>) o;
                String destination = (String) b.get("destination");
                changes.add(new BindingAdded(new Binding((String) b.get("source"),
                    "exchange".equals(b.get("destination-type")) ? Destination.exchange(destination)
                        : Destination.queue(destination), (String) b.get("key"), arguments(b))));
            }
            return changes;
        } catch (RuntimeException e) {
            throw new IllegalStateException("definitions file " + file + " is damaged: " + e, e);
        }
    }

    /** The broker's old file; null when there is none. */
    @SuppressWarnings("unchecked")
    public static BrokerDefinitions broker(Path file) {
        Map<?, ?> map = read(file);
        if (map == null) {
            return null;
        }
        try {
            List<VhostDefinition> vhosts = new ArrayList<>();
            for (Object o : (List<Object>) map.get("vhosts")) {
                Map<String, Object> v = (Map<String, Object>) o;
                vhosts.add(new VhostDefinition((String) v.get("name"), (Long) v.get("max-connections"),
                    (Long) v.get("max-queues")));
            }
            List<UserDefinition> users = new ArrayList<>();
            for (Object o : (List<Object>) map.get("users")) {
                Map<String, Object> u = (Map<String, Object>) o;
                List<String> tags = new ArrayList<>();
                for (Object tag : (List<Object>) u.get("tags")) {
                    tags.add((String) tag);
                }
                users.add(new UserDefinition((String) u.get("name"), (String) u.get("password-hash"),
                    (String) u.get("hashing-algorithm"), tags, (Long) u.get("max-connections"),
                    (Long) u.get("max-channels")));
            }
            List<PermissionDefinition> permissions = new ArrayList<>();
            for (Object o : (List<Object>) map.get("permissions")) {
                Map<String, Object> p = (Map<String, Object>) o;
                permissions.add(new PermissionDefinition((String) p.get("user"), (String) p.get("vhost"),
                    (String) p.get("configure"), (String) p.get("write"), (String) p.get("read")));
            }
            List<TopicPermissionDefinition> topics = new ArrayList<>();
            for (Object o : (List<Object>) map.get("topic-permissions")) {
                Map<String, Object> p = (Map<String, Object>) o;
                topics.add(new TopicPermissionDefinition((String) p.get("user"), (String) p.get("vhost"),
                    (String) p.get("exchange"), (String) p.get("write"), (String) p.get("read")));
            }
            return new BrokerDefinitions(vhosts, users, permissions, topics);
        } catch (RuntimeException e) {
            throw new IllegalStateException("definitions file " + file + " is damaged: " + e, e);
        }
    }

    /** The map in {@code file}, checked to be of format 1; null when there is no such file. */
    private static Map<?, ?> read(Path file) {
        if (!Files.exists(file)) {
            return null;
        }
        Map<?, ?> map;
        try {
            Data data = Data.Factory.create();
            data.decode(ByteBuffer.wrap(Files.readAllBytes(file)));
            map = (Map<?, ?>) data.getObject();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + file, e);
        } catch (RuntimeException e) {
            throw new IllegalStateException(file + " is damaged: " + e, e);
        }
        if (!Long.valueOf(FORMAT).equals(map.get("format"))) {
            throw new IllegalStateException("definitions format " + map.get("format") + " in " + file
                + ", this broker reads " + FORMAT);
        }
        return map;
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> arguments(Map<String, Object> definition) {
        Object arguments = definition.get("arguments");
        return arguments == null ? Map.of() : (Map<String, Object>) arguments;
    }

    /** Deletes the old file once its definitions are durable in the new form. */
    public static void delete(Path file) {
        try {
            if (Files.deleteIfExists(file)) {
                System.getLogger(LegacyDefinitions.class.getName()).log(System.Logger.Level.INFO,
                    "{0} migrated to the definitions snapshot and change log beside it, and deleted", file);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot delete " + file, e);
        }
    }
}
