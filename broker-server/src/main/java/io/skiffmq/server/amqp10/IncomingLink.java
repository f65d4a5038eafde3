package io.skiffmq.server.amqp10;

import io.skiffmq.server.authz.Access;
import io.skiffmq.server.authz.Permission;
import io.skiffmq.server.config.BrokerConfig;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.CompositeByteBuf;
import io.skiffmq.codec.amqp10.AmqpDecodeException;
import io.skiffmq.codec.amqp10.AmqpError;
import io.skiffmq.codec.amqp10.FlowPerformative;
import io.skiffmq.codec.amqp10.MessageSections;
import io.skiffmq.codec.amqp10.TransferPerformative;
import io.skiffmq.core.BrokerException;
import io.skiffmq.core.VirtualHost;
import io.skiffmq.core.message.Amqp10Message;
import io.skiffmq.core.message.Message;
import io.skiffmq.core.publish.Publisher;
import io.skiffmq.core.queue.QueueDeclaration;
import io.skiffmq.core.routing.Destination;
import io.skiffmq.server.peer.NodeForm;
import io.skiffmq.server.peer.PeerLinks;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.apache.qpid.proton.amqp.Binary;
import org.apache.qpid.proton.amqp.Symbol;
import org.apache.qpid.proton.amqp.UnsignedLong;
import org.apache.qpid.proton.amqp.messaging.Rejected;
import org.apache.qpid.proton.amqp.messaging.Released;
import org.apache.qpid.proton.amqp.messaging.Target;
import org.apache.qpid.proton.amqp.transport.Attach;
import org.apache.qpid.proton.amqp.transport.ErrorCondition;
import org.apache.qpid.proton.amqp.transport.SenderSettleMode;

/**
 * A publisher's link: we are the receiver. Messages go to the virtual host through a core {@link Publisher}, which
 * routes them and counts confirms across queues; this link only translates: an unsettled delivery is accepted once
 * every queue it went to has confirmed it, released when it went nowhere, rejected when it could not be taken.
 *
 * <p>Credit is granted in batches of {@code publisher-credit}, and topped up only while this link's unconfirmed
 * deliveries are under {@code max-unconfirmed}: a slow queue slows the links that publish to it, no others. A
 * queue created on attach is saved first when durable: credit comes once it is ready. While a resource alarm is up
 * no credit is granted (the session's window is 0 meanwhile); it comes again when the alarms clear.
 *
 * <p>A transfer in a transaction ({@code transactional-state}) is held by the session's {@link SessionTransactions}
 * and routed at the commit, not here.
 *
 * <p>As RabbitMQ 4 does: deleting the queue a link targets detaches it with {@code amqp:resource-deleted}; an
 * exchange target's deletion is found by the next transfer, which is released, and the link detached with
 * {@code amqp:not-found}. On the anonymous relay a {@code to} that goes nowhere is a routing error
 * ({@link RoutingErrors}). A transfer's {@code settled} must agree with the link's {@code snd-settle-mode} [2.7.5].
 *
 * <p>Owned by the connection's event loop; confirms come back from queues through the publisher's handoff.
 */
final class IncomingLink implements Link, Publisher.Confirms {
    private final AmqpSession session;
    private final long handle;
    /** Null for the anonymous relay: each message's {@code to} says where it goes. */
    private final Address target;
    private final String dynamicQueue;
    private final int maxUnconfirmed;
    private final boolean durableIfNoHeader;
    /** Another node's link to one of this node's queues ({@link #routeFromNode}). */
    private final boolean fromNode;
    /** The message-format of the delivery being received. */
    private long deliveryFormat;
    private final long maxMessageSize;
    private final Publisher publisher;
    /** The attach's {@code snd-settle-mode}: what every delivery's {@code settled} must agree with. */
    private final SenderSettleMode sndSettleMode;
    private final RoutingErrors routingErrors;
    /** Cancels the watch on the target queue's deletion; null when nothing is watched. */
    private Runnable unwatch;

    private final ReceiverCredit credit;
    /** False until the target queue exists (a durable one created on attach is being saved). */
    private boolean ready;
    private boolean closed;
    /** A queue holds its publishers back: no credit until it lets go ({@link #holdEnded}). */
    private boolean held;
    private final Runnable resumeFromHold;

