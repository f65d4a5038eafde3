package io.skiffmq.server.amqp10;

import io.skiffmq.server.BrokerConfig;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.CompositeByteBuf;
import io.skiffmq.codec.amqp10.AmqpDecodeException;
import io.skiffmq.codec.amqp10.AmqpError;
import io.skiffmq.codec.amqp10.FlowPerformative;
import io.skiffmq.codec.amqp10.MessageSections;
import io.skiffmq.codec.amqp10.SerialNumber;
import io.skiffmq.codec.amqp10.TransferPerformative;
import io.skiffmq.core.Exchange;
import io.skiffmq.core.VirtualHost;
import io.skiffmq.core.message.Amqp10Message;
import io.skiffmq.core.message.Message;
import io.skiffmq.core.queue.Queue;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.apache.qpid.proton.amqp.Symbol;
import org.apache.qpid.proton.amqp.UnsignedLong;
import org.apache.qpid.proton.amqp.messaging.Rejected;
import org.apache.qpid.proton.amqp.messaging.Released;
import org.apache.qpid.proton.amqp.messaging.Target;
import org.apache.qpid.proton.amqp.transport.Attach;
import org.apache.qpid.proton.amqp.transport.ErrorCondition;

/**
 * A publisher's link: we are the receiver. Messages are routed to queues; an unsettled delivery is accepted once
 * every queue it went to has confirmed it, released when it went nowhere, rejected when it could not be taken.
 *
 * <p>Credit is granted in batches of {@code publisher-credit}, and topped up only while this link's unconfirmed
 * deliveries are under {@code max-unconfirmed}: a slow queue slows the links that publish to it, no others.
 *
 * <p>Owned by the connection's event loop; confirms come back from queues through {@link AmqpSession#onLoop}.
 */
final class IncomingLink implements Link {
    private final AmqpSession session;
    private final long handle;
    /** Null for the anonymous relay: each message's {@code to} says where it goes. */
    private final Address target;
    private final String dynamicQueue;
    private final int creditBatch;
    private final int maxUnconfirmed;
    private final boolean durableIfNoHeader;
    private final long maxMessageSize;

    private long deliveryCount;
    private long credit;
    private int unconfirmed;
    private final Map<Long, int[]> awaitingConfirms = new HashMap<>();
    private boolean closed;

    // the delivery being received, when it spans several transfer frames
    private boolean inDelivery;
    private long deliveryId;
    private boolean deliverySettled;
    private ByteBuf assembled;

    private IncomingLink(AmqpSession session, long handle, Address target, String dynamicQueue, long deliveryCount) {
        this.session = session;
        this.handle = handle;
        this.target = target;
        this.dynamicQueue = dynamicQueue;
        this.deliveryCount = deliveryCount;
        BrokerConfig config = session.config();
        this.creditBatch = config.publisherCredit();
        this.maxUnconfirmed = config.maxUnconfirmed();
        this.durableIfNoHeader = config.durableIfNoHeader();
        this.maxMessageSize = config.maxMessageSize();
    }

    static IncomingLink attach(AmqpSession session, Attach attach) {
        long handle = attach.getHandle().longValue();
        if (!(attach.getTarget() instanceof Target target)) {
            throw AmqpException.linkError(handle, AmqpError.NOT_IMPLEMENTED,
                "target %s is not supported (transactions are not implemented)", attach.getTarget());
        }
        VirtualHost vhost = session.vhost();
        Address address = null;
        String dynamic = null;
        if (Boolean.TRUE.equals(target.getDynamic())) {
            dynamic = "amq.gen-" + UUID.randomUUID();
            vhost.declareQueue(dynamic, false, java.util.Map.of());
            target.setAddress("/queues/" + dynamic);
            address = new Address(dynamic, null, null, false);
        } else if (target.getAddress() != null) {
            address = hasCapability(target.getCapabilities(), "topic") ? Address.topic(target.getAddress())
                : resolve(session, handle, target.getAddress());
        }
        long initialCount = attach.getInitialDeliveryCount() == null ? 0 : attach.getInitialDeliveryCount().longValue();
        IncomingLink link = new IncomingLink(session, handle, address, dynamic, initialCount);

        Attach reply = Link.reply(attach, attach.getSndSettleMode());
        reply.setTarget(target);
        reply.setMaxMessageSize(UnsignedLong.valueOf(session.config().maxMessageSize()));
        session.writeFrame(reply);
        link.grantCredit();
        return link;
    }

