package io.skiffmq.server.authz;

import java.util.HashMap;
import java.util.Map;

/**
 * One connection's permission checks, for its user in its virtual host, with RabbitMQ's semantics
 * (https://www.rabbitmq.com/docs/access-control): the default exchange is checked under the name
 * {@code amq.default}; a check is a search of the user's regular expression in the resource's name. Answers are
 * cached per resource and dropped when the {@link AccessControl}'s definitions change, so a check on the hot path
 * (a publish to the exchange of the previous one) is a version read and a string comparison, and a change made
 * by an administrator applies to the next operation of every open connection.
 *
 * <p>Refusals are RabbitMQ's texts ({@code "write access to exchange 'x' in vhost '/' refused for user 'u'"});
 * the protocol adapter turns them into its error (403 ACCESS_REFUSED, {@code amqp:unauthorized-access}).
 *
 * <p>Owned by the connection's thread (its event loop, or a management thread for one request); {@link #user} and
 * {@link #vhost} are final and may be read from any thread (the administration API finds connections by them).
 */
public final class Access {
    /** The name the default exchange has in permission checks. */
    public static final String DEFAULT_EXCHANGE = "amq.default";
    /** The user tag that lets a user publish messages under any user-id (RabbitMQ's). */
    public static final String IMPERSONATOR = "impersonator";
    private static final int CACHE_LIMIT = 1024;

    /** A kind of resource. */
    public enum Resource {
        QUEUE("queue"), EXCHANGE("exchange");

        private final String label;

        Resource(String label) {
            this.label = label;
        }
    }

    private final AccessControl control;
    private final String user;
    private final String vhost;
    /** The user had the {@code impersonator} tag when this was made (at login, as RabbitMQ reads tags then). */
    private final boolean impersonator;
    private long version = -1;
    private Grant grant;
    /** Per permission and resource kind: name → allowed. */
    @SuppressWarnings("unchecked")
    private final Map<String, Boolean>[] answers = new Map[Permission.values().length * Resource.values().length];
    /** Per topic exchange: routing key → allowed, for write and read. */
    private final Map<String, Map<String, Boolean>> topicWrites = new HashMap<>();
    private final Map<String, Map<String, Boolean>> topicReads = new HashMap<>();
    private String lastWrite;

    Access(AccessControl control, String user, String vhost) {
        this.control = control;
        this.user = user;
        this.vhost = vhost;
        io.skiffmq.core.definitions.BrokerDefinitions.UserDefinition definition = control.user(user);
        this.impersonator = control.unrestricted(user)
            || definition != null && definition.tags().contains(IMPERSONATOR);
    }

    public String user() {
        return user;
    }

    public String vhost() {
        return vhost;
    }

    /** Null when the user holds {@code permission} on the resource; RabbitMQ's refusal text otherwise. */
    public String refusal(Permission permission, Resource resource, String name) {
        String checked = resource == Resource.EXCHANGE && name.isEmpty() ? DEFAULT_EXCHANGE : name;
        Policy policy = current();
        if (permission == Permission.WRITE && resource == Resource.EXCHANGE && checked.equals(lastWrite)) {
            return null;
        }
        int slot = permission.ordinal() * Resource.values().length + resource.ordinal();
        Map<String, Boolean> cache = answers[slot];
        if (cache == null) {
            cache = answers[slot] = new HashMap<>();
        }
        Boolean allowed = cache.get(checked);
        if (allowed == null) {
            allowed = control.unrestricted(user) || grant != null && grant.allows(permission, checked);
            if (cache.size() >= CACHE_LIMIT) {
                cache.clear();
            }
            cache.put(checked, allowed);
        }
        if (allowed) {
            if (permission == Permission.WRITE && resource == Resource.EXCHANGE) {
                lastWrite = checked;
            }
            return null;
        }
        return permission.label() + " access to " + resource.label + " '" + checked + "' in vhost '" + vhost
            + "' refused for user '" + user + "'";
    }

    /**
     * Null when the user's topic permissions for {@code exchange} let it write (publish) or read (bind) with
     * {@code routingKey}, or when it has none for that exchange (RabbitMQ: no topic permission, no restriction);
     * RabbitMQ's refusal text otherwise. Answers are cached per routing key (up to 1024 per exchange).
     */
    public String topicRefusal(Permission permission, String exchange, String routingKey) {
        current();
        if (grant == null || grant.topics().isEmpty()) {
            return null;
        }
        Grant.TopicGrant topic = grant.topics().get(exchange);
        if (topic == null) {
            return null;
        }
        Map<String, Boolean> cache = (permission == Permission.WRITE ? topicWrites : topicReads)
            .computeIfAbsent(exchange, e -> new HashMap<>());
        Boolean allowed = cache.get(routingKey);
        if (allowed == null) {
            allowed = topic.allows(permission, routingKey);
            if (cache.size() >= CACHE_LIMIT) {
                cache.clear();
            }
            cache.put(routingKey, allowed);
        }
        return allowed ? null : permission.label() + " access to topic '" + routingKey + "' in exchange '"
            + exchange + "' in vhost '" + vhost + "' refused for user '" + user + "'";
    }

    /**
     * RabbitMQ's {@code check_user_id}: null when a message may carry {@code claimed} as its user-id (it is the
     * user's name, or the user is an {@code impersonator}); RabbitMQ's refusal text otherwise.
     */
    public String userIdRefusal(String claimed) {
        if (claimed.equals(user) || impersonator) {
            return null;
        }
        return "user_id property set to '" + claimed + "' but authenticated user was '" + user + "'";
    }

    /** True when the user has topic permissions in this virtual host: only then must publishes be checked per key. */
    public boolean hasTopicPermissions() {
        current();
        return grant != null && !grant.topics().isEmpty();
    }

    /** The policy in force; drops the cached answers when it changed since the last check. */
    private Policy current() {
        Policy policy = control.policy();
        if (policy.version() != version) {
            version = policy.version();
            grant = policy.grant(user, vhost);
            java.util.Arrays.fill(answers, null);
            topicWrites.clear();
            topicReads.clear();
            lastWrite = null;
        }
        return policy;
    }
}
