package io.skiffmq.store;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * What the broker as a whole keeps across restarts, apart from each virtual host's own {@link Definitions}: the
 * virtual hosts with their limits, the users (password hash and hashing algorithm as opaque strings, tags, limits),
 * and each user's permissions and topic permissions per virtual host. Stored as one AMQP 1.0 encoded map in
 * {@code data-dir/definitions.amqp} and replaced whole on every change ({@link EncodedMapFile}). Immutable.
 *
 * <p>A limit of -1 means none, as in RabbitMQ.
 */
public record BrokerDefinitions(List<VhostDefinition> vhosts, List<UserDefinition> users,
        List<PermissionDefinition> permissions, List<TopicPermissionDefinition> topicPermissions) {
    /** Bumped when the map's layout changes. */
    static final long FORMAT = 1;
    public static final BrokerDefinitions EMPTY = new BrokerDefinitions(List.of(), List.of(), List.of(), List.of());

    public BrokerDefinitions {
        vhosts = List.copyOf(vhosts);
        users = List.copyOf(users);
        permissions = List.copyOf(permissions);
        topicPermissions = List.copyOf(topicPermissions);
    }

    /** A virtual host: its {@code max-connections} and {@code max-queues} limits. */
    public record VhostDefinition(String name, long maxConnections, long maxQueues) {
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

    /** Reads the file, or null when there is none (the broker's first start). */
    public static BrokerDefinitions read(Path file) {
        Map<?, ?> map = EncodedMapFile.read(file);
        try {
            return map == null ? null : fromMap(map);
        } catch (RuntimeException e) {
            throw new IllegalStateException("definitions file " + file + " is damaged: " + e, e);
        }
    }

    /** Replaces the file with these definitions, durably; call from one thread at a time. */
    public void write(Path file) {
        List<Object> vhostList = new ArrayList<>();
        for (VhostDefinition v : vhosts) {
            vhostList.add(Definitions.map("name", v.name(), "max-connections", v.maxConnections(), "max-queues",
                v.maxQueues()));
        }
        List<Object> userList = new ArrayList<>();
        for (UserDefinition u : users) {
            userList.add(Definitions.map("name", u.name(), "password-hash", u.passwordHash(), "hashing-algorithm",
                u.hashingAlgorithm(), "tags", new ArrayList<Object>(u.tags()), "max-connections", u.maxConnections(),
                "max-channels", u.maxChannels()));
        }
        List<Object> permissionList = new ArrayList<>();
        for (PermissionDefinition p : permissions) {
            permissionList.add(Definitions.map("user", p.user(), "vhost", p.vhost(), "configure", p.configure(),
                "write", p.write(), "read", p.read()));
        }
        List<Object> topicList = new ArrayList<>();
        for (TopicPermissionDefinition p : topicPermissions) {
            topicList.add(Definitions.map("user", p.user(), "vhost", p.vhost(), "exchange", p.exchange(), "write",
                p.write(), "read", p.read()));
        }
        EncodedMapFile.write(file, Definitions.map("format", FORMAT, "vhosts", vhostList, "users", userList,
            "permissions", permissionList, "topic-permissions", topicList));
    }

    @SuppressWarnings("unchecked")
    private static BrokerDefinitions fromMap(Map<?, ?> map) {
        Object format = map.get("format");
        if (!Long.valueOf(FORMAT).equals(format)) {
            throw new IllegalStateException("broker definitions format " + format + ", this broker reads " + FORMAT);
        }
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
    }
}