    /** Checks a fixed target at attach: the queue or exchange must exist (or be creatable). */
    private static Address resolve(AmqpSession session, long handle, String text) {
        Address address;
        try {
            address = Address.parse(text);
        } catch (IllegalArgumentException e) {
            throw AmqpException.linkError(handle, AmqpError.INVALID_FIELD, "%s", e.getMessage());
        }
        VirtualHost vhost = session.vhost();
        if (address.isQueue()) {
            if (vhost.queue(address.queue()) == null) {
                if (!address.mayCreate() || !session.config().autoCreateQueues()) {
                    throw AmqpException.linkError(handle, AmqpError.NOT_FOUND, "no queue '%s'", address.queue());
                }
                vhost.declareQueue(address.queue());
            }
        } else if (vhost.exchange(address.exchange()) == null) {
            throw AmqpException.linkError(handle, AmqpError.NOT_FOUND, "no exchange '%s'", address.exchange());
        } else if (vhost.exchange(address.exchange()).internal()) {
            throw AmqpException.linkError(handle, AmqpError.UNAUTHORIZED_ACCESS, "exchange '%s' is internal",
                address.exchange());
        }
        return address;
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
            session.writeLinkFlow(handle, deliveryCount, credit, -1, false);
        }
    }

    void onTransfer(TransferPerformative transfer, ByteBuf payload) {
        if (!inDelivery) {
            if (credit <= 0) {
                throw AmqpException.linkError(handle, AmqpError.TRANSFER_LIMIT_EXCEEDED,
                    "transfer with no link credit (delivery-count %d)", deliveryCount);
            }
            if (transfer.deliveryId() < 0) {
                throw AmqpException.sessionError(AmqpError.INVALID_FIELD, "first transfer of a delivery without delivery-id");
            }
            credit--;
            deliveryCount = SerialNumber.add(deliveryCount, 1);
            inDelivery = true;
            deliveryId = transfer.deliveryId();
            deliverySettled = transfer.settled();
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
        grantCredit();
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

    /** Routes a whole message and arranges its settlement. Takes over {@code bytes}. */
    private void route(ByteBuf bytes) {
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
            bytes.release();
            reject(AmqpError.INVALID_FIELD, e.getMessage());
            return;
        }
        VirtualHost vhost = session.vhost();
        Message message;
        List<Queue> queues;
        Exchange exchange;
        String key;
        try {
            if (address.isQueue()) {
                exchange = vhost.exchange("");
                key = address.queue();
            } else {
                exchange = vhost.exchange(address.exchange());
                key = address.routingKey() != null ? address.routingKey() : sections.subject();
            }
            if (exchange == null || exchange.internal()) {
                bytes.release();
                reject(exchange == null ? AmqpError.NOT_FOUND : AmqpError.UNAUTHORIZED_ACCESS,
                    (exchange == null ? "no exchange '" : "cannot publish to internal exchange '") + address.exchange() + "'");
                return;
            }
            message = Amqp10Message.of(bytes, sections, durableIfNoHeader, exchange.name(), key);
        } catch (AmqpDecodeException | IllegalArgumentException e) {
            bytes.release();
            reject(AmqpError.DECODE_ERROR, e.getMessage());
            return;
        }
        try {
            // the message owns the bytes from here; a headers exchange decodes its application-properties
            queues = vhost.route(exchange, key, message, session.router(), session.routed());
        } catch (IllegalArgumentException e) {
            message.release();
            reject(AmqpError.DECODE_ERROR, e.getMessage());
            return;
        }
        if (queues.isEmpty()) {
            message.release();
            if (!deliverySettled) {
                if (address.topic()) {
                    // JMS: a message to a topic nobody subscribes to is delivered to no one, successfully
                    session.accepted(deliveryId);
                } else {
                    session.settleIncoming(deliveryId, Released.getInstance());
                }
            }
            return;
        }
        Runnable confirmed = null;
        if (!deliverySettled) {
            long id = deliveryId;
            awaitingConfirms.put(id, new int[] {queues.size()});
            unconfirmed++;
            confirmed = () -> session.onLoop(() -> confirmed(id));
        }
        for (Queue queue : queues) {
            queue.publish(message.retain(), confirmed == null ? () -> { } : confirmed);
        }
        message.release();
    }

    /**
     * The address in a message's {@code to}, for the anonymous relay (queues are not created on this path); Qpid
     * JMS marks a topic with the annotation {@code x-opt-jms-dest} 1 (3 for a temporary topic).
     */
    private static Address addressOf(MessageSections sections) throws AmqpDecodeException {
        String to = sections.to();
        if (to == null) {
            throw new IllegalArgumentException("a message on an anonymous link needs a 'to'");
        }
        Object jmsDest = sections.messageAnnotation("x-opt-jms-dest");
        if (jmsDest instanceof Number n && (n.intValue() == 1 || n.intValue() == 3)) {
            return Address.topic(to);
        }
        return Address.parse(to);
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

    private void confirmed(long id) {
        int[] remaining = awaitingConfirms.get(id);
        if (remaining == null || closed) {
            return;
        }
        if (--remaining[0] == 0) {
            awaitingConfirms.remove(id);
            unconfirmed--;
            session.accepted(id);
            grantCredit();
        }
    }

    private void reject(AmqpError condition, String description) {
        if (!deliverySettled) {
            Rejected rejected = new Rejected();
            rejected.setError(new ErrorCondition(condition.symbol(), description));
            session.settleIncoming(deliveryId, rejected);
        }
    }

    /** Tops credit back up to a batch when it has run low and this link is not too far ahead of its confirms. */
    private void grantCredit() {
        if (!closed && credit <= creditBatch / 2 && unconfirmed < maxUnconfirmed) {
            credit = creditBatch;
            session.writeLinkFlow(handle, deliveryCount, credit, -1, false);
        }
    }

    @Override
    public void close(boolean detachClosed) {
        if (closed) {
            return;
        }
        closed = true;
        discardAssembled();
        awaitingConfirms.clear();
        if (dynamicQueue != null) {
            session.vhost().deleteQueue(dynamicQueue);
        }
    }
}