    // the delivery being received, when it spans several transfer frames
    private boolean inDelivery;
    private long deliveryId;
    /**
     * A node's numbering of the delivery for a replicated queue ({@code PeerConnection.ENQUEUER_TAG}): its enqueuer
     * id, its number (-1 for none) and whether it is a resend.
     */
    private long deliveryEnqueuer;
    private long deliveryNumber = -1;
    private boolean deliveryResent;
    private boolean deliverySettled;
    /** The transaction the delivery is published in ({@code transactional-state}); null outside one. */
    private org.apache.qpid.proton.amqp.Binary deliveryTxn;
    private ByteBuf assembled;

    private IncomingLink(AmqpSession session, long handle, Address target, String dynamicQueue, long deliveryCount,
            SenderSettleMode sndSettleMode) {
        this.session = session;
        this.handle = handle;
        this.target = target;
        this.dynamicQueue = dynamicQueue;
        this.sndSettleMode = sndSettleMode == null ? SenderSettleMode.MIXED : sndSettleMode;
        this.routingErrors = new RoutingErrors(session, handle);
        BrokerConfig config = session.config();
        this.credit = new ReceiverCredit(session, handle, deliveryCount, config.publisherCredit());
        this.maxUnconfirmed = config.maxUnconfirmed();
        this.durableIfNoHeader = config.durableIfNoHeader();
        this.fromNode = session.connection().fromNode() && target != null && target.isQueue();
        this.maxMessageSize = config.maxMessageSize();
        this.publisher = new Publisher(session.vhost(), session.executor(), this, session.connection().counters())
            .from(session.owner());
        this.resumeFromHold = () -> session.executor().execute(this::holdEnded);
    }

    static IncomingLink attach(AmqpSession session, Attach attach) {
        long handle = attach.getHandle().longValue();
        if (!(attach.getTarget() instanceof Target target)) {
            throw AmqpException.linkError(handle, AmqpError.NOT_IMPLEMENTED,
                "target %s is not supported", attach.getTarget());
        }
        VirtualHost vhost = session.vhost();
        Access access = session.connection().access();
        Address address = null;
        String dynamic = null;
        CompletableFuture<?> ready = CompletableFuture.completedFuture(null);
        if (Boolean.TRUE.equals(target.getDynamic())) {
            // [3.5.4] a dynamic node: a server-named queue of this connection's, gone with the link
            dynamic = QueueDeclaration.generateName();
            LinkPermits.require(access, Permission.CONFIGURE, Access.Resource.QUEUE, dynamic);
            LinkPermits.require(access, Permission.WRITE, Access.Resource.EXCHANGE, "");
            vhost.declareQueue(new QueueDeclaration(dynamic, false, true, false, Map.of()), session.owner());
            target.setAddress("/queues/" + dynamic);
            address = new Address(dynamic, null, null, false);
        } else if (target.getAddress() != null) {
            address = hasCapability(target.getCapabilities(), "topic") ? Address.topic(target.getAddress())
                : parse(handle, target.getAddress());
            LinkPermits.refuseIf(LinkPermits.publishRefusal(access, address));
            ready = resolve(session, handle, address);
        }
        // read once: a future that completes between two reads would be refused as pending, then taken as done
        boolean resolved = ready.isDone();
        if (resolved && ready.isCompletedExceptionally()) {
            throw AmqpException.linkError(handle, ready);
        }
        long initialCount = attach.getInitialDeliveryCount() == null ? 0 : attach.getInitialDeliveryCount().longValue();
        IncomingLink link = new IncomingLink(session, handle, address, dynamic, initialCount,
            attach.getSndSettleMode());
        if (address != null && dynamic == null && address.isQueue()) {
            link.watch(address.queue());
        }

        Attach reply = Link.reply(attach, attach.getSndSettleMode());
        reply.setTarget(target);
        reply.setMaxMessageSize(UnsignedLong.valueOf(session.config().maxMessageSize()));
        session.writeFrame(reply);
        if (resolved) {
            link.targetReady(null);
        } else {
            ready.whenComplete((done, failure) -> session.onLoop(() -> link.targetReady(failure)));
        }
        return link;
    }

    private static Address parse(long handle, String text) {
        try {
            return Address.parse(text);
        } catch (IllegalArgumentException e) {
            throw AmqpException.linkError(handle, AmqpError.INVALID_FIELD, "%s", e.getMessage());
        }
    }

