package io.skiffmq.server.authz;

import io.skiffmq.core.definitions.BrokerDefinitions.PermissionDefinition;
import io.skiffmq.core.definitions.BrokerDefinitions.TopicPermissionDefinition;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * One user's compiled permissions in one virtual host: the configure, write and read regular expressions over
 * resource names, and the topic permissions (write and read over routing keys) per exchange. Matching is a search,
 * as RabbitMQ's {@code re:run} is (anchor with {@code ^…$} to match whole names); an empty expression grants
 * nothing. Immutable.
 */
record Grant(Pattern configure, Pattern write, Pattern read, Map<String, TopicGrant> topics) {
    /** Write and read expressions over routing keys, for one exchange. */
    record TopicGrant(Pattern write, Pattern read) {
        boolean allows(Permission permission, String routingKey) {
            Pattern pattern = permission == Permission.WRITE ? write : read;
            return pattern != null && pattern.matcher(routingKey).find();
        }
    }

    static Grant of(PermissionDefinition p, Map<String, TopicGrant> topics) {
        return new Grant(compile(p.configure()), compile(p.write()), compile(p.read()), topics);
    }

    /**
     * A topic permission, with RabbitMQ's variables {@code {username}} and {@code {vhost}} replaced by the
     * (quoted) user and virtual host names.
     */
    static TopicGrant topic(TopicPermissionDefinition p) {
        return new TopicGrant(compile(expand(p.write(), p)), compile(expand(p.read(), p)));
    }

    boolean allows(Permission permission, String name) {
        Pattern pattern = switch (permission) {
            case CONFIGURE -> configure;
            case WRITE -> write;
            case READ -> read;
        };
        return pattern != null && pattern.matcher(name).find();
    }

    private static String expand(String regex, TopicPermissionDefinition p) {
        return regex.replace("{username}", Pattern.quote(p.user())).replace("{vhost}", Pattern.quote(p.vhost()));
    }

    /** Null for the empty expression, which grants nothing. */
    private static Pattern compile(String regex) {
        return regex == null || regex.isEmpty() ? null : Pattern.compile(regex);
    }
}
