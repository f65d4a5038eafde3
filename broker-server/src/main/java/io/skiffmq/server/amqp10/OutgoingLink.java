package io.skiffmq.server.amqp10;

import io.skiffmq.server.authz.Access;
import io.skiffmq.server.authz.Permission;
import io.skiffmq.server.cluster.ReplicatedQueues;
import io.skiffmq.server.peer.PeerLinks;
import io.skiffmq.codec.amqp10.AmqpError;
import io.skiffmq.codec.amqp10.FlowPerformative;
import io.skiffmq.core.BrokerException;
import io.skiffmq.core.VirtualHost;
import io.skiffmq.core.queue.ConsumerFlow;
import io.skiffmq.core.queue.ConsumerSink;
import io.skiffmq.core.queue.Handoff;
import io.skiffmq.core.queue.Outcome;
import io.skiffmq.core.queue.Queue;
import io.skiffmq.core.queue.QueueConsumer;
import io.skiffmq.core.queue.QueueDeclaration;
import io.skiffmq.core.queue.QueueDelivery;
import io.skiffmq.core.stream.StreamConsumerArguments;
import io.skiffmq.core.stream.StreamQueue;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.apache.qpid.proton.amqp.UnsignedInteger;
import org.apache.qpid.proton.amqp.messaging.Accepted;
import org.apache.qpid.proton.amqp.messaging.Modified;
import org.apache.qpid.proton.amqp.messaging.Rejected;
import org.apache.qpid.proton.amqp.messaging.Source;
import org.apache.qpid.proton.amqp.transport.Attach;
import org.apache.qpid.proton.amqp.transport.ErrorCondition;
import org.apache.qpid.proton.amqp.transport.SenderSettleMode;

/**
 * A consumer's link: we are the sender, for one queue. The queue owns the link's credit; this link forwards the
 * consumer's flow to it and hands its deliveries and credit replies to the session, in order.
 *
 * <p>The queue may still be on its way when the link attaches (a durable queue created on attach is saved first,
 * on the store's thread): the attach is answered at once, the consumer's flow is kept, and the subscription starts
 * when the queue is ready. A queue that cannot be had detaches the link with the reason.
 *
 * <p>When the link ends (detach, end, connection loss), its unsettled deliveries are settled with the source's
 * {@code default-outcome}: released (requeued, delivery count unchanged) when the client named none, as RabbitMQ
 * 4 does; modified(delivery-failed) when it asks for that, as Qpid JMS does. When the session or connection ends,
 * the queue takes them back together with those of the session's other links on it ({@link LinkRelease}), in their
 * original order. When the queue is deleted, the link is detached with {@code amqp:resource-deleted}.
 *
 * <p>Owned by the connection's event loop, except the {@link ConsumerSink} methods, which the queue calls on its
 * thread and which only hand over to the event loop, in batches.
 */
final class OutgoingLink implements Link, ConsumerSink, UnsettledDeliveries.Settler {
    /** Told by the queue, on its thread, that it was deleted. */
    private static final Object QUEUE_DELETED = new Object();
    private static final Object SUBSCRIBED = new Object();

    private final AmqpSession session;
    private final long handle;
    private final boolean preSettled;
    private final Outcome defaultOutcome;
    /** A queue that lives as long as the link (dynamic node, non-durable topic subscription), or null. */
    private final String deleteOnClose;
    /**
     * A durable subscription's queue, deleted only when the peer detaches with closed=true and no other consumer
     * uses it; or null.
     */
    private final String durableSubscription;
    private final Handoff<Object> fromQueue;
    /** The consumer's priority among the queue's consumers ({@value #PRIORITY_PROPERTY}). */
    private final int priority;
    private final LinkFilters filters;
    /** Null until the queue is ready. */
    private Queue queue;
    private QueueConsumer consumer;
    private boolean closed;
    /** The consumer's last flow before the queue was ready, or null. */
    private FlowPerformative earlyFlow;

    private final boolean toNode;
    /** Another node's consumer that asks for the queue exclusively ({@link PeerLinks#EXCLUSIVE_PROPERTY}). */
    private final boolean exclusive;
    /**
     * Another node's consumer's attach, and its answer, until the queue took the subscription (then the answer
     * goes) or refused it (exclusive use: the attach is refused), so that its node tells its client which; null
     * otherwise.
     */
    private Attach deferredAttach;
    private Attach deferredReply;

