package io.skiffmq.server.amqp10;

import io.skiffmq.codec.amqp10.AmqpError;
import io.skiffmq.core.BrokerException;
import io.skiffmq.core.VirtualHost;
import io.skiffmq.core.queue.Queue;
import io.skiffmq.core.queue.QueueDeclaration;
import io.skiffmq.core.routing.Binding;
import io.skiffmq.core.routing.Destination;
import io.skiffmq.server.authz.Access;
import io.skiffmq.server.authz.Permission;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import org.apache.qpid.proton.amqp.Symbol;
import org.apache.qpid.proton.amqp.messaging.Source;
import org.apache.qpid.proton.amqp.messaging.TerminusDurability;
import org.apache.qpid.proton.amqp.messaging.TerminusExpiryPolicy;
import org.apache.qpid.proton.amqp.transport.Attach;

/**
 * JMS topic subscriptions over AMQP 1.0, as Qpid JMS asks for them: a consumer link whose source has the
 * {@code topic} capability consumes from a queue bound to {@code amq.topic} for the source address.
 * <ul>
 * <li>non-durable, not shared: a queue of the link's own, deleted with it;
 * <li>durable (shared or not): a durable queue named by {@link SubscriptionName}, kept until unsubscribed;
 * <li>shared non-durable: an auto-delete queue named by {@link SubscriptionName}, deleted when its last consumer
 * leaves (detach, or its connection closing).
 * </ul>
 * Every link of one subscription consumes from its one queue, so they share its messages.
 *
 * <p>A subscription is its topic and its filters (selector and no-local, kept as its queue's arguments by
 * {@link LinkFilters#subscriptionArguments}, so that they survive a restart and its publishers apply them). Attaching
 * to an existing subscription with another topic or filters replaces it (its messages are dropped) when it has no
 * consumer, and is refused with {@code amqp:resource-locked} when it has, as JMS 2.0 (6.11.1) says for durable
 * subscriptions.
 *
 * <p>Qpid JMS unsubscribes by attaching with the subscription's first link name and no source, then detaching with
 * closed=true: the attach is refused with {@code amqp:resource-locked} while the subscription has consumers, and
 * the queue is deleted on the detach. A consumer's detach with closed=true deletes a durable subscription only when
 * it was its last consumer.
 *
 * <p>Rules only: stateless, called on the connection's event loop by {@link OutgoingLink}; what it waits for
 * (declarations, consumer counts) completes on other threads.
 */
final class TopicSubscriptions {
    private static final String TOPIC_EXCHANGE = "amq.topic";

    private TopicSubscriptions() {
    }

    /**
     * The queue a topic-source link consumes from.
     *
     * @param source the link's source, as answered
     * @param queue completes once the queue exists and is bound
     * @param deleteOnClose the queue's name when it lives as long as the link, or null
     * @param durable the queue's name when it is a durable subscription's, deleted only by an unsubscribe; or null
     */
    record Subscription(Source source, CompletableFuture<Queue> queue, String deleteOnClose, String durable) {
    }

    static boolean isTopic(Source source) {
        return IncomingLink.hasCapability(source.getCapabilities(), "topic");
    }

    /**
     * Qpid JMS's unsubscribe: an attach by subscription name with no source, to the durable subscription as it is.
     * Refused with {@code amqp:not-found} when there is none, and with {@code amqp:resource-locked} (through the
     * returned queue future) while it has consumers: JMS forbids deleting a subscription in use.
     */
    static Subscription unsubscribing(AmqpSession session, Attach attach) {
        long handle = attach.getHandle().longValue();
        VirtualHost vhost = session.vhost();
        SubscriptionName name = SubscriptionName.unsubscribing(session.containerId(), attach.getName(),
            attach.getDesiredCapabilities());
        Queue existing = vhost.queue(name.queue());
        List<Binding> bindings = existing == null ? List.of() : bindings(vhost, existing.name());
        if (bindings.isEmpty()) {
            throw AmqpException.linkError(handle, AmqpError.NOT_FOUND, "no durable subscription '%s'", name.name());
        }
        Binding binding = bindings.get(0);
        requirePermits(session, existing.name(), binding.key());
        try {
            vhost.checkAccess(existing, session.owner());
        } catch (BrokerException e) {
            throw AmqpException.linkError(handle, e);
        }
        CompletableFuture<Queue> unused = consumersAfterPendingWork(existing).thenApply(consumers -> {
            if (consumers > 0) {
                throw new CompletionException(inUse(name, consumers));
            }
            return existing;
        });
        return new Subscription(durableSource(binding.key(), name), unused, null, existing.name());
    }

