package io.skiffmq.server.amqp10;

import io.skiffmq.codec.amqp10.AmqpError;
import io.skiffmq.core.Exchange;
import io.skiffmq.core.VirtualHost;
import io.skiffmq.server.authz.Access;
import io.skiffmq.server.authz.Permission;

/**
 * The permission checks of AMQP 1.0 links, as RabbitMQ 4's session makes them: a publisher link needs write on
 * its target exchange, and a queue target is published to through the default exchange, so it needs write on
 * {@code amq.default}; a consumer link needs read on its source queue; a queue created through an address needs
 * configure on it. A topic exchange is also checked per routing key against the user's topic permissions. A
 * refusal ends the session with {@code amqp:unauthorized-access} and RabbitMQ's text, as RabbitMQ 4's
 * {@code check_resource_access} does (a {@code protocol_error}, not a link error). Stateless; the {@link Access}
 * (the connection's, with its cache) is owned by the connection's event loop.
 */
final class LinkPermits {
    private LinkPermits() {
    }

    static void require(Access access, Permission permission, Access.Resource resource, String name) {
        refuseIf(access.refusal(permission, resource, name));
    }

    /** Ends the session when {@code refusal} is not null. */
    static void refuseIf(String refusal) {
        if (refusal != null) {
            throw refused(refusal);
        }
    }

    /** The session error a refusal is. */
    static AmqpException refused(String refusal) {
        return AmqpException.sessionError(AmqpError.UNAUTHORIZED_ACCESS, "%s", refusal);
    }

    /** Write on where a publisher link's target (or a message's {@code to}) sends messages. */
    static String publishRefusal(Access access, Address address) {
        return access.refusal(Permission.WRITE, Access.Resource.EXCHANGE, address.isQueue() ? ""
            : address.exchange());
    }

    /** The topic permission for a message's routing key, when it goes to a topic exchange; null when allowed. */
    static String topicRefusal(Access access, VirtualHost vhost, Permission permission, String exchange,
            String routingKey) {
        if (exchange == null || exchange.isEmpty() || !access.hasTopicPermissions()) {
            return null;
        }
        Exchange found = vhost.exchange(exchange);
        if (found == null || found.type() != Exchange.Type.TOPIC) {
            return null;
        }
        return access.topicRefusal(permission, exchange, routingKey == null ? "" : routingKey);
    }

    static void requireTopic(Access access, VirtualHost vhost, Permission permission, String exchange,
            String routingKey) {
        refuseIf(topicRefusal(access, vhost, permission, exchange, routingKey));
    }
}
