package io.skiffmq.server.amqp10;

import io.skiffmq.codec.amqp10.AmqpError;
import io.skiffmq.codec.amqp10.FlowPerformative;
import io.skiffmq.core.VirtualHost;
import io.skiffmq.core.queue.ConsumerSink;
import io.skiffmq.core.queue.Outcome;
import io.skiffmq.core.queue.Queue;
import io.skiffmq.core.queue.QueueConsumer;
import io.skiffmq.core.queue.QueueDelivery;
import io.skiffmq.core.routing.Binding;
import io.skiffmq.core.routing.Destination;
import java.util.Map;
import java.util.UUID;
import org.apache.qpid.proton.amqp.Symbol;
import org.apache.qpid.proton.amqp.UnsignedInteger;
import org.apache.qpid.proton.amqp.messaging.Accepted;
import org.apache.qpid.proton.amqp.messaging.Modified;
import org.apache.qpid.proton.amqp.messaging.Rejected;
import org.apache.qpid.proton.amqp.messaging.Source;
import org.apache.qpid.proton.amqp.transport.Attach;
import org.apache.qpid.proton.amqp.transport.SenderSettleMode;
import org.apache.qpid.proton.amqp.messaging.TerminusDurability;
import org.apache.qpid.proton.amqp.messaging.TerminusExpiryPolicy;

/**
 * A consumer's link: we are the sender, for one queue. The queue owns the link's credit; this link forwards the
 * consumer's flow to it and hands its deliveries and credit replies to the session, in order.
 *
 * <p>When the link ends (detach, end, connection loss), its unsettled deliveries are settled with the source's
 * {@code default-outcome}: released (requeued, delivery count unchanged) when the client named none, as RabbitMQ
 * 4 does; modified(delivery-failed) when it asks for that, as Qpid JMS does.
 *
 * <p>Owned by the connection's event loop, except the {@link ConsumerSink} methods, which the queue calls on its
 * thread and which only hand over to the event loop.
 */
final class OutgoingLink implements Link, ConsumerSink {
    private final AmqpSession session;
    private final long handle;
    private final Queue queue;
    private final boolean preSettled;
    private final Outcome defaultOutcome;
    /** A queue that lives as long as the link (dynamic node, non-durable topic subscription), or null. */
    private final String deleteOnClose;
    /** A durable subscription's queue, deleted only when the peer detaches with closed=true; or null. */
    private final String durableSubscription;
    private QueueConsumer consumer;
    private boolean closed;

    private OutgoingLink(AmqpSession session, long handle, Queue queue, boolean preSettled, Outcome defaultOutcome,
            String deleteOnClose, String durableSubscription) {
        this.session = session;
        this.handle = handle;
        this.queue = queue;
        this.preSettled = preSettled;
        this.defaultOutcome = defaultOutcome;
        this.deleteOnClose = deleteOnClose;
        this.durableSubscription = durableSubscription;
    }

    static OutgoingLink attach(AmqpSession session, Attach attach) {
        long handle = attach.getHandle().longValue();
        VirtualHost vhost = session.vhost();
        String subscription = subscriptionQueue(session, attach.getName());
        Source source;
        if (attach.getSource() == null) {
            // Qpid JMS unsubscribe: attach by subscription name with no source, then detach closed=true
            Queue existing = vhost.queue(subscription);
            String topic = existing == null ? null : subscribedTopic(vhost, subscription);
            if (topic == null) {
                throw AmqpException.linkError(handle, AmqpError.NOT_FOUND, "no durable subscription '%s'",
                    attach.getName());
            }
            source = durableTopicSource(topic);
        } else if (attach.getSource() instanceof Source s) {
            source = s;
        } else {
            throw AmqpException.linkError(handle, AmqpError.NOT_FOUND, "a consumer link needs a source");
        }
        // filters (JMS selectors, no-local) are not implemented: not echoing them tells the client so [3.5.3]
        source.setFilter(null);
        Queue queue;
        String deleteOnClose = null;
        String durableSubscription = null;
        if (Boolean.TRUE.equals(source.getDynamic())) {
            deleteOnClose = "amq.gen-" + UUID.randomUUID();
            queue = vhost.declareQueue(deleteOnClose, false, Map.of());
            source.setAddress("/queues/" + deleteOnClose);
        } else if (IncomingLink.hasCapability(source.getCapabilities(), "topic")) {
            boolean durable = source.getDurable() != null && source.getDurable() != TerminusDurability.NONE
                && source.getExpiryPolicy() == TerminusExpiryPolicy.NEVER;
            String name = durable ? subscription : "amq.gen-" + UUID.randomUUID();
            queue = subscribe(session, handle, name, source.getAddress(), durable);
            if (durable) {
                durableSubscription = name;
            } else {
                deleteOnClose = name;
            }
        } else {
            queue = resolve(session, handle, source.getAddress());
        }
        boolean preSettled = attach.getSndSettleMode() == SenderSettleMode.SETTLED;
        OutgoingLink link = new OutgoingLink(session, handle, queue, preSettled, defaultOutcome(source), deleteOnClose,
            durableSubscription);

        Attach reply = Link.reply(attach, preSettled ? SenderSettleMode.SETTLED : SenderSettleMode.UNSETTLED);
        reply.setSource(source);
        reply.setInitialDeliveryCount(UnsignedInteger.ZERO);
        session.writeFrame(reply);
        link.consumer = queue.subscribe(link, preSettled);
        return link;
    }