    /**
     * The subscription for a link whose source has the {@code topic} capability.
     *
     * @param filters the link's filters: their queue arguments are compared with an existing subscription's
     */
    static Subscription subscribe(AmqpSession session, long handle, Attach attach, Source source,
            LinkFilters filters) {
        Map<String, Object> arguments = filters.subscriptionArguments();
        String topic = source.getAddress();
        if (topic == null) {
            throw AmqpException.linkError(handle, AmqpError.INVALID_FIELD, "a topic source needs an address");
        }
        boolean durable = source.getDurable() != null && source.getDurable() != TerminusDurability.NONE
            && source.getExpiryPolicy() == TerminusExpiryPolicy.NEVER;
        if (!durable && !IncomingLink.hasCapability(source.getCapabilities(), SubscriptionName.SHARED)) {
            String own = QueueDeclaration.generateName();
            requirePermits(session, own, topic);
            QueueDeclaration exclusive = new QueueDeclaration(own, false, true, false, arguments);
            return new Subscription(source, declareAndBind(session, exclusive, topic), own, null);
        }
        SubscriptionName name = SubscriptionName.of(session.containerId(), attach.getName(), source.getCapabilities(),
            durable);
        requirePermits(session, name.queue(), topic);
        CompletableFuture<Queue> queue = open(session, name, topic, arguments);
        return new Subscription(source, queue, null, durable ? name.queue() : null);
    }

    /**
     * A consumer of the durable subscription {@code queue} detached with closed=true (after leaving the queue, from
     * this same thread): the subscription goes unless another consumer still uses it.
     */
    static void closed(VirtualHost vhost, Queue queue) {
        consumersAfterPendingWork(queue).thenAccept(consumers -> {
            if (consumers == 0) {
                vhost.deleteQueue(queue); // its deletion is saved later: nobody waits
            }
        });
    }

    /**
     * The queue's consumers once the work already handed to it is done: a consumer that left before the caller
     * heard of it (its detach answered on another connection) is not counted. {@link Queue#counts} alone runs
     * inline when the caller is on the queue's thread, ahead of tasks other connections queued there first.
     */
    private static CompletableFuture<Integer> consumersAfterPendingWork(Queue queue) {
        CompletableFuture<Integer> consumers = new CompletableFuture<>();
        queue.executor().execute(() -> queue.counts().whenComplete((counts, failure) -> {
            if (failure != null) {
                consumers.completeExceptionally(failure);
            } else {
                consumers.complete(counts.consumers());
            }
        }));
        return consumers;
    }

