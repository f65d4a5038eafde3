package io.skiffmq.server.amqp091;

import io.skiffmq.codec.amqp091.Method;
import io.skiffmq.codec.amqp091.ReplyCode;
import io.skiffmq.core.Exchange;
import io.skiffmq.core.VirtualHost;
import io.skiffmq.server.authz.Access;
import io.skiffmq.server.authz.Permission;

/**
 * The permission checks of 0-9-1 methods, as RabbitMQ's access-control table has them: a refusal is a channel
 * error, 403 ACCESS_REFUSED with RabbitMQ's text. Stateless; the {@link Access} it checks against (the
 * connection's, with its cache) is owned by the connection's event loop.
 */
final class ChannelPermits {
    private ChannelPermits() {
    }

    static void require(Access access, Permission permission, Access.Resource resource, String name, Method cause) {
        String refusal = access.refusal(permission, resource, name);
        if (refusal != null) {
            throw Amqp091Exception.of(ReplyCode.ACCESS_REFUSED, cause, "%s", refusal);
        }
    }

    static void queue(Access access, Permission permission, String name, Method cause) {
        require(access, permission, Access.Resource.QUEUE, name, cause);
    }

    static void exchange(Access access, Permission permission, String name, Method cause) {
        require(access, permission, Access.Resource.EXCHANGE, name, cause);
    }

    /**
     * The topic permission for {@code routingKey} on {@code exchange} when it is a topic exchange (publishing:
     * write; binding a queue: read); nothing to check otherwise, or when the user has no topic permissions.
     */
    static void topic(Access access, VirtualHost vhost, Permission permission, String exchange, String routingKey,
            Method cause) {
        if (!access.hasTopicPermissions()) {
            return;
        }
        Exchange found = vhost.exchange(exchange);
        if (found == null || found.type() != Exchange.Type.TOPIC) {
            return;
        }
        String refusal = access.topicRefusal(permission, exchange, routingKey);
        if (refusal != null) {
            throw Amqp091Exception.of(ReplyCode.ACCESS_REFUSED, cause, "%s", refusal);
        }
    }
}
