package io.skiffmq.server.authz;

import io.skiffmq.core.definitions.BrokerDefinitions;
import io.skiffmq.core.definitions.BrokerDefinitions.PermissionDefinition;
import io.skiffmq.core.definitions.BrokerDefinitions.TopicPermissionDefinition;
import io.skiffmq.core.definitions.BrokerDefinitions.UserDefinition;
import io.skiffmq.core.definitions.BrokerDefinitions.VhostDefinition;
import java.util.HashMap;
import java.util.Map;

/**
 * The {@link BrokerDefinitions} in force, compiled for checking: users, virtual hosts, and each user's
 * {@link Grant} per virtual host. A new one replaces the old on every change, with a higher {@link #version}, so a
 * connection's cached answers know when they are stale. Immutable.
 */
final class Policy {
    private final long version;
    private final BrokerDefinitions definitions;
    private final Map<String, UserDefinition> users = new HashMap<>();
    private final Map<String, VhostDefinition> vhosts = new HashMap<>();
    private final Map<String, Grant> grants = new HashMap<>();

    Policy(long version, BrokerDefinitions definitions) {
        this.version = version;
        this.definitions = definitions;
        definitions.users().forEach(u -> users.put(u.name(), u));
        definitions.vhosts().forEach(v -> vhosts.put(v.name(), v));
        Map<String, Map<String, Grant.TopicGrant>> topics = new HashMap<>();
        for (TopicPermissionDefinition t : definitions.topicPermissions()) {
            topics.computeIfAbsent(key(t.user(), t.vhost()), k -> new HashMap<>()).put(t.exchange(), Grant.topic(t));
        }
        for (PermissionDefinition p : definitions.permissions()) {
            String key = key(p.user(), p.vhost());
            grants.put(key, Grant.of(p, Map.copyOf(topics.getOrDefault(key, Map.of()))));
        }
    }

    private static String key(String user, String vhost) {
        return user + '\0' + vhost;
    }

    long version() {
        return version;
    }

    BrokerDefinitions definitions() {
        return definitions;
    }

    UserDefinition user(String name) {
        return users.get(name);
    }

    VhostDefinition vhost(String name) {
        return vhosts.get(name);
    }

    /** The user's permissions in the virtual host; null when it has none there (no access at all). */
    Grant grant(String user, String vhost) {
        return grants.get(key(user, vhost));
    }
}