    private OutgoingLink(AmqpSession session, long handle, boolean preSettled, Outcome defaultOutcome,
            String deleteOnClose, String durableSubscription, int priority, boolean exclusive, LinkFilters filters) {
        this.session = session;
        this.toNode = session.connection().fromNode();
        this.exclusive = toNode && exclusive;
        this.filters = filters;
        this.priority = priority;
        this.handle = handle;
        this.preSettled = preSettled;
        this.defaultOutcome = defaultOutcome;
        this.deleteOnClose = deleteOnClose;
        this.durableSubscription = durableSubscription;
        this.fromQueue = new Handoff<>(session.executor(), this::fromQueue, session::flushLater);
    }

    /** The attach property RabbitMQ 4 reads a consumer's priority from (an int; 0 without it). */
    static final String PRIORITY_PROPERTY = "rabbitmq:priority";

    private static int priority(long handle, Attach attach) {
        Object priority = attach.getProperties() == null ? null
            : attach.getProperties().get(org.apache.qpid.proton.amqp.Symbol.valueOf(PRIORITY_PROPERTY));
        if (priority == null) {
            return 0;
        }
        if (!(priority instanceof Integer || priority instanceof Long || priority instanceof Short
                || priority instanceof Byte || priority instanceof UnsignedInteger)) {
            throw AmqpException.linkError(handle, AmqpError.INVALID_FIELD, "%s must be an int, not %s",
                PRIORITY_PROPERTY, priority);
        }
        long value = ((Number) priority).longValue();
        return (int) Math.max(Integer.MIN_VALUE, Math.min(Integer.MAX_VALUE, value));
    }

    static OutgoingLink attach(AmqpSession session, Attach attach) {
        long handle = attach.getHandle().longValue();
        VirtualHost vhost = session.vhost();
        Source source;
        TopicSubscriptions.Subscription subscription = null;
        LinkFilters filters = LinkFilters.NONE;
        if (attach.getSource() == null) {
            // Qpid JMS unsubscribe: attach by subscription name with no source, then detach closed=true
            subscription = TopicSubscriptions.unsubscribing(session, attach);
            source = subscription.source();
        } else if (attach.getSource() instanceof Source s) {
            source = s;
            filters = LinkFilters.of(handle, s.getFilter(), !Boolean.TRUE.equals(s.getDynamic())
                && IncomingLink.hasCapability(s.getCapabilities(), "topic"));
        } else {
            throw AmqpException.linkError(handle, AmqpError.NOT_FOUND, "a consumer link needs a source");
        }
        // [3.5.3] the filters honoured are echoed; the others are left out, which tells the client so (a stream's
        // own are added once the queue is known to be one)
        source.setFilter(filters.echoed(false));
        CompletableFuture<Queue> queue;
        String deleteOnClose = null;
        String durableSubscription = null;
        if (Boolean.TRUE.equals(source.getDynamic())) {
            // [3.5.3] a dynamic node: a server-named queue of this connection's, gone with the link
            deleteOnClose = QueueDeclaration.generateName();
            LinkPermits.require(session.connection().access(), Permission.CONFIGURE, Access.Resource.QUEUE,
                deleteOnClose);
            queue = vhost.declareQueueAsync(new QueueDeclaration(deleteOnClose, false, true, false, Map.of()),
                session.owner());
            source.setAddress("/queues/" + deleteOnClose);
        } else if (subscription != null || TopicSubscriptions.isTopic(source)) {
            if (subscription == null) {
                subscription = TopicSubscriptions.subscribe(session, handle, attach, source, filters);
            }
            queue = subscription.queue();
            deleteOnClose = subscription.deleteOnClose();
            durableSubscription = subscription.durable();
        } else {
            queue = resolve(session, handle, source.getAddress());
        }
        // read once: a future that completes between two reads would be refused as pending, then taken as done
        boolean done = queue.isDone();
        if (done && queue.isCompletedExceptionally()) {
            throw AmqpException.linkError(handle, queue);
        }
        boolean preSettled = attach.getSndSettleMode() == SenderSettleMode.SETTLED;
        OutgoingLink link = new OutgoingLink(session, handle, preSettled, defaultOutcome(source), deleteOnClose,
            durableSubscription, priority(handle, attach), attach.getProperties() != null
                && Boolean.TRUE.equals(attach.getProperties().get(
                    org.apache.qpid.proton.amqp.Symbol.valueOf(PeerLinks.EXCLUSIVE_PROPERTY))), filters);

        Attach reply = Link.reply(attach, preSettled ? SenderSettleMode.SETTLED : SenderSettleMode.UNSETTLED);
        reply.setSource(source);
        reply.setInitialDeliveryCount(UnsignedInteger.ZERO);
        if (done) {
            link.queueReady(attach, reply, queue.join(), null);
        } else {
            // answered once the queue (and a subscription's binding) exists: what the client publishes after
            // the attach must find it
            queue.whenComplete((q, failure) -> session.onLoop(() -> {
                try {
                    link.queueReady(attach, reply, q, failure);
                } catch (AmqpException e) {
                    // refused by the filters the queue's type reads (thrown from attach when the queue was there)
                    session.writeFrame(AmqpSession.refusal(attach));
                    session.detachWithError(handle, new ErrorCondition(e.condition().symbol(), e.getMessage()));
                }
            }));
        }
        return link;
    }