    /**
     * Checks a fixed target at attach: the queue or exchange must exist, or be creatable.
     *
     * @return completes when the target exists (a queue created here is durable, and saved first)
     */
    private static CompletableFuture<?> resolve(AmqpSession session, long handle, Address address) {
        VirtualHost vhost = session.vhost();
        if (address.isQueue()) {
            if (vhost.queue(address.queue()) == null && remote(handle, vhost, address.queue()) == null) {
                if (!address.mayCreate() || !session.config().autoCreateQueues()) {
                    throw AmqpException.linkError(handle, AmqpError.NOT_FOUND, "no %s",
                        RoutingErrors.resource("queue", address.queue(), vhost.name()));
                }
                LinkPermits.require(session.connection().access(), Permission.CONFIGURE, Access.Resource.QUEUE,
                    address.queue());
                return vhost.declareQueueAsync(QueueDeclaration.of(address.queue(), true, Map.of()), null);
            }
        } else if (vhost.exchange(address.exchange()) == null) {
            throw AmqpException.linkError(handle, AmqpError.NOT_FOUND, "no %s",
                RoutingErrors.resource("exchange", address.exchange(), vhost.name()));
        } else if (vhost.exchange(address.exchange()).internal()) {
            throw AmqpException.linkError(handle, AmqpError.UNAUTHORIZED_ACCESS, "forbidden to publish to internal %s",
                RoutingErrors.resource("exchange", address.exchange(), vhost.name()));
        }
        return CompletableFuture.completedFuture(null);
    }

    /**
     * The queue of that name homed on another node, reached from here; null when there is none.
     *
     * @throws AmqpException amqp:not-found when its node cannot be reached, as for a queue that is not there
     */
    static io.skiffmq.core.queue.Queue remote(long handle, VirtualHost vhost, String queue) {
        try {
            return PeerLinks.remote(vhost, queue);
        } catch (BrokerException e) {
            throw AmqpException.linkError(handle, AmqpError.NOT_FOUND, "%s", e.getMessage());
        }
    }

    /**
     * Detaches this link when its target queue is deleted. An exchange is not watched: RabbitMQ finds it gone at the
     * next transfer (and a link whose exchange was declared again meanwhile goes on).
     */
    private void watch(String queue) {
        unwatch = session.vhost().whenDeleted(Destination.queue(queue), () -> session.onLoop(() -> {
            if (!closed) {
                session.detachWithError(handle, new ErrorCondition(AmqpError.RESOURCE_DELETED.symbol(),
                    "queue '" + queue + "' was deleted"));
            }
        }));
    }

    /** The target exists (or could not be created): credit flows, or the link goes. */
    private void targetReady(Throwable failure) {
        if (closed) {
            return;
        }
        if (failure != null) {
            session.detachWithError(handle, AmqpException.conditionOf(failure));
            return;
        }
        ready = true;
        grantCredit();
    }

    @Override
    public long handle() {
        return handle;
    }

    @Override
    public boolean isClosed() {
        return closed;
    }

    @Override
    public void onFlow(FlowPerformative flow) {
        if (flow.echo()) {
            credit.echo();
        }
    }

    void onTransfer(TransferPerformative transfer, ByteBuf payload) {
        if (!inDelivery) {
            checkSettled(transfer);
            credit.firstTransfer(transfer);
            inDelivery = true;
            deliveryId = transfer.deliveryId();
            deliverySettled = transfer.settled();
            deliveryFormat = transfer.messageFormat();
            deliveryTxn = SessionTransactions.txnIdOf(transfer);
            if (fromNode) {
                numbered(transfer);
            }
            if (target == null && deliverySettled) {
                routingErrors.keepTag(transfer);
            }
        }
        if (transfer.aborted()) {
            // [2.6.12] an aborted delivery is discarded and needs no settlement
            discardAssembled();
            inDelivery = false;
            return;
        }
        append(payload);
        if (transfer.more()) {
            return;
        }
        inDelivery = false;
        ByteBuf bytes = assembled;
        assembled = null;
        route(bytes);
        if (!held && publisher.heldBack(resumeFromHold)) {
            // the rest of a batch of large messages is more than a queue holding its publishers can take in
            held = true;
            credit.revoke();
            return;
        }
        grantCredit();
    }

