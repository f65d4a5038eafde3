package io.skiffmq.store.definitions;

import io.skiffmq.core.Exchange;
import io.skiffmq.core.definitions.BrokerDefinitions;
import io.skiffmq.core.definitions.DefinitionChange.QueueDeclared;
import io.skiffmq.core.routing.Binding;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.qpid.proton.codec.Data;

/**
 * The definitions files as the broker before the change log wrote them ({@code Definitions.toMap},
 * {@code BrokerDefinitions.write} and {@code EncodedMapFile.write} at main 25c4722, kept here as they were), to
 * test the migration with files made by that code path.
 */
public final class OldDefinitionsFormat {
    private OldDefinitionsFormat() {
    }

    public static void writeVhost(Path file, long nextQueueId, List<QueueDeclared> queues, List<Exchange> exchanges,
            List<Binding> bindings) throws IOException {
        List<Object> queueList = new ArrayList<>();
        for (QueueDeclared q : queues) {
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
        write(file, map("format", 1L, "next-queue-id", nextQueueId, "queues", queueList, "exchanges", exchangeList,
            "bindings", bindingList));
    }

    public static void writeBroker(Path file, BrokerDefinitions d) throws IOException {
        List<Object> vhostList = new ArrayList<>();
        for (BrokerDefinitions.VhostDefinition v : d.vhosts()) {
            vhostList.add(map("name", v.name(), "max-connections", v.maxConnections(), "max-queues", v.maxQueues()));
        }
        List<Object> userList = new ArrayList<>();
        for (BrokerDefinitions.UserDefinition u : d.users()) {
            userList.add(map("name", u.name(), "password-hash", u.passwordHash(), "hashing-algorithm",
                u.hashingAlgorithm(), "tags", new ArrayList<Object>(u.tags()), "max-connections", u.maxConnections(),
                "max-channels", u.maxChannels()));
        }
        List<Object> permissionList = new ArrayList<>();
        for (BrokerDefinitions.PermissionDefinition p : d.permissions()) {
            permissionList.add(map("user", p.user(), "vhost", p.vhost(), "configure", p.configure(),
                "write", p.write(), "read", p.read()));
        }
        List<Object> topicList = new ArrayList<>();
        for (BrokerDefinitions.TopicPermissionDefinition p : d.topicPermissions()) {
            topicList.add(map("user", p.user(), "vhost", p.vhost(), "exchange", p.exchange(), "write",
                p.write(), "read", p.read()));
        }
        write(file, map("format", 1L, "vhosts", vhostList, "users", userList, "permissions", permissionList,
            "topic-permissions", topicList));
    }

    private static void write(Path file, Map<String, Object> map) throws IOException {
        Data data = Data.Factory.create();
        data.putObject(map);
        org.apache.qpid.proton.amqp.Binary bytes = data.encode();
        Files.createDirectories(file.getParent());
        Files.write(file, java.util.Arrays.copyOfRange(bytes.getArray(), bytes.getArrayOffset(),
            bytes.getArrayOffset() + bytes.getLength()));
    }

    private static Map<String, Object> map(Object... keysAndValues) {
        Map<String, Object> map = new LinkedHashMap<>();
        for (int i = 0; i < keysAndValues.length; i += 2) {
            map.put((String) keysAndValues[i], keysAndValues[i + 1]);
        }
        return map;
    }
}