    /** The queue of a durable subscription: one per (container-id, subscription name), as JMS defines them. */
    private static String subscriptionQueue(AmqpSession session, String linkName) {
        return "jms-subscription:" + session.containerId() + ":" + linkName;
    }

    /**
     * Declares {@code name} (if missing) and binds it to {@code amq.topic} for {@code topic}; the queue of a durable
     * subscription is durable, that of any other subscription transient.
     */
    private static Queue subscribe(AmqpSession session, long handle, String name, String topic, boolean durable) {
        if (topic == null) {
            throw AmqpException.linkError(handle, AmqpError.INVALID_FIELD, "a topic source needs an address");
        }
        VirtualHost vhost = session.vhost();
        Queue queue = durable ? vhost.declareQueue(name) : vhost.declareQueue(name, false, Map.of());
        vhost.bind(new Binding("amq.topic", Destination.queue(name), topic, Map.of()));
        return queue;
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

    private static Queue resolve(AmqpSession session, long handle, String text) {
        if (text == null) {
            throw AmqpException.linkError(handle, AmqpError.INVALID_FIELD, "a consumer link needs a source address");
        }
        Address address;
        try {
            address = Address.parse(text);
        } catch (IllegalArgumentException e) {
            throw AmqpException.linkError(handle, AmqpError.INVALID_FIELD, "%s", e.getMessage());
        }
        if (!address.isQueue()) {
            throw AmqpException.linkError(handle, AmqpError.NOT_IMPLEMENTED,
                "consuming from exchange address '%s' is not supported: consume from a queue", text);
        }
        VirtualHost vhost = session.vhost();
        Queue queue = vhost.queue(address.queue());
        if (queue == null) {
            if (!address.mayCreate() || !session.config().autoCreateQueues()) {
                throw AmqpException.linkError(handle, AmqpError.NOT_FOUND, "no queue '%s'", address.queue());
            }
            queue = vhost.declareQueue(address.queue());
        }
        return queue;
    }

    /** [3.5.3] default-outcome; when absent, released (RabbitMQ 4's choice). */
    private static Outcome defaultOutcome(Source source) {
        Object outcome = source.getDefaultOutcome();
        if (outcome instanceof Modified m) {
            return Outcome.modified(Boolean.TRUE.equals(m.getDeliveryFailed()),
                Boolean.TRUE.equals(m.getUndeliverableHere()));
        }
        if (outcome instanceof Rejected) {
            return Outcome.REJECTED;
        }
        if (outcome instanceof Accepted) {
            return Outcome.ACCEPTED;
        }
        return Outcome.RELEASED;
    }

    @Override
    public long handle() {
        return handle;
    }

    boolean preSettled() {
        return preSettled;
    }

    @Override
    public boolean isClosed() {
        return closed;
    }

    @Override
    public void onFlow(FlowPerformative flow) {
        long credit = flow.linkCredit() < 0 ? 0 : flow.linkCredit();
        queue.flow(consumer, flow.deliveryCount(), credit, flow.drain(), flow.echo());
    }

    void settle(long sequence, Outcome outcome) {
        queue.settle(consumer, sequence, outcome);
    }

    @Override
    public void deliver(QueueDelivery delivery) {
        session.onLoop(() -> session.send(this, delivery));
    }

    @Override
    public void creditState(long deliveryCount, long linkCredit, long available, boolean drain) {
        session.onLoop(() -> session.sendCreditReply(this, deliveryCount, linkCredit, available, drain));
    }

    @Override
    public void close(boolean detachClosed) {
        if (closed) {
            return;
        }
        closed = true;
        queue.unsubscribe(consumer, defaultOutcome);
        if (deleteOnClose != null) {
            session.vhost().deleteQueue(deleteOnClose);
        }
        if (durableSubscription != null && detachClosed) {
            session.vhost().deleteQueue(durableSubscription);
        }
    }
}