    /**
     * [2.7.5] a delivery's {@code settled} agrees with the link's {@code snd-settle-mode}, and asks for no
     * {@code rcv-settle-mode} second (we settle first), as RabbitMQ 4.0.3 and later check. The first transfer decides:
     * a later one may only repeat what it said.
     */
    private void checkSettled(TransferPerformative transfer) {
        boolean settled = transfer.settled();
        if (sndSettleMode == SenderSettleMode.UNSETTLED && settled
                || sndSettleMode == SenderSettleMode.SETTLED && !settled) {
            throw AmqpException.linkError(handle, AmqpError.INVALID_FIELD,
                "sender settle mode is '%s' but transfer settled flag is interpreted as being '%s'",
                sndSettleMode.toString().toLowerCase(java.util.Locale.ROOT), settled);
        }
        if (transfer.rcvSettleMode() == 1 && !settled) {
            throw AmqpException.linkError(handle, AmqpError.NOT_IMPLEMENTED, "rcv-settle-mode second not supported");
        }
    }

    private void append(ByteBuf payload) {
        long size = (assembled == null ? 0 : assembled.readableBytes()) + payload.readableBytes();
        if (size > maxMessageSize) {
            discardAssembled();
            inDelivery = false;
            throw AmqpException.linkError(handle, AmqpError.MESSAGE_SIZE_EXCEEDED,
                "delivery of more than %d bytes (max-message-size)", maxMessageSize);
        }
        if (assembled == null) {
            assembled = payload.retainedSlice();
        } else {
            // join frames without copying: the composite holds the frames' slices
            if (!(assembled instanceof CompositeByteBuf)) {
                CompositeByteBuf composite = payload.alloc().compositeBuffer(Integer.MAX_VALUE);
                composite.addComponent(true, assembled);
                assembled = composite;
            }
            ((CompositeByteBuf) assembled).addComponent(true, payload.retainedSlice());
        }
    }

    private void discardAssembled() {
        if (assembled != null) {
            assembled.release();
            assembled = null;
        }
    }

    /** Reads a node's numbering of the delivery from its tag, when it has one. */
    private void numbered(TransferPerformative transfer) {
        ByteBuf tag = transfer.deliveryTag();
        if (tag != null && tag.readableBytes() == io.skiffmq.server.peer.PeerLinks.ENQUEUER_TAG) {
            deliveryEnqueuer = tag.getLong(tag.readerIndex());
            deliveryNumber = tag.getLong(tag.readerIndex() + 8);
            deliveryResent = tag.getByte(tag.readerIndex() + 16) != 0;
        } else {
            deliveryNumber = -1;
        }
    }

    /**
     * Another node's message for a queue of this node (docs/cluster.md, "Messages between nodes"): routed on the
     * node it was published to, it goes to the target queue alone and keeps the exchange and routing key it had
     * there; a 0-9-1 message comes in the form it is stored in ({@link NodeForm}). Takes
     * over {@code bytes}.
     */
    private void routeFromNode(ByteBuf bytes) {
        Message message;
        try {
            if (deliveryFormat == NodeForm.AMQP_091) {
                message = NodeForm.read(bytes).message();
            } else {
                MessageSections sections = MessageSections.scan(bytes);
                message = Amqp10Message.fromNode(bytes, sections, target.queue());
            }
        } catch (AmqpDecodeException e) {
            bytes.release();
            reject(AmqpError.DECODE_ERROR, e.getMessage());
            return;
        } catch (io.skiffmq.core.message.MalformedMessageException e) {
            reject(AmqpError.DECODE_ERROR, e.getMessage());
            return;
        }
        if (publisher.publishTo(target.queue(), message, deliverySettled ? -1 : deliveryId, deliveryEnqueuer,
                deliveryNumber, deliveryResent) == Publisher.Routed.UNROUTED && !deliverySettled) {
            session.settleIncoming(deliveryId, Released.getInstance()); // the queue went meanwhile
        }
    }

