package io.skiffmq.server;

import io.skiffmq.codec.amqp10.AmqpError;
import io.skiffmq.codec.amqp10.FlowPerformative;
import io.skiffmq.core.VirtualHost;
import io.skiffmq.core.queue.ConsumerSink;
import io.skiffmq.core.queue.Outcome;
import io.skiffmq.core.queue.Queue;
import io.skiffmq.core.queue.QueueConsumer;
import io.skiffmq.core.queue.QueueDelivery;
import java.util.UUID;
import org.apache.qpid.proton.amqp.UnsignedInteger;
import org.apache.qpid.proton.amqp.messaging.Accepted;
import org.apache.qpid.proton.amqp.messaging.Modified;
import org.apache.qpid.proton.amqp.messaging.Rejected;
import org.apache.qpid.proton.amqp.messaging.Source;
import org.apache.qpid.proton.amqp.transport.Attach;
import org.apache.qpid.proton.amqp.transport.ReceiverSettleMode;
import org.apache.qpid.proton.amqp.transport.Role;
import org.apache.qpid.proton.amqp.transport.SenderSettleMode;

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
    private final String dynamicQueue;
    private QueueConsumer consumer;
    private boolean closed;

    private OutgoingLink(AmqpSession session, long handle, Queue queue, boolean preSettled, Outcome defaultOutcome,
            String dynamicQueue) {
        this.session = session;
        this.handle = handle;
        this.queue = queue;
        this.preSettled = preSettled;
        this.defaultOutcome = defaultOutcome;
        this.dynamicQueue = dynamicQueue;
    }

    static OutgoingLink attach(AmqpSession session, Attach attach) {
        long handle = attach.getHandle().longValue();
        if (!(attach.getSource() instanceof Source source)) {
            throw AmqpException.linkError(handle, AmqpError.NOT_FOUND, "a consumer link needs a source");
        }
        VirtualHost vhost = session.vhost();
        Queue queue;
        String dynamic = null;
        if (Boolean.TRUE.equals(source.getDynamic())) {
            dynamic = "amq.gen-" + UUID.randomUUID();
            queue = vhost.declareQueue(dynamic);
            source.setAddress("/queues/" + dynamic);
        } else {
            queue = resolve(session, handle, source.getAddress());
        }
        boolean preSettled = attach.getSndSettleMode() == SenderSettleMode.SETTLED;
        OutgoingLink link = new OutgoingLink(session, handle, queue, preSettled, defaultOutcome(source), dynamic);

        Attach reply = new Attach();
        reply.setName(attach.getName());
        reply.setHandle(attach.getHandle());
        reply.setRole(Role.SENDER);
        reply.setSndSettleMode(preSettled ? SenderSettleMode.SETTLED : SenderSettleMode.UNSETTLED);
        reply.setRcvSettleMode(ReceiverSettleMode.FIRST);
        reply.setSource(source);
        reply.setTarget(attach.getTarget());
        reply.setInitialDeliveryCount(UnsignedInteger.ZERO);
        session.writeFrame(reply);
        link.consumer = queue.subscribe(link, preSettled);
        return link;
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

    boolean isClosed() {
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
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        queue.unsubscribe(consumer, defaultOutcome);
        if (dynamicQueue != null) {
            session.vhost().deleteQueue(dynamicQueue);
        }
    }
}