    /**
     * The subscription's queue, declared and bound; an existing one with another topic or filter replaced. A
     * non-durable one may be going with its last consumer, and a changed one is replaced only when unused: both are
     * decided once the work already handed to the queue is done.
     */
    private static CompletableFuture<Queue> open(AmqpSession session, SubscriptionName name, String topic,
            Map<String, Object> arguments) {
        QueueDeclaration declaration = name.durable() ? QueueDeclaration.of(name.queue(), true, arguments)
            : new QueueDeclaration(name.queue(), false, false, true, arguments);
        VirtualHost vhost = session.vhost();
        Queue existing = vhost.queue(name.queue());
        boolean same = existing != null && sameSubscription(vhost, existing, topic, arguments);
        if (existing == null || (same && name.durable())) {
            return declareAndBind(session, declaration, topic);
        }
        return consumersAfterPendingWork(existing).thenCompose(consumers -> {
            if (vhost.queue(name.queue()) != existing) {
                return open(session, name, topic, arguments); // deleted meanwhile (auto-delete)
            }
            if (same) {
                return declareAndBind(session, declaration, topic);
            }
            if (consumers > 0) {
                throw new CompletionException(new BrokerException(BrokerException.Kind.RESOURCE_LOCKED,
                    "subscription '" + name.name() + "' has " + consumers
                        + " consumer(s) on another topic or selector: it cannot be changed while in use"));
            }
            CompletableFuture<Integer> deleted = vhost.deleteQueue(existing);
            return (deleted == null ? CompletableFuture.completedFuture(0) : deleted)
                .thenCompose(dropped -> declareAndBind(session, declaration, topic));
        });
    }

    /** The queue is bound to {@code amq.topic} once, for that topic, and has those filters' arguments. */
    private static boolean sameSubscription(VirtualHost vhost, Queue queue, String topic,
            Map<String, Object> arguments) {
        return bindings(vhost, queue.name()).equals(List.of(binding(queue.name(), topic)))
            && queue.declaration().arguments().equals(arguments);
    }

    /** Declares the queue (or finds it) and binds it to {@code amq.topic} for {@code topic}. */
    private static CompletableFuture<Queue> declareAndBind(AmqpSession session, QueueDeclaration declaration,
            String topic) {
        VirtualHost vhost = session.vhost();
        Binding binding = binding(declaration.name(), topic);
        return vhost.declareQueueAsync(declaration, session.owner())
            .thenCompose(queue -> vhost.bindAsync(binding).thenApply(bound -> queue));
    }

    private static Binding binding(String queue, String topic) {
        return new Binding(TOPIC_EXCHANGE, Destination.queue(queue), topic, Map.of());
    }

    /** What a subscriber needs: configure, write and read the queue; read {@code amq.topic} for the topic. */
    private static void requirePermits(AmqpSession session, String queue, String topic) {
        Access access = session.connection().access();
        LinkPermits.require(access, Permission.CONFIGURE, Access.Resource.QUEUE, queue);
        LinkPermits.require(access, Permission.WRITE, Access.Resource.QUEUE, queue);
        LinkPermits.require(access, Permission.READ, Access.Resource.EXCHANGE, TOPIC_EXCHANGE);
        LinkPermits.requireTopic(access, session.vhost(), Permission.READ, TOPIC_EXCHANGE, topic);
        LinkPermits.require(access, Permission.READ, Access.Resource.QUEUE, queue);
    }

    private static List<Binding> bindings(VirtualHost vhost, String queueName) {
        List<Binding> found = new ArrayList<>();
        for (Binding b : vhost.bindings().bindingsTo(Destination.queue(queueName))) {
            if (b.source().equals(TOPIC_EXCHANGE)) {
                found.add(b);
            }
        }
        return found;
    }

    private static BrokerException inUse(SubscriptionName name, int consumers) {
        return new BrokerException(BrokerException.Kind.RESOURCE_LOCKED, "subscription '" + name.name() + "' has "
            + consumers + " active consumer(s): close them before unsubscribing");
    }

    /** The source of an existing durable subscription, answering an attach that named none. */
    private static Source durableSource(String topic, SubscriptionName name) {
        Source source = new Source();
        source.setAddress(topic);
        source.setCapabilities(name.shared() && name.global()
            ? new Symbol[] {Symbol.valueOf("topic"), Symbol.valueOf(SubscriptionName.SHARED),
                Symbol.valueOf(SubscriptionName.GLOBAL)}
            : new Symbol[] {Symbol.valueOf("topic")});
        source.setDurable(TerminusDurability.UNSETTLED_STATE);
        source.setExpiryPolicy(TerminusExpiryPolicy.NEVER);
        return source;
    }
}