    private static CompletableFuture<Queue> resolve(AmqpSession session, long handle, String text) {
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
        Access access = session.connection().access();
        LinkPermits.require(access, Permission.READ, Access.Resource.QUEUE, address.queue());
        Queue queue = vhost.queue(address.queue());
        var cluster = session.connection().broker().cluster();
        if (cluster != null && !session.connection().fromNode()
                && (queue == null || queue.type() == io.skiffmq.core.queue.QueueType.QUORUM)) {
            // a replicated quorum queue: the consumer follows its leader (another node's link never does: it goes
            // with the leader's queue, and the consumer on that node moves)
            Queue following = cluster.queues().following(vhost, address.queue(), queue);
            if (following != null) {
                return CompletableFuture.completedFuture(following);
            }
        }
        if (queue == null) {
            queue = IncomingLink.remote(handle, vhost, address.queue());
        }
        if (queue == null) {
            if (!address.mayCreate() || !session.config().autoCreateQueues()) {
                throw AmqpException.linkError(handle, AmqpError.NOT_FOUND, "no queue '%s'", address.queue());
            }
            LinkPermits.require(access, Permission.CONFIGURE, Access.Resource.QUEUE, address.queue());
            return vhost.declareQueueAsync(QueueDeclaration.of(address.queue(), true, Map.of()), session.owner());
        }
        try {
            vhost.checkAccess(queue, session.owner());
        } catch (BrokerException e) {
            throw AmqpException.linkError(handle, e);
        }
        return CompletableFuture.completedFuture(queue);
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

    /**
     * The queue is ready, and the attach is answered: the subscription starts with the consumer's flow so far. Or
     * it could not be had, and the attach is refused.
     *
     * @throws AmqpException a link error for stream filters the stream refuses, before anything is written
     */
    private void queueReady(Attach attach, Attach reply, Queue ready, Throwable failure) {
        if (failure != null) {
            if (!closed) {
                session.writeFrame(AmqpSession.refusal(attach));
                session.detachWithError(handle, AmqpException.conditionOf(failure));
            }
            return;
        }
        if (closed) {
            if (deleteOnClose != null) {
                session.vhost().deleteQueue(deleteOnClose);
            }
            return;
        }
        StreamConsumerArguments streamArguments = null;
        if (ready instanceof StreamQueue stream) {
            streamArguments = filters.streamArguments(handle, stream, session.vhost().name());
            ((Source) reply.getSource()).setFilter(filters.echoed(true));
        }
        if (toNode) {
            deferredAttach = attach;
            deferredReply = reply;
        } else {
            session.writeFrame(reply);
        }
        queue = ready;
        filters.attached(ready, session.owner());
        if (streamArguments != null) {
            // RabbitMQ 4: a stream consumer reads from its offset specification; priorities do not apply
            consumer = ((StreamQueue) ready).subscribe(this, ConsumerFlow.credit(), preSettled, streamArguments,
                filters.consumerSelector());
        } else {
            consumer = ready.subscribe(this, ConsumerFlow.credit(), preSettled, exclusive, priority,
                filters.consumerSelector());
        }
        if (earlyFlow != null) {
            onFlow(earlyFlow);
            earlyFlow = null;
        }
    }

    @Override
    public long handle() {
        return handle;
    }

    /** The queue it consumes from; null until it is ready. */
    String queueName() {
        Queue q = queue;
        return q == null ? null : q.name();
    }

    /** Its consumer is another node of the cluster (docs/cluster.md, "Messages between nodes"). */
    boolean toNode() {
        return toNode;
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
        if (consumer == null) {
            if (earlyFlow == null) {
                earlyFlow = new FlowPerformative();
            }
            earlyFlow.reset();
            earlyFlow.deliveryCount(flow.deliveryCount()).linkCredit(flow.linkCredit()).drain(flow.drain())
                .echo(flow.echo());
            return;
        }
        long credit = flow.linkCredit() < 0 ? 0 : flow.linkCredit();
        queue.flow(consumer, flow.deliveryCount(), credit, flow.drain(), flow.echo());
    }

    /** Settles the deliveries with queue tags {@code firstTag..lastTag} (those of one disposition). */
    @Override
    public void settle(long firstTag, long lastTag, Outcome outcome) {
        if (outcome.kind() == Outcome.Kind.ACCEPTED) {
            session.connection().counters().acknowledged(lastTag - firstTag + 1);
        }
        queue.settle(consumer, firstTag, lastTag, outcome);
    }

    @Override
    public void deliver(QueueDelivery delivery) {
        fromQueue.offer(delivery);
    }

    @Override
    public void creditState(long deliveryCount, long linkCredit, long available, boolean drain) {
        fromQueue.offer(new CreditReply(deliveryCount, linkCredit, available, drain));
    }

    @Override
    public void queueDeleted() {
        fromQueue.offer(QUEUE_DELETED);
    }

    @Override
    public void refused(String reason) {
        fromQueue.offer(new Refusal(reason));
    }

    @Override
    public void subscribed() {
        if (toNode) {
            fromQueue.offer(SUBSCRIBED);
        }
    }

    /** What the queue handed over, on the event loop, in the order the queue said it. */
    private void fromQueue(Object item) {
        if (item instanceof QueueDelivery delivery) {
            session.connection().counters().delivered(false, preSettled, !delivery.firstAcquirer());
            session.send(this, delivery); // written, or released when the link is closed
        } else if (item == SUBSCRIBED && deferredReply != null) {
            if (!closed) {
                session.writeFrame(deferredReply);
            }
            deferredAttach = null;
            deferredReply = null;
        } else if (item instanceof Refusal refusal && !closed) {
            if (deferredAttach != null) {
                session.writeFrame(AmqpSession.refusal(deferredAttach)); // another node's exclusive consumer
                deferredAttach = null;
                deferredReply = null;
            }
            // a 0-9-1 consumer has the queue exclusively, or a replicated queue's group has no majority
            session.detachWithError(handle, new ErrorCondition((ReplicatedQueues.noMajority(refusal.reason)
                ? AmqpError.INTERNAL_ERROR : AmqpError.RESOURCE_LOCKED).symbol(), refusal.reason));
        } else if (item instanceof CreditReply c) {
            session.sendCreditReply(this, c.deliveryCount, c.linkCredit, c.available, c.drain);
        } else if (item == QUEUE_DELETED && !closed) {
            session.detachWithError(handle, new ErrorCondition(AmqpError.RESOURCE_DELETED.symbol(),
                "queue '" + queue.name() + "' was deleted"));
        }
    }

    private record Refusal(String reason) {
    }

    /** The consumer's credit after the queue dispatched, to send after the deliveries before it. */
    private record CreditReply(long deliveryCount, long linkCredit, long available, boolean drain) {
    }

    @Override
    public void close(boolean detachClosed) {
        LinkRelease alone = new LinkRelease();
        leave(alone, detachClosed);
        alone.run();
    }

    @Override
    public void leave(LinkRelease release) {
        leave(release, false);
    }

    private void leave(LinkRelease release, boolean detachClosed) {
        if (closed) {
            return;
        }
        closed = true;
        if (consumer == null) {
            return; // the queue is not ready yet: queueReady cleans up
        }
        release.add(queue, consumer, defaultOutcome);
        release.afterwards(() -> {
            filters.detached(queue, session.owner());
            if (deleteOnClose != null) {
                session.vhost().deleteQueue(deleteOnClose);
            }
            if (durableSubscription != null && detachClosed) {
                TopicSubscriptions.closed(session.vhost(), queue);
            }
        });
    }
}