    /** Routes a whole message and arranges its settlement. Takes over {@code bytes}. */
    private void route(ByteBuf bytes) {
        if (fromNode) {
            routeFromNode(bytes);
            return;
        }
        MessageSections sections;
        Address address;
        try {
            sections = MessageSections.scan(bytes);
            address = target != null ? target : addressOf(sections);
        } catch (AmqpDecodeException e) {
            bytes.release();
            reject(AmqpError.DECODE_ERROR, e.getMessage());
            return;
        } catch (IllegalArgumentException e) {
            // only the anonymous relay's 'to' can be wrong here
            bytes.release();
            routingErrors.anonymous(deliveryId, deliverySettled, AmqpError.PRECONDITION_FAILED, e.getMessage());
            return;
        }
        Message message;
        try {
            String exchange = address.isQueue() ? "" : address.exchange();
            String key = address.isQueue() ? address.queue() : address.routingKey() != null ? address.routingKey()
                : java.util.Objects.requireNonNullElse(sections.subject(), "");
            // last: once the message exists it owns the bytes
            String refusal = target != null ? null : LinkPermits.publishRefusal(session.connection().access(),
                address);
            String userId = refusal == null ? userIdRefusal(sections) : null;
            if (userId != null) {
                // rabbit_amqp_session:check_user_id raises a link error, where permissions end the session
                bytes.release();
                throw AmqpException.linkError(handle, AmqpError.UNAUTHORIZED_ACCESS, "%s", userId);
            }
            if (refusal == null) {
                refusal = LinkPermits.topicRefusal(session.connection().access(), session.vhost(),
                    Permission.WRITE, exchange, key);
            }
            if (refusal != null) {
                bytes.release();
                throw LinkPermits.refused(refusal);
            }
            message = Amqp10Message.of(bytes, sections, durableIfNoHeader, exchange, key);
        } catch (AmqpDecodeException | IllegalArgumentException e) {
            bytes.release();
            reject(AmqpError.DECODE_ERROR, e.getMessage());
            return;
        }
        if (session.connection().access().hasTopicPermissions()) {
            // the keys of its x-cc annotation route it too: each needs the topic permission (RabbitMQ checks all)
            String refusal;
            try {
                refusal = ccTopicRefusal(message);
            } catch (BrokerException e) {
                message.release();
                reject(AmqpException.conditionOf(e), e.getMessage());
                return;
            } catch (IllegalArgumentException e) {
                message.release();
                reject(AmqpError.DECODE_ERROR, e.getMessage());
                return;
            }
            if (refusal != null) {
                message.release();
                throw LinkPermits.refused(refusal);
            }
        }
        if (deliveryTxn != null) {
            // held until the discharge; [4.4.1] settled with transactional-state(txn-id, accepted)
            org.apache.qpid.proton.amqp.transport.DeliveryState state =
                session.transactions().publish(deliveryTxn, message, address.topic());
            if (!deliverySettled) {
                session.settleIncoming(deliveryId, state);
            }
            return;
        }
        Publisher.Routed routed;
        try {
            routed = publisher.publish(message, deliverySettled ? -1 : deliveryId);
        } catch (BrokerException e) {
            refused(address, e);
            return;
        } catch (IllegalArgumentException e) {
            // a headers exchange met application-properties that do not decode
            reject(AmqpError.DECODE_ERROR, e.getMessage());
            return;
        }
        if (routed == Publisher.Routed.UNROUTED) {
            session.connection().counters().unroutable(false);
        }
        if (routed == Publisher.Routed.UNROUTED && !deliverySettled) {
            if (address.topic()) {
                // JMS: a message to a topic nobody subscribes to is delivered to no one, successfully
                session.accepted(deliveryId, deliveryId);
            } else {
                session.settleIncoming(deliveryId, Released.getInstance());
            }
        }
    }

    /**
     * RabbitMQ 4's user-id check ({@code rabbit_amqp_session:check_user_id}): a message whose properties name
     * another user than the connection's is refused, unless that user is an impersonator; null when it may go.
     */
    private String userIdRefusal(MessageSections sections) throws AmqpDecodeException {
        Binary claimed = sections.userId();
        return claimed == null ? null : session.connection().access().userIdRefusal(new String(claimed.getArray(),
            claimed.getArrayOffset(), claimed.getLength(), StandardCharsets.UTF_8));
    }

    /** The topic permission refusal for a key the message's {@code x-cc} annotation names, or null. */
    private String ccTopicRefusal(Message message) {
        java.util.List<String> cc = message.headerRoutes();
        for (int i = 0; cc != null && i < cc.size(); i++) {
            String refusal = LinkPermits.topicRefusal(session.connection().access(), session.vhost(),
                Permission.WRITE, message.exchange(), cc.get(i));
            if (refusal != null) {
                return refusal;
            }
        }
        return null;
    }

