package io.skiffmq.server.amqp10;

import io.skiffmq.core.VirtualHost;
import io.skiffmq.core.queue.Queue;
import io.skiffmq.core.queue.QueueDeclaration;
import io.skiffmq.core.routing.Binding;
import io.skiffmq.core.routing.Destination;
import io.skiffmq.server.authz.Access;
import io.skiffmq.server.authz.Permission;
import io.skiffmq.codec.amqp10.AmqpError;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.apache.qpid.proton.amqp.Symbol;
import org.apache.qpid.proton.amqp.messaging.Source;
import org.apache.qpid.proton.amqp.messaging.TerminusDurability;
import org.apache.qpid.proton.amqp.messaging.TerminusExpiryPolicy;
import org.apache.qpid.proton.amqp.transport.Attach;

/**
 * JMS topic subscriptions over AMQP 1.0, as Qpid JMS asks for them: a consumer link whose source has the
 * {@code topic} capability gets a queue bound to {@code amq.topic} for the source address. A durable subscription
 * is a durable queue named from the container-id and the link name; a non-durable one is a queue of the link's
 * own, deleted with it. Qpid JMS unsubscribes by attaching with the subscription's link name and no source, then
 * detaching with closed=true.
 *
 * <p>Rules only: stateless, called on the connection's event loop by {@link OutgoingLink}.
 */
final class TopicSubscriptions {
    private TopicSubscriptions() {
    }

    /**
     * The queue a topic-source link consumes from.
     *
     * @param queue completes once the queue exists and is bound
     * @param deleteOnClose the queue's name when it lives as long as the link, or null
     * @param durable the queue's name when it is a durable subscription's, deleted only by an unsubscribe; or null
     */
    record Subscription(CompletableFuture<Queue> queue, String deleteOnClose, String durable) {
    }

    static boolean isTopic(Source source) {
        return IncomingLink.hasCapability(source.getCapabilities(), "topic");
    }

    /**
     * Qpid JMS's unsubscribe attaches by subscription name with no source: the source of that durable
     * subscription, to attach to it as it was.
     */
    static Source existingSource(AmqpSession session, Attach attach) {
        long handle = attach.getHandle().longValue();
        VirtualHost vhost = session.vhost();
        String subscription = durableQueue(session, attach.getName());
        Queue existing = vhost.queue(subscription);
        String topic = existing == null ? null : subscribedTopic(vhost, subscription);
        if (topic == null) {
            throw AmqpException.linkError(handle, AmqpError.NOT_FOUND, "no durable subscription '%s'",
                attach.getName());
        }
        return durableTopicSource(topic);
    }

    /** The subscription for a link whose source has the {@code topic} capability. */
    static Subscription subscribe(AmqpSession session, long handle, Attach attach, Source source) {
        boolean durable = source.getDurable() != null && source.getDurable() != TerminusDurability.NONE
            && source.getExpiryPolicy() == TerminusExpiryPolicy.NEVER;
        String name = durable ? durableQueue(session, attach.getName()) : QueueDeclaration.generateName();
        CompletableFuture<Queue> queue = declareAndBind(session, handle, name, source.getAddress(), durable);
        return durable ? new Subscription(queue, null, name) : new Subscription(queue, name, null);
    }

    /** The queue of a durable subscription: one per (container-id, subscription name), as JMS defines them. */
    private static String durableQueue(AmqpSession session, String linkName) {
        return "jms-subscription:" + session.containerId() + ":" + linkName;
    }

    /**
     * Declares {@code name} (if missing) and binds it to {@code amq.topic} for {@code topic}; the queue of a durable
     * subscription is durable, that of any other subscription this connection's, in memory.
     */
    private static CompletableFuture<Queue> declareAndBind(AmqpSession session, long handle, String name,
            String topic, boolean durable) {
        if (topic == null) {
            throw AmqpException.linkError(handle, AmqpError.INVALID_FIELD, "a topic source needs an address");
        }
        VirtualHost vhost = session.vhost();
        Access access = session.connection().access();
        LinkPermits.require(access, handle, Permission.CONFIGURE, Access.Resource.QUEUE, name);
        LinkPermits.require(access, handle, Permission.WRITE, Access.Resource.QUEUE, name);
        LinkPermits.require(access, handle, Permission.READ, Access.Resource.EXCHANGE, "amq.topic");
        LinkPermits.requireTopic(access, vhost, handle, Permission.READ, "amq.topic", topic);
        LinkPermits.require(access, handle, Permission.READ, Access.Resource.QUEUE, name);
        QueueDeclaration declaration = durable ? QueueDeclaration.of(name, true, Map.of())
            : new QueueDeclaration(name, false, true, false, Map.of());
        Binding binding = new Binding("amq.topic", Destination.queue(name), topic, Map.of());
        return vhost.declareQueueAsync(declaration, session.owner())
            .thenCompose(queue -> vhost.bindAsync(binding).thenApply(bound -> queue));
    }

    private static String subscribedTopic(VirtualHost vhost, String queueName) {
        for (Binding b : vhost.bindings().bindingsFrom("amq.topic")) {
            if (b.destination().equals(Destination.queue(queueName))) {
                return b.key();
            }
        }
        return null;
    }

    private static Source durableTopicSource(String topic) {
        Source source = new Source();
        source.setAddress(topic);
        source.setCapabilities(Symbol.valueOf("topic"));
        source.setDurable(TerminusDurability.UNSETTLED_STATE);
        source.setExpiryPolicy(TerminusExpiryPolicy.NEVER);
        return source;
    }
}