    /**
     * The publisher refused a message, as RabbitMQ 4 answers the same: a missing exchange is a routing error (the
     * anonymous relay's, or a fixed target's that was deleted), an internal one an error of the link; anything
     * else (a queue refusing it) rejects the delivery.
     */
    private void refused(Address address, BrokerException e) {
        String vhost = session.vhost().name();
        if (e.kind() == BrokerException.Kind.NOT_FOUND && !address.isQueue()) {
            String description = "no " + RoutingErrors.resource("exchange", address.exchange(), vhost);
            if (target == null) {
                routingErrors.anonymous(deliveryId, deliverySettled, AmqpError.NOT_FOUND, description);
            } else {
                routingErrors.targetGone(deliveryId, deliverySettled, AmqpError.NOT_FOUND, description);
            }
        } else if (e.kind() == BrokerException.Kind.ACCESS_REFUSED && !address.isQueue()) {
            session.detachWithError(handle, new ErrorCondition(AmqpError.UNAUTHORIZED_ACCESS.symbol(),
                "forbidden to publish to internal " + RoutingErrors.resource("exchange", address.exchange(), vhost)));
        } else {
            reject(AmqpException.conditionOf(e), e.getMessage());
        }
    }

    /**
     * The address in a message's {@code to}, for the anonymous relay (queues are not created on this path); Qpid
     * JMS marks a topic with the annotation {@code x-opt-jms-dest} 1 (3 for a temporary topic).
     *
     * @throws IllegalArgumentException with RabbitMQ's text, when there is no {@code to} or it is no address
     */
    private static Address addressOf(MessageSections sections) throws AmqpDecodeException {
        String to = sections.to();
        if (to == null) {
            throw new IllegalArgumentException("anonymous terminus requires 'to' address to be set");
        }
        Object jmsDest = sections.messageAnnotation("x-opt-jms-dest");
        if (jmsDest instanceof Number n && (n.intValue() == 1 || n.intValue() == 3)) {
            return Address.topic(to);
        }
        try {
            return Address.parse(to);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("bad 'to' address string: " + to, e);
        }
    }

    static boolean hasCapability(Symbol[] capabilities, String name) {
        if (capabilities != null) {
            for (Symbol c : capabilities) {
                if (c.toString().equals(name)) {
                    return true;
                }
            }
        }
        return false;
    }

    @Override
    public void confirmed(long firstTag, long lastTag) {
        session.accepted(firstTag, lastTag);
    }

    @Override
    public void rejected(long firstTag, long lastTag) {
        for (long id = firstTag; id <= lastTag; id++) {
            Rejected rejected = new Rejected();
            rejected.setError(new ErrorCondition(AmqpError.RESOURCE_LIMIT_EXCEEDED.symbol(),
                "a queue refused the message: its length limit (x-overflow reject-publish), a failed log, or "
                    + "(x-confirm-after-consume) it left the queue unconsumed"));
            session.settleIncoming(id, rejected);
        }
    }

    /**
     * A queue homed on a node that cannot be reached refused it: RabbitMQ 4's {@code rejected} for a classic queue
     * that is down ({@code rabbit_amqp_session:rejected/2}).
     */
    @Override
    public void unavailable(long tag, String queue) {
        Rejected rejected = new Rejected();
        ErrorCondition error = new ErrorCondition(AmqpError.PRECONDITION_FAILED.symbol(), "queue '" + queue
            + "' is unavailable");
        error.setInfo(Map.of(Symbol.valueOf("queue"), queue, Symbol.valueOf("reason"), Symbol.valueOf("unavailable")));
        rejected.setError(error);
        session.settleIncoming(tag, rejected);
    }

    @Override
    public void batchEnd() {
        grantCredit();
        session.flushLater();
    }

    private void reject(AmqpError condition, String description) {
        if (!deliverySettled) {
            Rejected rejected = new Rejected();
            rejected.setError(new ErrorCondition(condition.symbol(), description));
            session.settleIncoming(deliveryId, rejected);
        }
    }

    /** The resource alarms cleared: credit as if a confirm had just come in. */
    void resumeCredit() {
        grantCredit();
    }

    private void holdEnded() {
        held = false;
        grantCredit();
        session.flushLater();
    }

    /**
     * Tops credit back up to a batch when it has run low and this link is not too far ahead of its confirms, no
     * resource alarm is up, and no queue it publishes to holds its publishers back (then the credit it has runs
     * out, and more comes once the queue lets go).
     */
    private void grantCredit() {
        if (ready && !closed && !held && credit.low() && publisher.unconfirmed() < maxUnconfirmed
                && !session.alarmed()) {
            if (publisher.heldBack(resumeFromHold)) {
                held = true;
                return;
            }
            credit.grant();
        }
    }

    @Override
    public void close(boolean detachClosed) {
        if (closed) {
            return;
        }
        closed = true;
        discardAssembled();
        publisher.close();
        if (unwatch != null) {
            unwatch.run();
        }
        if (dynamicQueue != null) {
            session.vhost().deleteQueue(dynamicQueue);
        }
    }
}
